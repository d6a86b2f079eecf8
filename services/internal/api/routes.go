package api

import (
	"log/slog"

	"github.com/gin-gonic/gin"
)

// addRoutes is the whole API surface of every service. A route that
// reaches the database was admitted by the model before gin (the edge,
// admission.go: edgeRoutes names them), and its handler gets the admission
// (admitted).
func addRoutes(r *gin.Engine, knobs *Knobs, db Pinger, ready func() bool, log *slog.Logger, met *metrics) {
	r.POST("/orders", admitted(log, placeOrder(knobs, met)))
	r.GET("/orders/:id", admitted(log, getOrder))

	r.GET("/work/db", admitted(log, workDB(knobs)))
	r.GET("/work/api", serve(log, workAPI(knobs)))
	r.GET("/work/cpu", serve(log, workCPU(knobs)))

	r.GET("/livez", serve(log, livez))
	r.GET("/readyz", serve(log, readyz(db, ready)))
}
