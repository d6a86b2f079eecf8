package attack

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Target is what every request of a run asks for.
type Target struct {
	Method string      // GET or POST; empty means GET
	URL    string      // absolute http:// URL; its query passes through unchanged
	Header http.Header // extra request headers, sent as given
	// Body, when set, writes the body of each request (POST). Each request
	// also carries a unique Idempotency-Key header.
	Body BodyFunc
}

// BodyFunc appends the body of request seq to dst and returns the result.
// r is the calling worker's own random source.
type BodyFunc func(dst []byte, r *rand.Rand, seq uint64) []byte

// OrderBody writes an order for POST /orders: a random customer among 10,000
// and 1-5 items, each with a random SKU, quantity and unit price.
func OrderBody(dst []byte, r *rand.Rand, _ uint64) []byte {
	dst = append(dst, `{"customer_id":"c-`...)
	dst = strconv.AppendInt(dst, int64(r.IntN(10000)+1), 10)
	dst = append(dst, `","items":[`...)
	for i, n := 0, r.IntN(5)+1; i < n; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"sku":"SKU-`...)
		dst = strconv.AppendInt(dst, int64(r.IntN(500)+1), 10)
		dst = append(dst, `","quantity":`...)
		dst = strconv.AppendInt(dst, int64(r.IntN(5)+1), 10)
		dst = append(dst, `,"unit_price_cents":`...)
		dst = strconv.AppendInt(dst, int64(r.IntN(9901)+99), 10)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// BodyFor is the body loadtest sends with method: a generated order
// (OrderBody) for POST, none for GET.
func BodyFor(method string) BodyFunc {
	if method == "POST" {
		return OrderBody
	}
	return nil
}

// ParseURL checks that raw is an absolute http URL with a host and returns it.
// Unless allowRemote is set, the host must be a loopback address or
// "localhost": loadtest is meant for a lab on one machine.
func ParseURL(raw string, allowRemote bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("%q: scheme must be http", raw)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("%q: no host", raw)
	}
	if !allowRemote && !IsLoopback(u.Hostname()) {
		return nil, fmt.Errorf("%q: host is not loopback (127.0.0.0/8, ::1, localhost)", raw)
	}
	return u, nil
}

// IsLoopback reports whether host names the loopback interface.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
