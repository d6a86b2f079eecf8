package apptest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/orderlab/orderlab/services/internal/app"
)

// FuzzPlaceOrder runs POST /orders end to end, through the real handler
// stack against real Postgres, with fuzzed text, numbers, Idempotency-Key
// and query. The properties: never a 5xx; a rejection stores nothing; an
// accepted order is stored, and read back, exactly as sent (docs/reference/api.md,
// Accepted input). One service per fuzzing process.
func FuzzPlaceOrder(f *testing.F, svc app.Service) {
	f.Add("c-1", "A-1", 2, int64(1250), "", "")
	f.Add("Zoë 東京", "\U0001F600-ß", 10000, int64(1000000000), "key-1", "db_delay=1ms")
	f.Add("c\xff", "s", 1, int64(1), "k", "db_delay=%2B1ms")
	inst := Start(f, svc, nil)
	// Instance's helpers fail f; inside the target only t may fail.
	orders := func(t *testing.T) int {
		var n int
		if err := inst.DB.QueryRow(context.Background(), "SELECT count(*) FROM orders").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	f.Fuzz(func(t *testing.T, customer, sku string, quantity int, price int64, key, query string) {
		if vals, err := url.ParseQuery(query); err == nil {
			for _, v := range vals["db_delay"] {
				if d, err := time.ParseDuration(v); err == nil && d > 10*time.Millisecond {
					return // valid but slow: the fuzzer would spend its time asleep
				}
			}
		}
		body := fmt.Sprintf(`{"customer_id":%s,"items":[{"sku":%s,"quantity":%d,"unit_price_cents":%d}]}`,
			rawJSONString(customer), rawJSONString(sku), quantity, price)
		req, err := http.NewRequest(http.MethodPost, inst.URL+"/orders", strings.NewReader(body))
		if err != nil {
			return
		}
		req.URL.RawQuery = query
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		before := orders(t)
		r, err := inst.Send(req)
		if err != nil {
			return // the client refused to send it (a control character in the header)
		}
		if r.Status >= 500 {
			t.Fatalf("%s ?%q key %q: %d %s", body, query, key, r.Status, r.Body)
		}
		if r.Status != http.StatusCreated && r.Status != http.StatusOK {
			if n := orders(t); n != before {
				t.Fatalf("%s: %d, yet orders went from %d to %d", body, r.Status, before, n)
			}
			return
		}
		var o storedOrder
		r.JSON(t, &o)
		var gotCustomer, gotSKU string
		var gotKey *string
		var gotQuantity int
		var gotPrice int64
		err = inst.DB.QueryRow(context.Background(), `SELECT o.customer_id, o.idempotency_key, i.sku, i.quantity, i.unit_price_cents
			FROM orders o JOIN order_items i ON i.order_id = o.id WHERE o.id = $1`, o.ID).
			Scan(&gotCustomer, &gotKey, &gotSKU, &gotQuantity, &gotPrice)
		if errors.Is(err, pgx.ErrNoRows) && r.Status == http.StatusOK {
			return
		}
		if err != nil {
			t.Fatalf("order %d: %v", o.ID, err)
		}
		// Whitespace around a header value is not part of it (RFC 9110).
		wantKey := strings.Trim(key, " \t")
		if gotCustomer != customer || gotSKU != sku || gotQuantity != quantity || gotPrice != price ||
			(gotKey == nil) != (wantKey == "") || (gotKey != nil && *gotKey != wantKey) {
			t.Fatalf("sent %q %q %d %d key %q; stored %q %q %d %d key %v",
				customer, sku, quantity, price, key, gotCustomer, gotSKU, gotQuantity, gotPrice, gotKey)
		}
		if r.Status == http.StatusOK {
			return // a replay: the order stored first, checked above
		}
		if o.CustomerID != customer || len(o.Items) != 1 || o.Items[0].SKU != sku {
			t.Fatalf("sent %q %q; answered %+v", customer, sku, o)
		}
		g, err := inst.Do(http.MethodGet, "/orders/"+strconv.FormatInt(o.ID, 10), "", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		var back storedOrder
		g.JSON(t, &back)
		if back.CustomerID != customer || len(back.Items) != 1 || back.Items[0].SKU != sku {
			t.Fatalf("sent %q %q; read back %+v", customer, sku, back)
		}
	})
}

// rawJSONString quotes s as a JSON string that carries its bytes as they
// are, invalid UTF-8 included: only '"', '\' and control bytes are escaped.
func rawJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
