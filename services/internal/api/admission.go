package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// edge is the one place that admits the requests that reach the database
// (POST /orders, GET /orders/:id, GET /work/db), below gin
// (docs/admission.md): a plain http.Handler in front of the engine asks the
// model to admit each one and answers a refusal itself, with the
// pre-rendered 429 and its Retry-After, so that a rejected request costs no
// gin context, no middleware, no span and no exemplar. Under a retry storm
// rejections outnumber orders by tens to one, and what each costs is CPU
// the admitted orders do not get. A refusal is still counted, on the same
// series as every other answer (orderlab_http_request_duration_seconds,
// orderlab_http_requests_in_flight) and on the model's rejection counter;
// it is not traced. An admitted request enters gin carrying its admission
// (admitted hands it to the handler), and the edge gives it back when the
// request is answered, however the handler ends (a panic, a client gone).
type edge struct {
	next http.Handler
	m    model.Model
	met  *metrics
	// rejected are the duration children of a refusal per route of the edge,
	// bound once: no label lookup per 429.
	rejected map[edgeRoute]prometheus.Observer
}

// edgeRoute is a route the edge admits, as gin names it.
type edgeRoute struct{ method, route string }

// edgeRoutes are the routes that reach the database, with the operation
// each asks for (routes.go registers their handlers).
var edgeRoutes = map[edgeRoute]model.Op{
	{http.MethodPost, "/orders"}:    model.PlaceOrder,
	{http.MethodGet, "/orders/:id"}: model.GetOrder,
	{http.MethodGet, "/work/db"}:    model.HoldConnection,
}

// route is the edge route of r, if it has one: its method and path as gin
// would match them (one path segment for :id; anything else is gin's to
// answer).
func route(r *http.Request) (edgeRoute, bool) {
	p := r.URL.Path
	if id, ok := strings.CutPrefix(p, "/orders/"); ok && id != "" && !strings.Contains(id, "/") {
		p = "/orders/:id"
	}
	er := edgeRoute{r.Method, p}
	_, ok := edgeRoutes[er]
	return er, ok
}

func newEdge(next http.Handler, m model.Model, met *metrics) *edge {
	g := &edge{next: next, m: m, met: met, rejected: make(map[edgeRoute]prometheus.Observer)}
	for r := range edgeRoutes {
		g.rejected[r] = met.duration.WithLabelValues(r.method, r.route, "429")
	}
	return g
}

// admission is a request the edge admitted, or the error of an admission
// that is not a plain refusal (a client gone, shutdown), which gin's
// chain answers like any other error.
type admission struct {
	op    model.Op
	a     model.Admitted
	err   error
	start time.Time
}

type admissionKey struct{}

// edgeAdmission is the edge's admission of the request of ctx, or nil.
func edgeAdmission(ctx context.Context) *admission {
	a, _ := ctx.Value(admissionKey{}).(*admission)
	return a
}

func (g *edge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, ok := route(r)
	if !ok {
		g.next.ServeHTTP(w, r)
		return
	}
	op := edgeRoutes[route]
	start := time.Now()
	g.met.inFlight.Inc()
	defer g.met.inFlight.Dec()
	a, err := g.m.Admit(r.Context(), op)
	var rejected *overload.RejectedError
	if errors.As(err, &rejected) {
		writeRejection(w, rejected)
		g.rejected[route].Observe(time.Since(start).Seconds())
		return
	}
	if a != nil {
		defer a.Release()
	}
	ctx := context.WithValue(r.Context(), admissionKey{}, &admission{op: op, a: a, err: err, start: start})
	g.next.ServeHTTP(w, r.WithContext(ctx))
}
