package postgres

import (
	neturl "net/url"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/internal/metrictest"
	"github.com/orderlab/orderlab/internal/pgtest"
)

// The round trip is the way to the database and back: 20 ms more when the
// link is 10 ms longer each way, back to what it was when it is not, and
// no figure while the database does not answer, then one again.
func TestRoundTripIsTheWayThereAndBack(t *testing.T) {
	u, err := neturl.Parse(pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.New(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	u.Host = proxy.Addr
	_, reg := openSized(t, u.String(), 2)
	const name = "orderlab_db_round_trip_seconds"
	roundTrip := func() (float64, bool) {
		f := metrictest.Gather(t, reg)
		return f.Value(name, nil), f.Has(name, nil)
	}

	near, ok := roundTrip()
	if !ok || near <= 0 || near >= 0.02 {
		t.Fatalf("round trip on loopback = %v s (exported: %v), want more than 0 and under 20 ms", near, ok)
	}
	if err := proxy.Latency(10 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if far, ok := roundTrip(); !ok || far < 0.02 || far >= roundTripTimeout.Seconds() {
		t.Errorf("round trip with 10 ms more each way = %v s (exported: %v), want at least 20 ms", far, ok)
	}
	proxy.Clear()

	proxy.Down()
	if v, ok := roundTrip(); ok {
		t.Errorf("round trip with the database refusing connections = %v s, want none exported", v)
	}
	if err := proxy.Up(); err != nil {
		t.Fatal(err)
	}
	if v, ok := roundTrip(); !ok || v <= 0 || v >= 0.02 {
		t.Errorf("round trip once the database answers again = %v s (exported: %v), want a new connection's, under 20 ms", v, ok)
	}
}
