// Package httpjson is the one JSON-over-HTTP exchange the lab's and the
// generator's clients share: a request with an optional JSON body, its
// answer read whole up to a limit, and that answer decoded. What a
// non-2xx answer means is each caller's to say (a refusal, a fault, an
// API's error envelope), so Do returns the answer as it came.
package httpjson

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
)

// Answer is an HTTP answer read whole.
type Answer struct {
	Code   int    // e.g. 200
	Status string // e.g. "200 OK"
	Body   []byte // at most the limit Do was given
}

// OK reports whether the answer is a success (2xx).
func (a Answer) OK() bool { return a.Code/100 == 2 }

// Decode decodes the answer's body, as JSON, into out.
func (a Answer) Decode(out any) error { return json.Unmarshal(a.Body, out) }

// Do sends method url through c with header (nil: none) and, when in is
// not nil, in encoded as JSON (Content-Type application/json), and reads
// at most limit bytes of the answer. Any status is an Answer. An error
// is a request that could not be made or sent (the Answer's Code 0), or
// an answer whose body could not be read to its end (Code set, Body what
// was read).
func Do(ctx context.Context, c *http.Client, method, url string, header http.Header, in any, limit int64) (Answer, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return Answer{}, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return Answer{}, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	return Answer{Code: resp.StatusCode, Status: resp.Status, Body: b}, err
}
