package api

import (
	"log/slog"

	"github.com/gin-gonic/gin"
)

// addRoutes is the whole API surface of every service.
func addRoutes(r *gin.Engine, cfg Config, b Backend, db Pinger, ready func() bool, log *slog.Logger, m *metrics) {
	r.POST("/orders", handlePlaceOrder(b, cfg.DBDelay, log, m))
	r.GET("/orders/:id", handleGetOrder(b, log))

	r.GET("/work/db", handleWorkDB(b, cfg.WorkDBDelay, log))
	r.GET("/work/api", handleWorkAPI(cfg.WorkAPIDelay, cfg.APIWaitMode == "syscall"))
	r.GET("/work/cpu", handleWorkCPU(cfg.WorkCPURounds))

	r.GET("/livez", handleLivez())
	r.GET("/readyz", handleReadyz(db, ready))
}
