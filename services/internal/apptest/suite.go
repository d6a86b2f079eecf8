package apptest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/orderlab/orderlab/services/internal/app"
	"github.com/orderlab/orderlab/services/internal/httpserver"
	"github.com/orderlab/orderlab/services/internal/order"
)

// APISuite checks the behaviour every service shares, whatever its model
// and its HTTP server: the round trip, every class of bad input,
// idempotency, the experiment endpoints, health, and the metrics families.
// It runs once per server (HTTP_SERVER). env sets the model's knobs so that
// it does not shed this light load (a busy CI machine is slow).
func APISuite(t *testing.T, svc app.Service, env map[string]string) {
	EachServer(t, env, func(t *testing.T, env map[string]string) { apiSuite(t, svc, env) })
}

// EachServer runs test once per HTTP server, as a subtest named after it
// (nethttp, nbio), with env plus HTTP_SERVER.
func EachServer(t *testing.T, env map[string]string, test func(t *testing.T, env map[string]string)) {
	for _, kind := range httpserver.Kinds {
		t.Run(strings.ReplaceAll(string(kind), "/", ""), func(t *testing.T) {
			e := maps.Clone(env)
			if e == nil {
				e = map[string]string{}
			}
			e["HTTP_SERVER"] = string(kind)
			test(t, e)
		})
	}
}

func apiSuite(t *testing.T, svc app.Service, env map[string]string) {
	inst := Start(t, svc, env)

	t.Run("RoundTrip", func(t *testing.T) { roundTrip(t, inst) })
	t.Run("BadInput", func(t *testing.T) { badInput(t, inst) })
	t.Run("AcceptedInput", func(t *testing.T) { acceptedInput(t, inst) })
	t.Run("Idempotency", func(t *testing.T) { idempotency(t, inst) })
	t.Run("WorkEndpoints", func(t *testing.T) { workEndpoints(t, inst) })
	t.Run("Health", func(t *testing.T) {
		for _, p := range []string{"/livez", "/readyz"} {
			if r := inst.MustDo("GET", p, "", nil, nil); r.Status != 200 {
				t.Errorf("GET %s = %d %s", p, r.Status, r.Body)
			}
		}
	})
	t.Run("MetricsFamilies", func(t *testing.T) { metricsFamilies(t, inst, svc.Model, env["HTTP_SERVER"]) })
}

func roundTrip(t *testing.T, inst *Instance) {
	before := inst.CountRows("SELECT count(*) FROM orders")
	body := `{"customer_id":"cust-42","items":[{"sku":"A-1","quantity":2,"unit_price_cents":1250},{"sku":"B-2","quantity":1,"unit_price_cents":99}]}`
	r, err := inst.PostOrder("/orders", body, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusCreated {
		t.Fatalf("POST /orders = %d %s", r.Status, r.Body)
	}
	var created storedOrder
	r.JSON(t, &created)
	if created.ID <= 0 || created.CustomerID != "cust-42" || created.TotalCents != 2*1250+99 || len(created.Items) != 2 || created.CreatedAt == "" {
		t.Fatalf("created order = %+v", created)
	}
	if loc := r.Header.Get("Location"); loc != fmt.Sprintf("/orders/%d", created.ID) {
		t.Errorf("Location = %q", loc)
	}
	if n := inst.CountRows("SELECT count(*) FROM orders"); n != before+1 {
		t.Errorf("orders rows = %d, want %d", n, before+1)
	}
	if n := inst.CountRows("SELECT count(*) FROM order_items WHERE order_id = $1", created.ID); n != 2 {
		t.Errorf("order_items rows = %d, want 2", n)
	}

	g := inst.MustDo("GET", fmt.Sprintf("/orders/%d", created.ID), "", nil, nil)
	if g.Status != http.StatusOK {
		t.Fatalf("GET = %d %s", g.Status, g.Body)
	}
	var got storedOrder
	g.JSON(t, &got)
	if got.ID != created.ID || got.TotalCents != created.TotalCents || got.Items[0] != created.Items[0] || got.Items[1] != created.Items[1] {
		t.Errorf("GET returned %+v, want %+v", got, created)
	}
	if g := inst.MustDo("GET", "/orders/987654321", "", nil, nil); g.Status != http.StatusNotFound {
		t.Errorf("GET unknown id = %d", g.Status)
	}
}

// acceptedInput: the edges of what is accepted (docs/reference/api.md, Accepted
// input) are stored exactly as sent, byte for byte, and read back so.
func acceptedInput(t *testing.T, inst *Instance) {
	customer := "Zoë Ångström 東京 😀 \ufffd <&> \"q\" \\ "
	customer += strings.Repeat("x", order.MaxTextLen-utf8.RuneCountInString(customer))
	sku := "\U0001F600-ß"
	// The body spells the emoji of the sku as an escaped surrogate pair.
	body := `{"customer_id":` + strconv.Quote(customer) + `,"items":[{"sku":"\ud83d\ude00-ß","quantity":10000,"unit_price_cents":1000000000}]}`
	key := strings.Repeat("!#$%&'*+-./0189:;<=>?@AZ[]^_`az{|}~\"(),\\", 7)[:order.MaxIdempotencyKey]
	r, err := inst.PostOrder("/orders?db_delay=0s", body, key)
	if err != nil || r.Status != 201 {
		t.Fatalf("POST = %v %d %s", err, r.Status, r.Body)
	}
	var o storedOrder
	r.JSON(t, &o)
	var gotCustomer, gotKey, gotSKU string
	row := inst.DB.QueryRow(context.Background(), `SELECT o.customer_id, o.idempotency_key, i.sku
		FROM orders o JOIN order_items i ON i.order_id = o.id WHERE o.id = $1`, o.ID)
	if err := row.Scan(&gotCustomer, &gotKey, &gotSKU); err != nil {
		t.Fatal(err)
	}
	if gotCustomer != customer || gotSKU != sku || gotKey != key {
		t.Errorf("stored %q %q %q, sent %q %q %q", gotCustomer, gotSKU, gotKey, customer, sku, key)
	}
	g := inst.MustDo("GET", fmt.Sprintf("/orders/%d", o.ID), "", nil, nil)
	var back storedOrder
	g.JSON(t, &back)
	if back.CustomerID != customer || len(back.Items) != 1 || back.Items[0].SKU != sku {
		t.Errorf("read back %+v", back)
	}
}

func idempotency(t *testing.T, inst *Instance) {
	body := OrderBody("idem", 3)
	first, err := inst.PostOrder("/orders", body, "key-1")
	if err != nil || first.Status != 201 {
		t.Fatalf("first POST = %v %d %s", err, first.Status, first.Body)
	}
	var a, b storedOrder
	first.JSON(t, &a)
	again, err := inst.PostOrder("/orders", body, "key-1")
	if err != nil || again.Status != 200 {
		t.Fatalf("replay = %v %d %s", err, again.Status, again.Body)
	}
	again.JSON(t, &b)
	if a.ID != b.ID || a.TotalCents != b.TotalCents || len(b.Items) != 3 {
		t.Errorf("replay returned %+v, want %+v", b, a)
	}
	other, err := inst.PostOrder("/orders", OrderBody("someone-else", 1), "key-1")
	if err != nil || other.Status != 422 {
		t.Fatalf("reuse with another body = %v %d %s", err, other.Status, other.Body)
	}
	if n := inst.CountRows("SELECT count(*) FROM orders WHERE idempotency_key = 'key-1'"); n != 1 {
		t.Errorf("rows for key-1 = %d, want 1", n)
	}

	// Racing replays: exactly one creates, the rest see the same order.
	const racers = 12
	var wg sync.WaitGroup
	statuses := make([]int, racers)
	ids := make([]int64, racers)
	for i := range racers {
		wg.Go(func() {
			r, err := inst.PostOrder("/orders", body, "key-race")
			if err != nil {
				t.Error(err)
				return
			}
			statuses[i] = r.Status
			var o storedOrder
			r.JSON(t, &o)
			ids[i] = o.ID
		})
	}
	wg.Wait()
	created := 0
	for i, s := range statuses {
		switch s {
		case 201:
			created++
		case 200:
		default:
			t.Errorf("racer %d: status %d", i, s)
		}
		if ids[i] != ids[0] {
			t.Errorf("racer %d got order %d, racer 0 got %d", i, ids[i], ids[0])
		}
	}
	if created != 1 {
		t.Errorf("%d racers created the order, want 1", created)
	}
	if n := inst.CountRows("SELECT count(*) FROM orders WHERE idempotency_key = 'key-race'"); n != 1 {
		t.Errorf("rows for key-race = %d, want 1", n)
	}
}

func workEndpoints(t *testing.T, inst *Instance) {
	if r := inst.MustDo("GET", "/work/db?delay=5ms", "", nil, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"held":"5ms"`) {
		t.Errorf("/work/db = %d %s", r.Status, r.Body)
	}
	if r := inst.MustDo("GET", "/work/api?delay=5ms", "", nil, nil); r.Status != 200 || !strings.Contains(string(r.Body), `"waited":"5ms"`) {
		t.Errorf("/work/api = %d %s", r.Status, r.Body)
	}
	sum := sha256.Sum256([]byte("orderlab"))
	for range 2 {
		sum = sha256.Sum256(sum[:])
	}
	r := inst.MustDo("GET", "/work/cpu?rounds=3", "", nil, nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), hex.EncodeToString(sum[:])) {
		t.Errorf("/work/cpu?rounds=3 = %d %s, want digest %x", r.Status, r.Body, sum)
	}
	for _, p := range []string{"/work/db?delay=-1s", "/work/api?delay=1y", "/work/cpu?rounds=0", "/work/cpu?rounds=1000001", "/work/cpu?rounds=x"} {
		if r := inst.MustDo("GET", p, "", nil, nil); r.Status != 400 {
			t.Errorf("GET %s = %d, want 400", p, r.Status)
		}
	}
	// With db_delay the transaction really holds its connection: the hold
	// histogram sees at least that long.
	if r, err := inst.PostOrder("/orders?db_delay=50ms", OrderBody("slow", 1), ""); err != nil || r.Status != 201 {
		t.Fatalf("POST with db_delay = %v %d %s", err, r.Status, r.Body)
	}
	fams := inst.Metrics()
	if held := fams.Value("orderlab_db_pool_connection_hold_seconds", map[string]string{"outcome": "ok"}); held < 0.05 {
		t.Errorf("hold histogram's ok holds sum to %.3f s, do not show the 50ms db_delay: %v", held, fams["orderlab_db_pool_connection_hold_seconds"])
	}
}
