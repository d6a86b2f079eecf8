package api

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/orderlab/orderlab/services/internal/order"
)

// Fuzz targets of the API's edge (docs/reference/api.md, Accepted input): `make fuzz`
// runs each for FUZZTIME; the seeds are under testdata/fuzz/<Target>/.

func fuzzContext(method, target string) (*gin.Context, *httptest.ResponseRecorder) {
	w := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(w)
	c.Request = httptest.NewRequest(method, "/", nil)
	c.Request.URL = &url.URL{Path: "/", RawQuery: target}
	return c, w
}

// checkProblem: a rejection err is answered as a problem+json 400 that
// names a field.
func checkProblem(t *testing.T, err error, input any) {
	t.Helper()
	c, w := fuzzContext(http.MethodGet, "")
	writeError(c, slog.New(slog.NewTextHandler(io.Discard, nil)), err)
	if w.Code != http.StatusBadRequest || w.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("%q: rejected with %d %q, want a 400 problem", input, w.Code, w.Header().Get("Content-Type"))
	}
	var p Problem
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || len(p.Errors) == 0 || p.Errors[0].Field == "" {
		t.Fatalf("%q: problem %s (%v): want errors naming a field", input, w.Body.Bytes(), err)
	}
}

// FuzzDecode: the order decoder and validation never panic; a rejection
// is a 400 naming a field; an accepted order holds exactly what was sent:
// no U+FFFD that was not in the body, unescaped strings byte for byte, and
// it survives its own encoding unchanged.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"customer_id":"c-1","items":[{"sku":"A-1","quantity":2,"unit_price_cents":1250}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := decodeOrderBody(body)
		if err == nil {
			err = in.Validate()
		}
		if err != nil {
			checkProblem(t, err, body)
			return
		}
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Fatalf("accepted %q: not valid UTF-8 JSON", body)
		}
		texts := []string{in.CustomerID}
		for _, it := range in.Items {
			texts = append(texts, it.SKU)
		}
		for _, s := range texts {
			if strings.ContainsRune(s, utf8.RuneError) && !bytes.Contains(body, []byte("\uFFFD")) &&
				!bytes.Contains(bytes.ToLower(body), []byte(`\ufffd`)) {
				t.Fatalf("accepted %q as %q: a U+FFFD that was not sent", body, s)
			}
			if !bytes.Contains(body, []byte(`\`)) && !bytes.Contains(body, []byte(`"`+s+`"`)) {
				t.Fatalf("accepted %q as %q: not what was sent", body, s)
			}
		}
		again, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeOrderBody(again)
		if err != nil || back.CustomerID != in.CustomerID || len(back.Items) != len(in.Items) {
			t.Fatalf("%q re-encoded as %s decodes to %+v (%v)", body, again, back, err)
		}
		for i := range in.Items {
			if back.Items[i] != in.Items[i] {
				t.Fatalf("%q: item %d re-decoded as %+v, want %+v", body, i, back.Items[i], in.Items[i])
			}
		}
	})
}

// FuzzQueryParams: the query and id parsers never panic; a rejection is a
// 400 naming the parameter; an accepted value is the one sent, each
// parameter once, an integer spelled exactly as its decimal form.
func FuzzQueryParams(f *testing.F) {
	f.Add("delay=20ms&rounds=5000", "42")
	f.Fuzz(func(t *testing.T, raw, id string) {
		q, err := parseQuery(raw, "delay", "rounds")
		if err != nil {
			checkProblem(t, err, raw)
		} else {
			vals, err := url.ParseQuery(raw)
			if err != nil || len(raw) > MaxQueryBytes {
				t.Fatalf("accepted query %q: %v", raw, err)
			}
			for k, vs := range vals {
				if len(vs) != 1 || q[k] != vs[0] {
					t.Fatalf("query %q: %s=%q parsed as %q", raw, k, vs, q[k])
				}
			}
			d, err := q.duration("delay", 7*time.Millisecond)
			s, present := q["delay"]
			switch {
			case err != nil:
				checkProblem(t, err, raw)
			case !present && d != 7*time.Millisecond:
				t.Fatalf("query %q: default delay %s", raw, d)
			case present:
				want, err := time.ParseDuration(s)
				if err != nil || want != d || d < 0 || d > MaxDelay || !durationAlphabet(s) {
					t.Fatalf("query %q: delay %q accepted as %s", raw, s, d)
				}
			}
			n, err := q.integer("rounds", 5, 1, MaxCPURounds)
			s, present = q["rounds"]
			switch {
			case err != nil:
				checkProblem(t, err, raw)
			case present && (strconv.FormatInt(n, 10) != s || n < 1 || n > MaxCPURounds):
				t.Fatalf("query %q: rounds %q accepted as %d", raw, s, n)
			}
		}
		if n, err := pathID(id); err != nil {
			checkProblem(t, err, id)
		} else if strconv.FormatInt(n, 10) != id || n < 1 {
			t.Fatalf("id %q accepted as %d", id, n)
		}
	})
}

// FuzzWriteProblem: any problem renders as problem+json with its status,
// and decodes back to what was written.
func FuzzWriteProblem(f *testing.F) {
	f.Add("https://example.com/problem", "Invalid request", "customer_id: is required", "customer_id", "is required", uint16(400), 1.5)
	f.Fuzz(func(t *testing.T, typ, title, detail, field, fieldDetail string, status uint16, waited float64) {
		p := Problem{Type: typ, Title: title, Status: 400 + int(status)%200, Detail: detail,
			Errors: []order.FieldError{{Field: field, Detail: fieldDetail}}, WaitedSeconds: &waited}
		c, w := fuzzContext(http.MethodGet, "")
		writeProblem(c, p)
		if w.Code != p.Status || w.Header().Get("Content-Type") != "application/problem+json" || !c.IsAborted() {
			t.Fatalf("wrote %d %q", w.Code, w.Header().Get("Content-Type"))
		}
		var back Problem
		if err := json.Unmarshal(w.Body.Bytes(), &back); err != nil {
			t.Fatalf("%+v rendered as %q: %v", p, w.Body.Bytes(), err)
		}
		if back.Status != p.Status || len(back.Errors) != 1 {
			t.Fatalf("%+v came back as %+v", p, back)
		}
		if p.Type == "" {
			p.Type = "about:blank"
		}
		for _, pair := range [][2]string{{p.Type, back.Type}, {title, back.Title}, {detail, back.Detail},
			{field, back.Errors[0].Field}, {fieldDetail, back.Errors[0].Detail}} {
			if utf8.ValidString(pair[0]) && pair[0] != pair[1] {
				t.Fatalf("wrote %q, read back %q", pair[0], pair[1])
			}
		}
		switch {
		case math.IsInf(waited, 0) || math.IsNaN(waited):
			if back.WaitedSeconds != nil {
				t.Fatalf("waited %v rendered as %v", waited, *back.WaitedSeconds)
			}
		case back.WaitedSeconds == nil || *back.WaitedSeconds != waited:
			t.Fatalf("waited %v came back as %v", waited, back.WaitedSeconds)
		}
	})
}
