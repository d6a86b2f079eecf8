package api

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/orderlab/orderlab/services/internal/order"
)

// The query string and the path's id are parsed here, once, and strictly
// (docs/reference/api.md, Accepted input): a route takes only the parameters it
// reads, each at most once, each from a small ASCII alphabet; a 400 names
// the parameter. Nothing is read leniently and nothing is normalised.

// MaxQueryBytes bounds a request's raw query string.
const MaxQueryBytes = 256

// maxDurationParam bounds a duration parameter's length: "10s" and
// "9999.999999ms" fit.
const maxDurationParam = 32

// query holds a request's query parameters, each given at most once.
type query map[string]string

// parseQuery parses the raw query string, which may hold only the
// parameters allowed, each once; a problem is a 400 naming the parameter.
func parseQuery(raw string, allowed ...string) (query, error) {
	if raw == "" {
		return query{}, nil
	}
	if len(raw) > MaxQueryBytes {
		return nil, invalid("query", fmt.Sprintf("must be at most %d bytes", MaxQueryBytes))
	}
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return nil, invalid("query", "is not a valid query string (name=value pairs joined by &, %-escapes)")
	}
	q := make(query, len(vals))
	for _, name := range slices.Sorted(maps.Keys(vals)) { // the same problem first, every time
		vs := vals[name]
		known := false
		for _, a := range allowed {
			known = known || name == a
		}
		switch {
		case !known:
			field, detail := name, "is not a parameter of this route"
			if !paramName(name) {
				field, detail = "query", "holds a parameter name that is not a lower-case ASCII word"
			}
			if len(allowed) > 0 {
				detail += fmt.Sprintf(" (it takes %v)", allowed)
			}
			return nil, invalid(field, detail)
		case len(vs) != 1:
			return nil, invalid(name, "must be given at most once")
		}
		q[name] = vs[0]
	}
	return q, nil
}

// duration reads the optional Go duration name ("20ms"), between 0 and
// MaxDelay, or def when absent. Its alphabet is ASCII digits, '.' and the
// units ns, us, ms, s, m, h: no sign, no space, no µ.
func (q query) duration(name string, def time.Duration) (time.Duration, error) {
	s, ok := q[name]
	if !ok {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if len(s) > maxDurationParam || !durationAlphabet(s) || err != nil || d < 0 || d > MaxDelay {
		return 0, invalid(name, fmt.Sprintf("must be a duration between 0s and %s, such as 20ms (digits, '.', units ns, us, ms, s, m, h)", MaxDelay))
	}
	return d, nil
}

// paramName: what a parameter's name may be to be quoted back in a problem.
func paramName(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; (b < 'a' || b > 'z') && b != '_' {
			return false
		}
	}
	return true
}

func durationAlphabet(s string) bool {
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b >= '0' && b <= '9', b == '.', b == 'n', b == 'u', b == 'm', b == 's', b == 'h':
		default:
			return false
		}
	}
	return true
}

// integer reads the optional decimal integer name, between lo and hi, or
// def when absent.
func (q query) integer(name string, def, lo, hi int64) (int64, error) {
	s, ok := q[name]
	if !ok {
		return def, nil
	}
	n, ok := decimal(s)
	if !ok || n < lo || n > hi {
		return 0, invalid(name, fmt.Sprintf("must be an integer between %d and %d, in decimal digits without sign or leading zero", lo, hi))
	}
	return n, nil
}

// pathID reads the id of /orders/{id}: 1 to 19 decimal digits without a
// leading zero, at most the largest int64.
func pathID(s string) (int64, error) {
	n, ok := decimal(s)
	if !ok || n < 1 {
		return 0, invalid("id", "must be a positive integer of 1 to 19 decimal digits, without sign or leading zero")
	}
	return n, nil
}

// decimal parses 1 to 19 ASCII digits without a leading zero (but "0"),
// within int64.
func decimal(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 19 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// idempotencyKey reads the optional Idempotency-Key header: absent, or
// exactly one non-empty value of printable ASCII without spaces, at most
// order.MaxIdempotencyKey bytes.
func idempotencyKey(h http.Header) (string, error) {
	vs := h.Values("Idempotency-Key")
	switch {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1:
		return "", invalid("Idempotency-Key", "must be sent once")
	case vs[0] == "":
		return "", invalid("Idempotency-Key", "must not be empty: send a key, or no header")
	}
	if err := order.ValidateIdempotencyKey(vs[0]); err != nil {
		return "", err // an *order.ValidationError: a 400 naming the header
	}
	return vs[0], nil
}
