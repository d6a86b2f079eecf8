package postgres

import (
	"context"
	neturl "net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/services/internal/dberr"
)

// A server that refuses a connection for want of room (SQLSTATE 53300,
// here the role's CONNECTION LIMIT) is an unavailable database to the
// request, and counted apart as too many clients: the signal that tells
// it from a database that is down (TestUnreachableIsUnavailable).
func TestTooManyClientsIsCountedApart(t *testing.T) {
	c := pgtest.NewCluster(t) // a role of its own: superusers are exempt from connection limits
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, c.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	for _, q := range []string{"CREATE ROLE app LOGIN", "CREATE DATABASE app OWNER app"} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	u, err := neturl.Parse(c.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.User, u.Path = neturl.User("app"), "/app"
	st := open(t, u.String())

	if _, err := admin.Exec(ctx, "ALTER ROLE app CONNECTION LIMIT 0"); err != nil {
		t.Fatal(err)
	}
	st.pool().Reset() // the next call needs a new connection
	_, err = st.CreateOrder(ctx, req("full", 1, "full-1"), 0, 0)
	if cl, ok := dberr.ClassOf(err); !ok || cl != dberr.Unavailable {
		t.Fatalf("CreateOrder with the role at its connection limit = %v, want Unavailable", err)
	}
	unavailable := testutil.ToFloat64(st.m.errors.WithLabelValues("unavailable"))
	if n := testutil.ToFloat64(st.m.tooManyClients); n < 1 || n != unavailable {
		t.Errorf("orderlab_db_too_many_clients_total = %v, want every unavailable error (%v), at least 1", n, unavailable)
	}
}
