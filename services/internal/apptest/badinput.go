package apptest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/services/internal/order"
)

// badInput holds the service to every class of bad input (docs/reference/api.md):
// each case is answered with its status and a problem that names the
// field, and none stores a row.
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

		// Accepted input (docs/reference/api.md): what encoding/json would let
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
