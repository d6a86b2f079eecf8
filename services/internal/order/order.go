// Package order owns the order model: what a client may submit, how it is
// validated, and what the service stores and returns.
package order

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits on what a client may submit. They keep every total inside int64
// (100 items x 10,000 x 1e9 cents < 2^63) and every row small.
const (
	MaxItems          = 100
	MaxQuantity       = 10_000
	MaxUnitPriceCents = 1_000_000_000
	MaxTextLen        = 64
	MaxIdempotencyKey = 255
)

// ErrNotFound is returned when no order has the requested id.
var ErrNotFound = errors.New("order not found")

// ErrIdempotencyConflict is returned when an Idempotency-Key is reused with a
// different request body.
var ErrIdempotencyConflict = errors.New("idempotency key reused with a different request")

// Item is one line of an order.
type Item struct {
	SKU            string `json:"sku"`
	Quantity       int    `json:"quantity"`
	UnitPriceCents int64  `json:"unit_price_cents"`
}

// Input is what a client submits to create an order.
type Input struct {
	CustomerID string `json:"customer_id"`
	Items      []Item `json:"items"`
}

// Order is a stored order.
type Order struct {
	ID         int64     `json:"id"`
	CustomerID string    `json:"customer_id"`
	Items      []Item    `json:"items"`
	TotalCents int64     `json:"total_cents"`
	CreatedAt  time.Time `json:"created_at"`
}

// FieldError names one invalid field of a request.
type FieldError struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// ValidationError lists every invalid field of a request.
type ValidationError struct {
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + ": " + f.Detail
	}
	return "invalid order: " + strings.Join(parts, "; ")
}

// Add records a problem with field.
func (e *ValidationError) Add(field, format string, args ...any) {
	e.Fields = append(e.Fields, FieldError{Field: field, Detail: fmt.Sprintf(format, args...)})
}

// Err returns e when it holds a problem, nil otherwise.
func (e *ValidationError) Err() error {
	if len(e.Fields) == 0 {
		return nil
	}
	return e
}

// Validate reports every invalid field of in, or nil.
func (in Input) Validate() error {
	var v ValidationError
	checkText(&v, "customer_id", in.CustomerID)
	switch {
	case in.Items == nil:
		v.Add("items", "is required")
	case len(in.Items) == 0:
		v.Add("items", "must hold at least one item")
	case len(in.Items) > MaxItems:
		v.Add("items", "must hold at most %d items, got %d", MaxItems, len(in.Items))
	default:
		for i, it := range in.Items {
			p := fmt.Sprintf("items[%d].", i)
			checkText(&v, p+"sku", it.SKU)
			if it.Quantity <= 0 || it.Quantity > MaxQuantity {
				v.Add(p+"quantity", "must be between 1 and %d, got %d", MaxQuantity, it.Quantity)
			}
			if it.UnitPriceCents < 0 || it.UnitPriceCents > MaxUnitPriceCents {
				v.Add(p+"unit_price_cents", "must be between 0 and %d, got %d", MaxUnitPriceCents, it.UnitPriceCents)
			}
		}
	}
	return v.Err()
}

// checkText holds a text field to its alphabet (docs/reference/api.md, Accepted
// input): valid UTF-8 of printable characters (unicode.IsPrint: letters,
// marks, numbers, punctuation, symbols and the ASCII space), not blank, at
// most MaxTextLen characters. That rules out control characters and NUL,
// format characters (bidi overrides, zero-width spaces), other spaces,
// private-use and unassigned code points, and U+FFFD from a decoder that
// met invalid UTF-8 (the API rejects that before decoding).
func checkText(v *ValidationError, field, s string) {
	switch {
	case !utf8.ValidString(s):
		v.Add(field, "is not valid UTF-8")
	case strings.TrimSpace(s) == "":
		v.Add(field, "is required")
	case utf8.RuneCountInString(s) > MaxTextLen:
		v.Add(field, "must be at most %d characters", MaxTextLen)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		v.Add(field, "must not contain control characters")
	case strings.IndexFunc(s, notPrint) >= 0:
		r, _ := utf8.DecodeRuneInString(s[strings.IndexFunc(s, notPrint):])
		v.Add(field, "must hold printable characters only, not %U", r)
	}
}

func notPrint(r rune) bool { return !unicode.IsPrint(r) }

// ValidateIdempotencyKey checks the Idempotency-Key header; empty means
// absent. A key is 1 to MaxIdempotencyKey bytes of printable ASCII without
// spaces (0x21-0x7E).
func ValidateIdempotencyKey(key string) error {
	if key == "" {
		return nil
	}
	var v ValidationError
	if len(key) > MaxIdempotencyKey {
		v.Add("Idempotency-Key", "must be at most %d bytes", MaxIdempotencyKey)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			v.Add("Idempotency-Key", "must be printable ASCII without spaces")
			break
		}
	}
	return v.Err()
}

// Total is the order's total in cents. Validate bounds it well inside int64.
func (in Input) Total() int64 {
	var t int64
	for _, it := range in.Items {
		t += int64(it.Quantity) * it.UnitPriceCents
	}
	return t
}

// Fingerprint identifies the content of a request, so that a replayed
// Idempotency-Key can be told apart from a reused one.
func (in Input) Fingerprint() []byte {
	b, _ := json.Marshal(in) // a struct of strings and numbers always marshals
	sum := sha256.Sum256(b)
	return sum[:]
}

// Request is a validated order request, ready to store: the input with its
// total and fingerprint computed once.
type Request struct {
	Input          Input
	IdempotencyKey string // empty: none
	TotalCents     int64
	Fingerprint    []byte // sha256 of the input when keyed; empty otherwise
}

// NewRequest prepares a validated input for storage. Only a keyed request
// is fingerprinted: without a key there is no replay to recognise.
func NewRequest(in Input, idempotencyKey string) Request {
	r := Request{Input: in, IdempotencyKey: idempotencyKey, TotalCents: in.Total(), Fingerprint: []byte{}}
	if idempotencyKey != "" {
		r.Fingerprint = in.Fingerprint()
	}
	return r
}

// Result is the outcome of placing one Request.
type Result struct {
	Order Order
	// Created is false when an earlier request with the same key and body
	// already created the order: this one is its replay.
	Created bool
	// Err is the order's own failure where others stored with it did not
	// fail: an Idempotency-Key reused with another body, or an order whose
	// outcome is unknown while its keyed batch mates were sent again.
	Err error
}
