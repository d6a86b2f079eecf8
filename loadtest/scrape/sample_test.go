package scrape

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
)

func TestParseReadsRequestsConnectionsHeapAuditAndWaiters(t *testing.T) {
	const text = `# TYPE orderlab_http_request_duration_seconds histogram
orderlab_http_request_duration_seconds_bucket{method="GET",route="/work/db",code="200",le="+Inf"} 40
orderlab_http_request_duration_seconds_sum{method="GET",route="/work/db",code="200"} 1
orderlab_http_request_duration_seconds_count{method="GET",route="/work/db",code="200"} 40
orderlab_http_request_duration_seconds_bucket{method="GET",route="/work/db",code="429",le="+Inf"} 2
orderlab_http_request_duration_seconds_sum{method="GET",route="/work/db",code="429"} 0
orderlab_http_request_duration_seconds_count{method="GET",route="/work/db",code="429"} 2
orderlab_http_request_duration_seconds_bucket{method="GET",route="/readyz",code="200",le="+Inf"} 9
orderlab_http_request_duration_seconds_sum{method="GET",route="/readyz",code="200"} 0
orderlab_http_request_duration_seconds_count{method="GET",route="/readyz",code="200"} 9
# TYPE orderlab_http_requests_in_flight gauge
orderlab_http_requests_in_flight 17
# TYPE orderlab_http_connections gauge
orderlab_http_connections{state="active"} 17
orderlab_http_connections{state="idle"} 3
# TYPE go_memstats_heap_inuse_bytes gauge
go_memstats_heap_inuse_bytes 4.194304e+06
# TYPE orderlab_orders_created_total counter
orderlab_orders_created_total 31
# TYPE orderlab_limiter_waiters gauge
orderlab_limiter_waiters 5
# TYPE orderlab_audit_pending gauge
orderlab_audit_pending 250
# TYPE orderlab_knob_value gauge
orderlab_knob_value{knob="LIMIT_WAIT"} 0.1
orderlab_knob_value{knob="DB_MAX_CONNS"} 20
`
	s, err := parse(strings.NewReader(text), expfmt.NewFormat(expfmt.TypeTextPlain), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	type figures struct{ requests, inFlight, conns, heap, orders, waiters, audit float64 }
	want := figures{42, 17, 20, 4 << 20, 31, 5, 250}
	got := figures{s.Requests, s.InFlight, s.Connections, s.HeapInuse, s.Orders, s.Waiters, s.AuditPending}
	if got != want {
		t.Errorf("parse = %+v, want %+v (probe routes excluded from requests)", got, want)
	}
	if s.Knobs["LIMIT_WAIT"] != 0.1 || s.Knobs["DB_MAX_CONNS"] != 20 || len(s.Knobs) != 2 {
		t.Errorf("knobs = %v, want LIMIT_WAIT 0.1 and DB_MAX_CONNS 20", s.Knobs)
	}
	sum := Series{Samples: []Sample{s, {AuditPending: 3, InFlight: 40, Connections: 19}}}.Summary()
	if sum.PeakAuditPending != 250 || sum.PeakInFlight != 40 || sum.PeakHeapInuse != 4<<20 || sum.PeakConnections != 20 {
		t.Errorf("summary peaks = audit %v, in flight %v, heap %v, connections %v",
			sum.PeakAuditPending, sum.PeakInFlight, sum.PeakHeapInuse, sum.PeakConnections)
	}
}
