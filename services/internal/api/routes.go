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
	live, log := g.obs.live, g.log
	g.handle(r, http.MethodPost, "/orders", model.PlaceOrder, placeOrder(live, g.obs.met))
	g.handle(r, http.MethodGet, "/orders/:id", model.GetOrder, getOrder)
	g.handle(r, http.MethodGet, "/work/db", model.HoldConnection, workDB(live))

	o := r.Group("", g.obs.observed)
	o.GET("/work/api", serve(log, workAPI(live)))
	o.GET("/work/cpu", serve(log, workCPU(live)))
	o.GET("/livez", serve(log, livez))
	o.GET("/readyz", serve(log, readyz(db, ready)))
}
