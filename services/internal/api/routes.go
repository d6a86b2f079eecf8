package api

import (
	"log/slog"

	"github.com/gin-gonic/gin"

	"github.com/orderlab/orderlab/services/internal/model"
)

// addRoutes is the whole API surface of every service. A route that
// reaches the database is admitted by the model first (admitted), with the
// operation it will ask for.
func addRoutes(r *gin.Engine, knobs *Knobs, m model.Model, db Pinger, ready func() bool, log *slog.Logger, met *metrics) {
	r.POST("/orders", admitted(m, model.PlaceOrder, log, placeOrder(knobs, met)))
	r.GET("/orders/:id", admitted(m, model.GetOrder, log, getOrder))

	r.GET("/work/db", admitted(m, model.HoldConnection, log, workDB(knobs)))
	r.GET("/work/api", serve(log, workAPI(knobs)))
	r.GET("/work/cpu", serve(log, workCPU(knobs)))

	r.GET("/livez", serve(log, livez))
	r.GET("/readyz", serve(log, readyz(db, ready)))
}
