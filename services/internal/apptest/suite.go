package apptest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/orderlab/orderlab/services/internal/app"
	"github.com/orderlab/orderlab/services/internal/httpserver"
	"github.com/orderlab/orderlab/services/internal/order"
)

// storedOrder mirrors the JSON of a stored order.
type storedOrder struct {
	ID         int64        `json:"id"`
	CustomerID string       `json:"customer_id"`
	Items      []order.Item `json:"items"`
	TotalCents int64        `json:"total_cents"`
	CreatedAt  string       `json:"created_at"`
}

type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Errors []struct {
		Field  string `json:"field"`
		Detail string `json:"detail"`
	} `json:"errors"`
	WaitedSeconds *float64 `json:"waited_seconds"`
}

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

func badInput(t *testing.T, inst *Instance) {
	valid := `{"customer_id":"c","items":[{"sku":"s","quantity":1,"unit_price_cents":1}]}`
	many := make([]string, order.MaxItems+1)
	for i := range many {
		many[i] = `{"sku":"s","quantity":1,"unit_price_cents":1}`
	}
	item := func(sku string) string { return `{"sku":"` + sku + `","quantity":1,"unit_price_cents":1}` }
	order := func(customer string, skus ...string) string {
		items := make([]string, len(skus))
		for i, sku := range skus {
			items[i] = item(sku)
		}
		return `{"customer_id":"` + customer + `","items":[` + strings.Join(items, ",") + `]}`
	}
	cases := []struct {
		name, method, path, ctype, body string
		header                          map[string]string
		status                          int
		field                           string
	}{
		{"malformed JSON", "POST", "/orders", "application/json", `{"customer_id":`, nil, 400, "body"},
		{"not JSON", "POST", "/orders", "application/json", `hello`, nil, 400, "body"},
		{"empty body", "POST", "/orders", "application/json", ``, nil, 400, "body"},
		{"two objects", "POST", "/orders", "application/json", valid + valid, nil, 400, "body"},
		{"unknown field", "POST", "/orders", "application/json", `{"customer_id":"c","coupon":"x","items":[{"sku":"s","quantity":1,"unit_price_cents":1}]}`, nil, 400, "coupon"},
		{"missing customer", "POST", "/orders", "application/json", `{"items":[{"sku":"s","quantity":1,"unit_price_cents":1}]}`, nil, 400, "customer_id"},
		{"blank customer", "POST", "/orders", "application/json", `{"customer_id":"  ","items":[{"sku":"s","quantity":1,"unit_price_cents":1}]}`, nil, 400, "customer_id"},
		{"missing items", "POST", "/orders", "application/json", `{"customer_id":"c"}`, nil, 400, "items"},
		{"empty items", "POST", "/orders", "application/json", `{"customer_id":"c","items":[]}`, nil, 400, "items"},
		{"missing sku", "POST", "/orders", "application/json", `{"customer_id":"c","items":[{"quantity":1,"unit_price_cents":1}]}`, nil, 400, "items[0].sku"},
		{"zero quantity", "POST", "/orders", "application/json", `{"customer_id":"c","items":[{"sku":"s","quantity":0,"unit_price_cents":1}]}`, nil, 400, "items[0].quantity"},
		{"quantity too big", "POST", "/orders", "application/json", `{"customer_id":"c","items":[{"sku":"s","quantity":1},{"sku":"s","quantity":10001,"unit_price_cents":1}]}`, nil, 400, "items[1].quantity"},
		{"fractional quantity", "POST", "/orders", "application/json", `{"customer_id":"c","items":[{"sku":"s","quantity":1.5,"unit_price_cents":1}]}`, nil, 400, "items[0].quantity"},
		{"string quantity", "POST", "/orders", "application/json", `{"customer_id":"c","items":[{"sku":"s","quantity":"2","unit_price_cents":1}]}`, nil, 400, "items[0].quantity"},
		{"unknown item field", "POST", "/orders", "application/json", `{"customer_id":"c","items":[{"sku":"s","quantity":1,"unit_price_cents":1},{"sku":"s","quantity":1,"colour":"red"}]}`, nil, 400, "items[1].colour"},
		{"item not an object", "POST", "/orders", "application/json", `{"customer_id":"c","items":[7]}`, nil, 400, "items[0]"},
		{"items not an array", "POST", "/orders", "application/json", `{"customer_id":"c","items":{"sku":"s"}}`, nil, 400, "items"},
		{"trailing brace", "POST", "/orders", "application/json", valid + `}`, nil, 400, "body"},
		{"trailing bracket", "POST", "/orders", "application/json", valid + `]`, nil, 400, "body"},
		{"negative price", "POST", "/orders", "application/json", `{"customer_id":"c","items":[{"sku":"s","quantity":1,"unit_price_cents":-1}]}`, nil, 400, "items[0].unit_price_cents"},
		{"too many items", "POST", "/orders", "application/json", `{"customer_id":"c","items":[` + strings.Join(many, ",") + `]}`, nil, 400, "items"},
		{"body over 64 KiB", "POST", "/orders", "application/json", `{"customer_id":"` + strings.Repeat("x", 70<<10) + `"}`, nil, 413, "body"},
		{"wrong content type", "POST", "/orders", "text/plain", valid, nil, 415, "Content-Type"},
		{"no content type", "POST", "/orders", "", valid, nil, 415, "Content-Type"},
		{"bad idempotency key", "POST", "/orders", "application/json", valid, map[string]string{"Idempotency-Key": "has space"}, 400, "Idempotency-Key"},
		{"bad db_delay", "POST", "/orders?db_delay=soon", "application/json", valid, nil, 400, "db_delay"},
		{"db_delay over cap", "POST", "/orders?db_delay=11s", "application/json", valid, nil, 400, "db_delay"},
		{"non-numeric id", "GET", "/orders/abc", "", "", nil, 400, "id"},
		{"negative id", "GET", "/orders/-4", "", "", nil, 400, "id"},

		// Accepted input (README, API): what encoding/json would let
		// through altered, and what the query and headers must not carry.
		{"invalid UTF-8 in customer_id", "POST", "/orders", "application/json", order("c\xff", "s"), nil, 400, "customer_id"},
		{"invalid UTF-8 in a sku", "POST", "/orders", "application/json", order("c", "s", "s\xfe\xff"), nil, 400, "items[1].sku"},
		{"truncated UTF-8", "POST", "/orders", "application/json", order("c\xe6\x9d", "s"), nil, 400, "customer_id"},
		{"overlong encoding", "POST", "/orders", "application/json", order("c", "\xc0\xaf"), nil, 400, "items[0].sku"},
		{"encoded surrogate", "POST", "/orders", "application/json", order("\xed\xa0\x80", "s"), nil, 400, "customer_id"},
		{"lone surrogate escape", "POST", "/orders", "application/json", order(`c\ud800`, "s"), nil, 400, "customer_id"},
		{"lone low surrogate escape", "POST", "/orders", "application/json", order("c", `\udc00s`), nil, 400, "items[0].sku"},
		{"reversed surrogate pair", "POST", "/orders", "application/json", order("c", `\ude00\ud83d`), nil, 400, "items[0].sku"},
		{"bidi override", "POST", "/orders", "application/json", order("c\u202egnp.exe", "s"), nil, 400, "customer_id"},
		{"zero-width space", "POST", "/orders", "application/json", order("c", `s\u200b`), nil, 400, "items[0].sku"},
		{"no-break space", "POST", "/orders", "application/json", order("c", "s\u00a0t"), nil, 400, "items[0].sku"},
		{"invalid UTF-8 in a field name", "POST", "/orders", "application/json", `{"customer_id":"c","` + "\xff" + `":1,"items":[` + item("s") + `]}`, nil, 400, "body"},
		{"empty field name", "POST", "/orders", "application/json", `{"":0}`, nil, 400, "body"},
		{"empty item field name", "POST", "/orders", "application/json", `{"customer_id":"c","items":[{"":0}]}`, nil, 400, "items[0]"},
		{"field name in another case", "POST", "/orders", "application/json", `{"CUSTOMER_ID":"c","items":[` + item("s") + `]}`, nil, 400, "CUSTOMER_ID"},
		{"item field in another case", "POST", "/orders", "application/json", `{"customer_id":"c","items":[{"SKU":"s","quantity":1,"unit_price_cents":1}]}`, nil, 400, "items[0].SKU"},
		{"repeated field", "POST", "/orders", "application/json", `{"customer_id":"a","customer_id":"b","items":[` + item("s") + `]}`, nil, 400, "customer_id"},
		{"repeated item field", "POST", "/orders", "application/json", `{"customer_id":"c","items":[{"sku":"s","sku":"t","quantity":1,"unit_price_cents":1}]}`, nil, 400, "items[0].sku"},
		{"charset other than UTF-8", "POST", "/orders", "application/json; charset=iso-8859-1", valid, nil, 415, "Content-Type"},
		{"empty idempotency key", "POST", "/orders", "application/json", valid, map[string]string{"Idempotency-Key": ""}, 400, "Idempotency-Key"},
		{"unknown query parameter", "POST", "/orders?dbdelay=5ms", "application/json", valid, nil, 400, "dbdelay"},
		{"query parameter twice", "POST", "/orders?db_delay=1ms&db_delay=9s", "application/json", valid, nil, 400, "db_delay"},
		{"malformed query escape", "POST", "/orders?db_delay=%zz", "application/json", valid, nil, 400, "query"},
		{"query over 256 bytes", "POST", "/orders?db_delay=" + strings.Repeat("0", 300) + "1ms", "application/json", valid, nil, 400, "query"},
		{"unprintable query name", "POST", "/orders?%ff=1", "application/json", valid, nil, 400, "query"},
		{"signed db_delay", "POST", "/orders?db_delay=%2B5ms", "application/json", valid, nil, 400, "db_delay"},
		{"db_delay in µs", "POST", "/orders?db_delay=5%C2%B5s", "application/json", valid, nil, 400, "db_delay"},
		{"signed id", "GET", "/orders/+1", "", "", nil, 400, "id"},
		{"id with leading zeros", "GET", "/orders/007", "", "", nil, 400, "id"},
		{"query on GET /orders/{id}", "GET", "/orders/1?x=1", "", "", nil, 400, "x"},
		{"signed rounds", "GET", "/work/cpu?rounds=%2B3", "", "", nil, 400, "rounds"},
		{"rounds twice", "GET", "/work/cpu?rounds=3&rounds=4", "", "", nil, 400, "rounds"},
		{"delay twice", "GET", "/work/db?delay=1ms&delay=2ms", "", "", nil, 400, "delay"},
		{"unknown parameter on /work/api", "GET", "/work/api?delay=1ms&sleep=1s", "", "", nil, 400, "sleep"},
	}
	before := inst.CountRows("SELECT count(*) FROM orders")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := inst.MustDo(tc.method, tc.path, tc.ctype, []byte(tc.body), tc.header)
			if r.Status != tc.status {
				t.Fatalf("status = %d, want %d; body %s", r.Status, tc.status, r.Body)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type = %q, want application/problem+json", ct)
			}
			var p problem
			r.JSON(t, &p)
			if p.Status != tc.status || p.Title == "" {
				t.Errorf("problem = %+v", p)
			}
			found := false
			for _, e := range p.Errors {
				found = found || e.Field == tc.field
			}
			if !found {
				t.Errorf("problem does not name field %q: %s", tc.field, r.Body)
			}
		})
	}
	// An Idempotency-Key sent twice (two header lines) is ambiguous.
	req, err := http.NewRequest("POST", inst.URL+"/orders", strings.NewReader(valid))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header["Idempotency-Key"] = []string{"key-a", "key-b"}
	if r, err := inst.Send(req); err != nil || r.Status != 400 || !strings.Contains(string(r.Body), `"field":"Idempotency-Key"`) {
		t.Errorf("Idempotency-Key twice = %v %d %s, want 400 naming it", err, r.Status, r.Body)
	}
	if n := inst.CountRows("SELECT count(*) FROM orders"); n != before {
		t.Errorf("bad input stored rows: %d orders, want %d", n, before)
	}
	// Routing problems are problems too.
	if r := inst.MustDo("GET", "/no/such/route", "", nil, nil); r.Status != 404 || r.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("unknown route = %d %q", r.Status, r.Header.Get("Content-Type"))
	}
	if r := inst.MustDo("DELETE", "/orders", "", nil, nil); r.Status != 405 {
		t.Errorf("DELETE /orders = %d, want 405", r.Status)
	}
}

// acceptedInput: the edges of what is accepted (README, API: Accepted
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
	if f := fams["orderlab_db_pool_connection_hold_seconds"]; f == nil || f.GetMetric()[0].GetHistogram().GetSampleSum() < 0.05 {
		t.Errorf("hold histogram does not show the 50ms db_delay: %v", f)
	}
}

// SharedFamilies are the metric families every service exposes.
var SharedFamilies = []string{
	"orderlab_service_info",
	"orderlab_orders_created_total",
	"orderlab_http_request_duration_seconds",
	"orderlab_http_requests_in_flight",
	"orderlab_http_connections",
	"orderlab_db_pool_acquired_connections",
	"orderlab_db_pool_idle_connections",
	"orderlab_db_pool_constructing_connections",
	"orderlab_db_pool_total_connections",
	"orderlab_db_pool_max_connections",
	"orderlab_db_pool_acquires_total",
	"orderlab_db_pool_empty_acquires_total",
	"orderlab_db_pool_canceled_acquires_total",
	"orderlab_db_pool_acquire_duration_seconds_total",
	"orderlab_db_pool_empty_acquire_wait_seconds_total",
	"orderlab_db_pool_acquire_wait_seconds",
	"orderlab_db_pool_connection_hold_seconds",
	"orderlab_db_pool_acquires_in_progress",
	"orderlab_db_pool_longest_hold_seconds",
	"orderlab_db_errors_total",
	"orderlab_db_retries_total",
	"go_goroutines",
	"go_threads",
	"process_resident_memory_bytes",
}

// ModelFamilies are the families only one model exposes.
var ModelFamilies = map[string][]string{
	"semaphore": {
		"orderlab_limiter_limit", "orderlab_limiter_permits_in_use", "orderlab_limiter_waiters",
		"orderlab_limiter_wait_seconds", "orderlab_limiter_rejections_total",
	},
	"pipeline": {
		"orderlab_pipeline_queue_length", "orderlab_pipeline_queue_capacity", "orderlab_pipeline_workers",
		"orderlab_pipeline_workers_busy", "orderlab_pipeline_enqueue_wait_seconds", "orderlab_pipeline_rejections_total",
		"orderlab_pipeline_batch_size", "orderlab_pipeline_batch_commit_seconds",
	},
}

// NBIOFamilies are the families only the nbio server exposes: its handler pool.
var NBIOFamilies = []string{
	"orderlab_http_handler_pool_size", "orderlab_http_handler_pool_busy",
	"orderlab_http_handler_pool_queued", "orderlab_http_handler_pool_wait_seconds",
}

func metricsFamilies(t *testing.T, inst *Instance, modelName, server string) {
	// One request of each kind so that the labelled families have series.
	inst.MustDo("GET", "/work/db?delay=1ms", "", nil, nil)
	fams := inst.Metrics()
	want := append(append([]string{}, SharedFamilies...), ModelFamilies[modelName]...)
	for _, name := range want {
		if _, ok := fams[name]; !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	for _, name := range NBIOFamilies {
		if _, ok := fams[name]; ok != (server == string(httpserver.NBIO)) {
			t.Errorf("HTTP_SERVER=%s: /metrics has %s: %v", server, name, ok)
		}
	}
	if v := Value(fams, "orderlab_service_info", map[string]string{"http_server": server}); v != 1 {
		t.Errorf("orderlab_service_info{http_server=%q} = %v, want 1", server, v)
	}
	// This scrape's client holds no API connection; the suite's client
	// keeps its connections alive between requests: all idle now.
	if open := Value(fams, "orderlab_http_connections", nil); open < 1 {
		t.Errorf("orderlab_http_connections = %v, want the suite's kept-alive connections", open)
	}
	for other, names := range ModelFamilies {
		if other == modelName {
			continue
		}
		for _, name := range names {
			if _, ok := fams[name]; ok {
				t.Errorf("%s exposes %s, a %s metric", modelName, name, other)
			}
		}
	}
	if v := Value(fams, "orderlab_service_info", map[string]string{"model": modelName}); v != 1 {
		t.Errorf("orderlab_service_info{model=%q} = %v, want 1", modelName, v)
	}
	if c := Count(fams, "orderlab_http_request_duration_seconds", map[string]string{"route": "/work/db", "code": "200", "method": "GET"}); c == 0 {
		t.Errorf("no /work/db observation in the request histogram")
	}
	// Invented methods share one label value: the label stays bounded.
	// nbio's parser knows the nine standard methods only: it closes the
	// connection on any other without an answer (docs/reference/http-servers.md).
	for _, m := range []string{"FOO", "BAR"} {
		_, err := inst.Do(m, "/orders", "", nil, nil)
		if nbio := server == string(httpserver.NBIO); nbio != (err != nil) {
			t.Errorf("%s /orders with HTTP_SERVER=%s: error %v", m, server, err)
		}
	}
	fams = inst.Metrics()
	for _, m := range fams["orderlab_http_request_duration_seconds"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "method" && (l.GetValue() == "FOO" || l.GetValue() == "BAR") {
				t.Errorf("raw method %q became a label value", l.GetValue())
			}
		}
	}
	wantOther := uint64(2)
	if server == string(httpserver.NBIO) {
		wantOther = 0
	}
	if c := Count(fams, "orderlab_http_request_duration_seconds", map[string]string{"method": "OTHER"}); c != wantOther {
		t.Errorf("requests with method=OTHER = %d, want %d", c, wantOther)
	}
	if v := Value(fams, "orderlab_db_pool_max_connections", nil); v != 4 {
		t.Errorf("pool max connections = %v, want 4 (DB_MAX_CONNS)", v)
	}

	// promtool's linter over the real exposition.
	promtool := PromtoolPath(t)
	resp, err := http.Get(inst.AdminURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = resp.Body
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// PromtoolPath finds promtool: $PROMTOOL, then ./bin at the module root
// (where `make test` installs it), then $PATH. It fails the test, never
// skips it, when there is none.
func PromtoolPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("PROMTOOL"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	if p := filepath.Join(root, "bin", "promtool"); fileExists(p) {
		return p
	}
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	t.Fatal("promtool not found: run `make test` (it installs bin/promtool) or set PROMTOOL")
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
