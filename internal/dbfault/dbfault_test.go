package dbfault

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/internal/pgtest"
)

// One set of names: unique, found by Named, and the network's faults (and
// only they) need a proxy.
func TestCatalogNames(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range Catalog {
		if seen[f.Name] || f.What == "" || f.inject == nil {
			t.Errorf("%q: a name twice, or no description or injection", f.Name)
		}
		seen[f.Name] = true
		if g, ok := Named(f.Name); !ok || g.Name != f.Name {
			t.Errorf("Named(%q) = %q, %v", f.Name, g.Name, ok)
		}
		if (f.lift == nil) != (f.Hold == 0) {
			t.Errorf("%s: a hold without a lift, or a lift without a hold", f.Name)
		}
	}
	if Outage(1500*time.Millisecond).Name != "outage-1.5s" || Outage3s.Name != "outage-3s" {
		t.Errorf("outage names: %q, %q", Outage(1500*time.Millisecond).Name, Outage3s.Name)
	}
	if _, ok := Named("meteor"); ok {
		t.Error("Named found a fault that is not in the catalog")
	}
}

// Apply holds the fault for its Hold, counted from when it is on, runs
// during while it holds, and lifts it after.
func TestApplyHoldsThenLifts(t *testing.T) {
	var order []string
	f := Fault{Name: "test", Hold: 50 * time.Millisecond,
		inject: func(context.Context, Target) error { order = append(order, "inject"); return nil },
		lift:   func(context.Context, Target) error { order = append(order, "lift"); return nil }}
	tl, err := Apply(context.Background(), f, Target{}, func() { order = append(order, "during") })
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != 3 || order[0] != "inject" || order[1] != "during" || order[2] != "lift" {
		t.Errorf("order %v, want inject, during, lift", order)
	}
	if tl.Lifted.Sub(tl.On) < f.Hold || tl.On.Before(tl.Asked) {
		t.Errorf("timeline %+v: held %s, want at least %s", tl, tl.Lifted.Sub(tl.On), f.Hold)
	}
	if _, err := Apply(context.Background(), Blackhole, Target{}, nil); err == nil {
		t.Error("a network fault applied without a proxy")
	}
}

// Summarize counts the answers, the recovery from the lifting and whether
// an order after the fault took effect succeeded, and holds the answers to
// the table.
func TestSummarize(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE orders (id bigint, customer_id text, idempotency_key text);
		INSERT INTO orders VALUES (1, 'a', 'a'), (3, 'c', 'c')`); err != nil {
		t.Fatal(err)
	}
	lifted := time.Now()
	as := []ledger.Answer{
		{Customer: "a", Key: "a", Sent: lifted.Add(-time.Second), Status: http.StatusCreated, ID: 1},
		{Customer: "b", Key: "b", Sent: lifted.Add(-time.Millisecond), Status: http.StatusServiceUnavailable, Type: "database-unavailable"},
		{Customer: "x", Key: "x", Sent: lifted.Add(200 * time.Millisecond), Status: http.StatusServiceUnavailable, Type: "outcome-unknown"},
		{Customer: "c", Key: "c", Sent: lifted.Add(300 * time.Millisecond), Status: http.StatusCreated, ID: 3},
	}
	tl := Timeline{On: lifted.Add(-500 * time.Millisecond), Lifted: lifted}
	s, found, err := Summarize(ctx, conn, as, tl)
	if err != nil {
		t.Fatal(err)
	}
	if s.Sent != 4 || s.Failed != 2 || s.Recovery != 200*time.Millisecond || !s.Recovered || !s.OK() || !found.OK() ||
		s.Answers.String() != "201: 2; 503 database-unavailable: 1; 503 outcome-unknown: 1" || s.RecoveryText() != "200ms" {
		t.Errorf("summary %+v (%s, %s)", s, s.Answers, s.RecoveryText())
	}
	as[3].Status, as[3].Type = http.StatusInternalServerError, ""
	s, _, err = Summarize(ctx, conn, as, tl)
	if err != nil {
		t.Fatal(err)
	}
	if s.Recovered || s.OK() || s.Missing != 0 || s.Stored != 0 {
		t.Errorf("with no success after the fault took effect and a 500: %+v, want not recovered, not OK", s)
	}
}

// A proxy outage is cut, held and let through by the caller's proxy, in
// that order, also when during fails.
func TestProxyOutageCutsHoldsAndLetsThrough(t *testing.T) {
	var calls []bool
	f := ProxyOutage(50*time.Millisecond, func(_ context.Context, down bool) error {
		calls = append(calls, down)
		return nil
	})
	tl, err := Apply(context.Background(), f, Target{}, func() {
		if len(calls) != 1 || !calls[0] {
			t.Errorf("during the hold: calls %v, want the cut", calls)
		}
	})
	if err != nil || len(calls) != 2 || calls[1] || tl.Lifted.Sub(tl.On) < 50*time.Millisecond {
		t.Errorf("Apply = %v, calls %v, held %s; want cut, then let through after 50ms", err, calls, tl.Lifted.Sub(tl.On))
	}
	if f.Proxy || f.Name != "proxy-outage-50ms" {
		t.Errorf("%+v: want proxy-outage-50ms, on no faultproxy of the Target", f)
	}
}
