package apptest

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// AdmissionBeforeDecode checks that a model decides admission before it
// reads a request: with admission full (fill returns once it is, and its
// release frees it again), a malformed body, an oversized body, a wrong
// content type and a bad query parameter are each a 429 with Retry-After,
// not the 400/413/415 that reading them would give, and nothing is stored.
// Then, with room again, requests that fail validation give their admission
// back: a run of them leaves room for a valid order.
func AdmissionBeforeDecode(t *testing.T, inst *Instance, fill func() (release func())) {
	t.Helper()
	release := fill()
	bad := []struct {
		name, path, contentType string
		body                    []byte
	}{
		{"malformed JSON", "/orders", "application/json", []byte(`{"customer_id": "x", "items": [`)},
		{"oversized body", "/orders", "application/json", bytes.Repeat([]byte(" "), 100<<10)},
		{"wrong content type", "/orders", "text/plain", []byte(OrderBody("admission", 1))},
		{"bad db_delay", "/orders?db_delay=forever", "application/json", []byte(OrderBody("admission", 1))},
	}
	for _, b := range bad {
		r := inst.MustDo(http.MethodPost, b.path, b.contentType, b.body, nil)
		if r.Status != http.StatusTooManyRequests {
			t.Errorf("%s with admission full: %d %s, want 429 before the body is read", b.name, r.Status, r.Body)
			continue
		}
		if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 {
			t.Errorf("%s: Retry-After = %q, want whole seconds >= 1", b.name, r.Header.Get("Retry-After"))
		}
		if !strings.Contains(string(r.Body), "#problem-overloaded") {
			t.Errorf("%s: body = %s", b.name, r.Body)
		}
	}
	fams := inst.Metrics()
	for _, code := range []string{"400", "413", "415"} {
		if n := fams.Count("orderlab_http_request_duration_seconds", map[string]string{"route": "/orders", "code": code}); n != 0 {
			t.Errorf("%d answers %s on /orders while admission was full: the body was read first", n, code)
		}
	}
	release()

	for i := range 5 {
		r := inst.MustDo(http.MethodPost, "/orders", "application/json", []byte(`{"customer_id": "", "items": []}`), nil)
		if r.Status != http.StatusBadRequest {
			t.Fatalf("invalid order %d: %d %s, want 400", i, r.Status, r.Body)
		}
	}
	r, err := inst.PostOrder("/orders", OrderBody("after-invalid", 1), "")
	if err != nil || r.Status != http.StatusCreated {
		t.Fatalf("valid order after five invalid ones: %v %d %s; want 201 (validation failures give admission back)", err, r.Status, r.Body)
	}
	if n := inst.CountRows("SELECT count(*) FROM orders WHERE customer_id = 'admission'"); n != 0 {
		t.Errorf("%d orders stored from rejected requests", n)
	}
}
