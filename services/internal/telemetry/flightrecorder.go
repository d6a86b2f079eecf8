package telemetry

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/trace"
	"sync"
	"time"
)

// FlightRecorderPath is where the admin listener serves the flight
// recorder's window (docs/metrics.md, "Inside the process").
const FlightRecorderPath = "/debug/flightrecorder"

// flightWindow is what the recorder keeps: at least the last MinAge of the
// execution trace, unless that is more than MaxBytes. Ten seconds covers a
// pitfall that a scrape (every 5 s in the lab) has just shown; the bound
// keeps a busy service's window, held in memory, to a few megabytes.
var flightWindow = trace.FlightRecorderConfig{MinAge: 10 * time.Second, MaxBytes: 16 << 20}

// flight is the process's one flight recorder: runtime/trace allows a
// single one at a time, and several services may run in one process (the
// services' tests start them side by side), so they share it.
var flight struct {
	mu    sync.Mutex
	users int
	rec   *trace.FlightRecorder
	err   error // why it did not start, for the handler to say
	snap  sync.Mutex
}

// StartFlightRecorder starts the process's flight recorder, or joins it
// if a service of this process started it already; stop leaves it, and
// the last service to leave stops it. The execution tracer it runs costs a
// few percent of CPU (docs/metrics.md says how much, measured). It fails
// only when runtime/trace refuses (another flight recorder of the process,
// not this package's, is active); the service then runs without one and
// FlightRecorderHandler answers 503 saying why.
func StartFlightRecorder() (stop func(), err error) {
	flight.mu.Lock()
	defer flight.mu.Unlock()
	if flight.users == 0 {
		rec := trace.NewFlightRecorder(flightWindow)
		if err := rec.Start(); err != nil {
			flight.err = err
			return func() {}, fmt.Errorf("flight recorder: %w", err)
		}
		flight.rec, flight.err = rec, nil
	}
	flight.users++
	var once sync.Once
	return func() { once.Do(leaveFlightRecorder) }, nil
}

func leaveFlightRecorder() {
	flight.mu.Lock()
	defer flight.mu.Unlock()
	flight.users--
	if flight.users == 0 {
		flight.rec.Stop()
		flight.rec, flight.err = nil, errors.New("stopped: the service is shutting down")
	}
}

// FlightRecorderHandler serves GET FlightRecorderPath: the recorder's
// window as a trace file (go tool trace FILE). Snapshots are taken one at
// a time (runtime/trace allows no other) into memory, so that a slow
// client holds no one up and an error is still a status, not a truncated
// file.
func FlightRecorderHandler(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		err := snapshot(&buf)
		if err != nil {
			log.Warn("flight recorder snapshot", "err", err)
			http.Error(w, "no flight recorder window: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="flightrecorder-%s.trace"`,
			time.Now().UTC().Format("20060102T150405Z")))
		_, _ = w.Write(buf.Bytes())
	})
}

func snapshot(buf *bytes.Buffer) error {
	flight.snap.Lock()
	defer flight.snap.Unlock()
	flight.mu.Lock()
	rec, why := flight.rec, flight.err
	flight.mu.Unlock()
	if rec == nil {
		if why == nil {
			why = errors.New("not started")
		}
		return why
	}
	// The recorder may stop between the two locks (the last service
	// leaving): WriteTo then fails, and the client gets a 503.
	_, err := rec.WriteTo(buf)
	return err
}
