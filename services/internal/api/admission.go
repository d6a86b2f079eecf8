package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// edge admits the requests that reach the database below gin
// (docs/admission.md): a plain http.Handler in front of the engine asks the
// model to admit each one and answers a refusal itself, with the
// pre-rendered 429 and its Retry-After, so that a rejected request costs no
// gin context, no middleware, no span and no exemplar. Under a retry storm
// rejections outnumber orders by tens to one, and what each costs is CPU
// the admitted orders do not get. A refusal is still counted, on the same
// series as every other answer (orderlab_http_request_duration_seconds,
// orderlab_http_requests_in_flight) and on the model's rejection counter;
// it is not traced. An admitted request enters gin carrying its admission
// (admitted takes it from the context), and the edge gives it back when
// the request is answered, however the handler ends (a panic, a client
// gone).
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

// edgeRoutes are the routes whose admission the edge makes, with the
// operation each asks for: the ones a load test storms. GET /orders/:id is
// admitted in gin (admitted), being short and not what the experiments load.
var edgeRoutes = map[edgeRoute]model.Op{
	{http.MethodPost, "/orders"}: model.PlaceOrder,
	{http.MethodGet, "/work/db"}: model.HoldConnection,
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
	route := edgeRoute{r.Method, r.URL.Path}
	op, ok := edgeRoutes[route]
	if !ok {
		g.next.ServeHTTP(w, r)
		return
	}
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
