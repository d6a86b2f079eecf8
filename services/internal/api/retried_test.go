package api

import (
	"net/http"
	"testing"
)

// A request that says it is a re-send is counted, refused (429) or not,
// and on a route without admission too; a first attempt, or a header that
// is no positive number, is not.
func TestRetriedRequestsAreCounted(t *testing.T) {
	m := &fakeModel{}
	m.full.Store(true) // every order is refused: a retry storm's answers
	ts, _, reg := testServer(t, m)
	for _, tc := range []struct {
		path, attempt string
		status        int
	}{
		{"/work/db", "", http.StatusTooManyRequests},
		{"/work/db", "1", http.StatusTooManyRequests},
		{"/work/db", "4", http.StatusTooManyRequests},
		{"/work/db", "0", http.StatusTooManyRequests},
		{"/work/db", "again", http.StatusTooManyRequests},
		{"/livez", "2", http.StatusOK},
	} {
		req, err := http.NewRequest(http.MethodGet, ts.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.attempt != "" {
			req.Header.Set(RetryAttemptHeader, tc.attempt)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("GET %s (%s %q) = %d, want %d", tc.path, RetryAttemptHeader, tc.attempt, resp.StatusCode, tc.status)
		}
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := -1.0 // not exported
	for _, f := range fams {
		if f.GetName() == "orderlab_http_retried_requests_total" {
			n = f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if n != 3 {
		t.Errorf("orderlab_http_retried_requests_total = %v, want 3 (attempts 1, 4 and 2)", n)
	}
}
