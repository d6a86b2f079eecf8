//go:build labcheck

package e2e

import (
	"net/http/httptest"
	"testing"

	"github.com/orderlab/orderlab/internal/grafanastub"
)

// fakeGrafana records the annotation calls loadtest makes: a POST
// /api/annotations at the start of a run, a PATCH /api/annotations/{id} at
// its end (internal/grafanastub, the lab's Grafana stand-in).
type fakeGrafana struct {
	URL  string
	stub *grafanastub.Stub
}

// annotationCall is one request to the fake Grafana.
type annotationCall = grafanastub.Call

func newFakeGrafana(t *testing.T) *fakeGrafana {
	t.Helper()
	g := &fakeGrafana{stub: grafanastub.New()}
	srv := httptest.NewServer(g.stub)
	t.Cleanup(srv.Close)
	g.URL = "http://admin:e2e@" + srv.Listener.Addr().String()
	return g
}

func (g *fakeGrafana) recorded() []annotationCall { return g.stub.Calls() }
