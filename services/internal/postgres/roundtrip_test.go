package postgres

import (
	"context"
	"errors"
	neturl "net/url"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/internal/faultproxy"
	"github.com/orderlab/orderlab/internal/metrictest"
	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/internal/poll"
)

// openBehindProxy opens a store of two connections on a database of its
// own, through a fault proxy.
func openBehindProxy(t *testing.T) (*Store, *prometheus.Registry, *faultproxy.Proxy) {
	u, err := neturl.Parse(pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.New(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close) // after the store's close, registered below
	u.Host = proxy.Addr
	st, reg := openSized(t, u.String(), 2)
	return st, reg, proxy
}

// The round trip is the way to the database and back: 100 ms more when the
// link is 50 ms longer each way, back to what it was when it is not, and
// no figure while the database does not answer, then one again.
func TestRoundTripIsTheWayThereAndBack(t *testing.T) {
	_, reg, proxy := openBehindProxy(t)
	const name = "orderlab_db_round_trip_seconds"
	roundTrip := func() (float64, bool) {
		f := metrictest.Gather(t, reg)
		return f.Value(name, nil), f.Has(name, nil)
	}

	near, ok := roundTrip()
	if !ok || near <= 0 || near >= 0.1 {
		t.Fatalf("round trip on loopback = %v s (exported: %v), want more than 0 and under 100 ms", near, ok)
	}
	if err := proxy.Latency(50 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if far, ok := roundTrip(); !ok || far < 0.1 || far >= roundTripTimeout.Seconds() {
		t.Errorf("round trip with 50 ms more each way = %v s (exported: %v), want at least 100 ms", far, ok)
	}
	proxy.Clear()

	proxy.Down()
	if v, ok := roundTrip(); ok {
		t.Errorf("round trip with the database refusing connections = %v s, want none exported", v)
	}
	if err := proxy.Up(); err != nil {
		t.Fatal(err)
	}
	if v, ok := roundTrip(); !ok || v <= 0 || v >= 0.1 {
		t.Errorf("round trip once the database answers again = %v s (exported: %v), want a new connection's, under 100 ms", v, ok)
	}
}

// Once the store has closed its health connection, a scrape exports no
// round trip and opens no connection to time one.
func TestRoundTripAfterCloseOpensNoConnection(t *testing.T) {
	st, reg := openSized(t, pgtest.New(t), 2)
	if f := metrictest.Gather(t, reg); !f.Has("orderlab_db_round_trip_seconds", nil) {
		t.Fatal("no round trip exported before the close")
	}
	st.health.close()
	if f := metrictest.Gather(t, reg); f.Has("orderlab_db_round_trip_seconds", nil) {
		t.Error("a round trip exported after the health connection closed")
	}
	if st.health.conn != nil {
		t.Error("a scrape after the close opened a connection")
	}
	if err := st.Ping(context.Background()); err == nil {
		t.Error("a readiness check after the close succeeded")
	}
}

// A scrape does not wait behind a readiness check stuck on a database that
// went silent: it gives up within its second and exports no figure.
func TestRoundTripDoesNotWaitBehindAStuckReadinessCheck(t *testing.T) {
	st, reg, proxy := openBehindProxy(t)
	if err := proxy.Blackhole(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pinged := make(chan error, 1)
	go func() { pinged <- st.Ping(ctx) }()
	poll.Until(t, 10*time.Second, "the readiness check to hold the health connection", func() error {
		if len(st.health.use) == 0 {
			return errors.New("not taken")
		}
		return nil
	})

	gathered := make(chan metrictest.Families, 1)
	go func() { gathered <- metrictest.Gather(t, reg) }()
	f := poll.Recv(t, 10*time.Second, "a scrape while the readiness check holds the connection", gathered)
	if v, ok := f.Value("orderlab_db_round_trip_seconds", nil), f.Has("orderlab_db_round_trip_seconds", nil); ok {
		t.Errorf("round trip behind a stuck readiness check = %v s, want none exported", v)
	}
	cancel()
	if err := poll.Recv(t, 10*time.Second, "the readiness check to end once canceled", pinged); err == nil {
		t.Error("a readiness check on a silent database succeeded")
	}
	proxy.Clear()
}
