// Package ledger sends orders at a steady rate to an orderlab service and
// keeps each one's answer (Load), then holds the answers to the orders
// table (Check): every acknowledged order is stored, once, under its key
// and with the id it was answered with; none is stored that was answered
// "not stored"; none is stored twice. Each order has a customer_id of its
// own, so that its rows can be found whatever its answer said.
//
// The fault runs (internal/dbfault) use it against a service in the same
// process (the services' fault suite) and against the built binaries
// (make faults, the scenarios' db_stop), so it imports nothing from
// services/.
package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Answer is one order's fate.
type Answer struct {
	Customer string    // the order's own customer_id
	Key      string    // its Idempotency-Key, or ""
	Sent     time.Time // when it was sent
	Status   int       // the HTTP status, 0 on a transport error
	Type     string    // the problem type's name (database-unavailable), if any
	ID       int64     // the stored order's id, on a success
	// RetryAfter is the Retry-After header, if any (a 429 must carry one).
	RetryAfter string
	Err        error // a transport error
}

// Success says whether the order was acknowledged: created (201), or
// found stored under its key (200).
func (a Answer) Success() bool { return a.Status == http.StatusCreated || a.Status == http.StatusOK }

// NotStored says whether the answer claims that nothing was stored: a
// rejection (429), a conflict (409), or a 503 that says so
// (database-unavailable, pool-exhausted). The docs/reference/api.md's Errors section
// defines them.
func (a Answer) NotStored() bool {
	switch a.Status {
	case http.StatusTooManyRequests, http.StatusConflict:
		return true
	case http.StatusServiceUnavailable:
		return a.Type == "database-unavailable" || a.Type == "pool-exhausted"
	}
	return false
}

// TransportError is the Label of an answer that never came.
const TransportError = "transport error"

// Label is the answer's status with its problem type, "503 outcome-unknown".
func (a Answer) Label() string {
	switch {
	case a.Err != nil:
		return TransportError
	case a.Type != "":
		return fmt.Sprintf("%d %s", a.Status, a.Type)
	}
	return fmt.Sprint(a.Status)
}

func (a Answer) String() string {
	if a.Err != nil {
		return fmt.Sprintf("%s: %v", a.Customer, a.Err)
	}
	return a.Customer + ": " + a.Label()
}

// Load sends orders at a fixed rate, open loop (one goroutine per order,
// whatever the answers' latency), until Finish.
type Load struct {
	url, name string
	unkeyed   int
	client    *http.Client

	mu      sync.Mutex
	answers []Answer
	stop    chan struct{}
	ticking sync.WaitGroup
	sending sync.WaitGroup
}

// Start sends rate orders a second to url (http://host:port/orders?...),
// named name-0, name-1, ... (their customer_id and Idempotency-Key). With
// unkeyed n > 0, every n-th order goes without a key.
func Start(url, name string, rate, unkeyed int) *Load {
	l := &Load{
		url: url, name: name, unkeyed: unkeyed, stop: make(chan struct{}),
		client: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 256}},
	}
	l.ticking.Go(func() {
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for seq := 0; ; seq++ {
			select {
			case <-l.stop:
				return
			case <-tick.C:
			}
			l.sending.Go(func() { l.send(seq) })
		}
	})
	return l
}

func (l *Load) send(seq int) {
	a := Answer{Customer: fmt.Sprintf("%s-%d", l.name, seq), Sent: time.Now()}
	if l.unkeyed <= 0 || seq%l.unkeyed != l.unkeyed-1 {
		a.Key = a.Customer
	}
	req, err := http.NewRequest(http.MethodPost, l.url, strings.NewReader(Body(a.Customer, 1+seq%3)))
	if err != nil {
		panic(err) // the URL was checked by the caller's first request
	}
	req.Header.Set("Content-Type", "application/json")
	if a.Key != "" {
		req.Header.Set("Idempotency-Key", a.Key)
	}
	resp, err := l.client.Do(req)
	if err == nil {
		var body []byte
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		a.Status = resp.StatusCode
		a.RetryAfter = resp.Header.Get("Retry-After")
		var v struct {
			ID   int64  `json:"id"`
			Type string `json:"type"`
		}
		_ = json.Unmarshal(body, &v)
		a.ID = v.ID
		if _, name, ok := strings.Cut(v.Type, "#problem-"); ok {
			a.Type = name
		}
	}
	a.Err = err
	l.mu.Lock()
	l.answers = append(l.answers, a)
	l.mu.Unlock()
}

// Finish stops sending, waits for every answer and returns them in the
// order they were sent.
func (l *Load) Finish() []Answer {
	close(l.stop)
	l.ticking.Wait()
	l.sending.Wait()
	l.client.CloseIdleConnections()
	sort.Slice(l.answers, func(i, j int) bool { return l.answers[i].Sent.Before(l.answers[j].Sent) })
	return l.answers
}

// Body is a valid order of customer with n items.
func Body(customer string, n int) string {
	items := make([]string, n)
	for k := range items {
		items[k] = fmt.Sprintf(`{"sku":"SKU-%d","quantity":%d,"unit_price_cents":%d}`, k, k+1, 100*(k+1))
	}
	return fmt.Sprintf(`{"customer_id":%q,"items":[%s]}`, customer, strings.Join(items, ","))
}

// Tally is a count of answers by Label.
type Tally map[string]int

// Count tallies answers by Label.
func Count(as []Answer) Tally {
	m := Tally{}
	for _, a := range as {
		m[a.Label()]++
	}
	return m
}

// String lists the counts by label, in the labels' order: "201: 1180; 503
// database-unavailable: 120".
func (t Tally) String() string {
	parts := make([]string, 0, len(t))
	for _, l := range slices.Sorted(maps.Keys(t)) {
		parts = append(parts, fmt.Sprintf("%s: %d", l, t[l]))
	}
	return strings.Join(parts, "; ")
}

// Querier runs a query: a *pgx.Conn or a *pgxpool.Pool.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Audit is what the table says about a set of answers. Every list must be
// empty.
type Audit struct {
	Missing    []Answer // acknowledged, but not in the table (or under another id or key)
	Duplicates []Answer // stored more than once
	Stored     []Answer // answered "not stored", but in the table
}

// OK says whether the table backs every answer.
func (a Audit) OK() bool { return len(a.Missing)+len(a.Duplicates)+len(a.Stored) == 0 }

// Check holds the answers to the orders table that db reaches.
func Check(ctx context.Context, db Querier, as []Answer) (Audit, error) {
	type row struct {
		id  int64
		key string
	}
	customers := make([]string, len(as))
	for i, a := range as {
		customers[i] = a.Customer
	}
	rows, err := db.Query(ctx, `SELECT customer_id, id, coalesce(idempotency_key, '')
		FROM orders WHERE customer_id = ANY($1)`, customers)
	if err != nil {
		return Audit{}, err
	}
	stored := map[string][]row{}
	for rows.Next() {
		var c string
		var r row
		if err := rows.Scan(&c, &r.id, &r.key); err != nil {
			return Audit{}, err
		}
		stored[c] = append(stored[c], r)
	}
	if err := rows.Err(); err != nil {
		return Audit{}, err
	}
	var au Audit
	for _, a := range as {
		got := stored[a.Customer]
		switch {
		case len(got) > 1:
			au.Duplicates = append(au.Duplicates, a)
		case a.Success() && (len(got) == 0 || got[0].id != a.ID || got[0].key != a.Key):
			au.Missing = append(au.Missing, a)
		case a.NotStored() && len(got) != 0:
			au.Stored = append(au.Stored, a)
		}
	}
	return au, nil
}
