package app_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/orderlab/orderlab/services/internal/apptest"
)

// The flight recorder's window is on the admin listener, beside pprof, and
// on the API listener neither is.
func TestFlightRecorderOnTheAdminListenerOnly(t *testing.T) {
	inst := apptest.Start(t, unbounded, nil)
	inst.MustDo(http.MethodGet, "/work/cpu", "", nil, nil) // something in the window
	r := inst.Admin(http.MethodGet, "/debug/flightrecorder", "", "")
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/octet-stream" ||
		r.Header.Get("Content-Disposition") == "" || !bytes.HasPrefix(r.Body, []byte("go 1.")) {
		t.Errorf("admin GET /debug/flightrecorder: %d, %v, %d bytes starting %q; want a trace file",
			r.Status, r.Header, len(r.Body), r.Body[:min(len(r.Body), 16)])
	}
	for _, path := range []string{"/debug/flightrecorder", "/debug/pprof/"} {
		if r := inst.MustDo(http.MethodGet, path, "", nil, nil); r.Status != http.StatusNotFound {
			t.Errorf("API GET %s: %d, want 404: debugging stays on the admin listener", path, r.Status)
		}
	}
}
