package ledger

import (
	"context"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/internal/pgtest"
)

// Check finds each way a table can contradict the answers, and nothing
// else: the rows are a real table's, laid out as the services' orders.
func TestCheckHoldsAnswersToTheTable(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `CREATE TABLE orders (id bigint, customer_id text, idempotency_key text);
		INSERT INTO orders VALUES (1, 'ok', 'ok'), (2, 'replayed', 'replayed'), (3, 'unkeyed', NULL),
			(4, 'twice', 'twice'), (5, 'twice', NULL), (6, 'refused-but-stored', NULL), (7, 'wrong-id', 'wrong-id')`); err != nil {
		t.Fatal(err)
	}
	as := []Answer{
		{Customer: "ok", Key: "ok", Status: http.StatusCreated, ID: 1},
		{Customer: "replayed", Key: "replayed", Status: http.StatusOK, ID: 2},
		{Customer: "unkeyed", Status: http.StatusCreated, ID: 3},
		{Customer: "unknown-and-absent", Status: http.StatusServiceUnavailable, Type: "outcome-unknown"},
		{Customer: "refused", Status: http.StatusServiceUnavailable, Type: "database-unavailable"},
		{Customer: "lost", Key: "lost", Status: http.StatusCreated, ID: 9},
		{Customer: "wrong-id", Key: "wrong-id", Status: http.StatusCreated, ID: 8},
		{Customer: "twice", Key: "twice", Status: http.StatusCreated, ID: 4},
		{Customer: "refused-but-stored", Status: http.StatusServiceUnavailable, Type: "database-unavailable"},
	}
	au, err := Check(ctx, conn, as)
	if err != nil {
		t.Fatal(err)
	}
	names := func(as []Answer) []string {
		var s []string
		for _, a := range as {
			s = append(s, a.Customer)
		}
		return s
	}
	if got := names(au.Missing); len(got) != 2 || got[0] != "lost" || got[1] != "wrong-id" {
		t.Errorf("missing = %v, want [lost wrong-id]", got)
	}
	if got := names(au.Duplicates); len(got) != 1 || got[0] != "twice" {
		t.Errorf("duplicates = %v, want [twice]", got)
	}
	if got := names(au.Stored); len(got) != 1 || got[0] != "refused-but-stored" {
		t.Errorf("stored despite the answer = %v, want [refused-but-stored]", got)
	}
	if au.OK() {
		t.Error("OK() with contradictions")
	}
}
