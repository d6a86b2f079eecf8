package api

import (
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/orderlab/orderlab/services/internal/model"
)

// addRoutes is the whole API surface of every service.
func addRoutes(r *gin.Engine, cfg Config, m model.Model, db Pinger, ready func() bool, log *slog.Logger, met *metrics) {
	r.POST("/orders", handlePlaceOrder(m, cfg.DBDelay, log, met))
	r.GET("/orders/:id", handleGetOrder(m, log))

	r.GET("/work/db", handleWorkDB(m, cfg.WorkDBDelay, log))
	r.GET("/work/api", handleWorkAPI(cfg.WorkAPIDelay, cfg.APIWaitMode == "syscall"))
	r.GET("/work/cpu", handleWorkCPU(cfg.WorkCPURounds))

	r.GET("/livez", handleLivez())
	r.GET("/readyz", handleReadyz(db, ready))
}
