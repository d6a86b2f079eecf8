package telemetry

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// getFlightRecorder GETs the handler's window.
func getFlightRecorder(t *testing.T) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	FlightRecorderHandler(slog.New(slog.NewTextHandler(io.Discard, nil))).
		ServeHTTP(w, httptest.NewRequest(http.MethodGet, FlightRecorderPath, nil))
	return w
}

// traceMagic is the header of an execution trace since Go 1.22's format:
// "go 1.26 trace" padded with NULs to 16 bytes.
var traceMagic = regexp.MustCompile(`^go 1\.\d+ trace\x00+`)

// A GET is a trace file that Go's own trace tool reads: go tool trace
// parses it whole (-d=parsed prints every event it parsed).
func TestFlightRecorderServesATrace(t *testing.T) {
	stop, err := StartFlightRecorder()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	w := getFlightRecorder(t)
	body := w.Body.Bytes()
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/octet-stream" ||
		!regexp.MustCompile(`^attachment; filename="flightrecorder-\d{8}T\d{6}Z\.trace"$`).MatchString(w.Header().Get("Content-Disposition")) {
		t.Fatalf("GET %s: %d, headers %v", FlightRecorderPath, w.Code, w.Header())
	}
	if !traceMagic.Match(body) {
		t.Fatalf("GET %s: %d bytes, not an execution trace: %q...", FlightRecorderPath, len(body), body[:min(len(body), 32)])
	}
	file := filepath.Join(t.TempDir(), "window.trace")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "trace", "-d=parsed", file).CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("GoID=")) {
		t.Fatalf("go tool trace -d=parsed %s (%d bytes): %v\n%.2000s", file, len(body), err, out)
	}
}

// Two services of one process share the recorder: it runs until the last
// leaves, and then a GET says why there is no window, with a 503.
func TestFlightRecorderIsSharedByTheProcess(t *testing.T) {
	stopA, err := StartFlightRecorder()
	if err != nil {
		t.Fatal(err)
	}
	stopB, err := StartFlightRecorder()
	if err != nil {
		t.Fatalf("a second service of the process: %v", err)
	}
	stopA()
	stopA() // a stop is once
	if w := getFlightRecorder(t); w.Code != http.StatusOK {
		t.Fatalf("one service left, one running: %d %s", w.Code, w.Body)
	}
	stopB()
	w := getFlightRecorder(t)
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "shutting down") {
		t.Errorf("every service gone: %d %q, want a 503 saying why", w.Code, w.Body)
	}
}
