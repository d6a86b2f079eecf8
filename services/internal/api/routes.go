package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/orderlab/orderlab/services/internal/model"
)

// addRoutes is the whole API surface of every service. A route that
// reaches the database is admitted by the model first (admission.go), and
// its handler gets the admission; the others are observed from the start.
func addRoutes(r *gin.Engine, g *admission, db Pinger, ready func() bool) {
	knobs, log := g.obs.knobs, g.log
	g.handle(r, http.MethodPost, "/orders", model.PlaceOrder, placeOrder(knobs, g.obs.met))
	g.handle(r, http.MethodGet, "/orders/:id", model.GetOrder, getOrder)
	g.handle(r, http.MethodGet, "/work/db", model.HoldConnection, workDB(knobs))

	o := r.Group("", g.obs.observed)
	o.GET("/work/api", serve(log, workAPI(knobs)))
	o.GET("/work/cpu", serve(log, workCPU(knobs)))
	o.GET("/livez", serve(log, livez))
	o.GET("/readyz", serve(log, readyz(db, ready)))
}
