package front

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A Prometheus that cannot be reached is one error, not one per chart: the
// page then says there are no live charts, and why.
func TestAnUnreachablePrometheusIsOneError(t *testing.T) {
	s := &Server{cfg: Config{Prometheus: "http://127.0.0.1:1", HTTP: http.DefaultClient}}
	out, err := s.query(context.Background(), []string{"unbounded"}, time.Now().Add(-time.Minute), time.Now())
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("query against a closed port: %+v, %v; want one error naming Prometheus's address", out, err)
	}
}
