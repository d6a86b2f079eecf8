package live

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/orderlab/orderlab/services/internal/api"
	"github.com/orderlab/orderlab/services/internal/audit"
	"github.com/orderlab/orderlab/services/internal/knob"
	"github.com/orderlab/orderlab/services/internal/postgres"
)

// Parts registers how the shared parts follow their knobs: the API's
// per-request snapshot, the log level, the store's pool and leak, the
// audit delay. SHUTDOWN_TIMEOUT needs no hook: shutdown reads the set in
// force when it begins.
func Parts(live *Live, start api.Config, level *slog.LevelVar, apiLive *api.LiveConfig, store *postgres.Store, auditor *audit.Recorder) {
	// The servers' write timeout (and nbio's queue deadline) is derived
	// from REQUEST_TIMEOUT at start (app's apiLimits): a longer deadline would be
	// cut by it.
	startTimeout := start.RequestTimeout
	live.Check(func(next *knob.Set) error {
		if d := next.Duration("REQUEST_TIMEOUT"); d > startTimeout {
			return &knob.Error{Knob: "REQUEST_TIMEOUT", Value: d.String(), Reason: fmt.Sprintf(
				"at most %s live, the value at start: the HTTP server's write timeout follows it; restart to raise it", startTimeout)}
		}
		return nil
	}, "REQUEST_TIMEOUT")
	live.On(func(_ context.Context, next *knob.Set) error {
		c := APIConfig(next)
		c.Service = start.Service
		apiLive.Store(c)
		return nil
	}, apiKnobNames...)
	live.On(func(_ context.Context, next *knob.Set) error {
		level.Set(LogLevel(next.Text("LOG_LEVEL")))
		return nil
	}, "LOG_LEVEL")
	live.On(func(ctx context.Context, next *knob.Set) error {
		return store.SetPoolSize(ctx, next.Int("DB_MAX_CONNS"), next.Int("DB_MIN_CONNS"))
	}, "DB_MAX_CONNS", "DB_MIN_CONNS")
	live.On(func(_ context.Context, next *knob.Set) error {
		store.SetLeakEvery(next.Int("LEAK_EVERY"))
		return nil
	}, "LEAK_EVERY")
	live.On(func(_ context.Context, next *knob.Set) error {
		auditor.SetDelay(next.Duration("AUDIT_DELAY"))
		return nil
	}, "AUDIT_DELAY")
}

// APIConfig is the API's share of the knobs, read per request.
func APIConfig(s *knob.Set) api.Config {
	return api.Config{
		Service:          "orderlab-" + s.Model(),
		RequestTimeout:   s.Duration("REQUEST_TIMEOUT"),
		DBDelay:          s.Duration("DB_DELAY"),
		WorkDBDelay:      s.Duration("WORK_DB_DELAY"),
		WorkAPIDelay:     s.Duration("WORK_API_DELAY"),
		WorkCPURounds:    s.Int("WORK_CPU_ROUNDS"),
		APIWaitMode:      s.Text("API_WAIT_MODE"),
		BufferBytes:      s.Int("REQUEST_BUFFER_BYTES"),
		BufferPooled:     s.Bool("REQUEST_BUFFER_POOL"),
		HoldEarlyRetries: s.Bool("HOLD_EARLY_RETRIES"),
	}
}

// apiKnobNames are the knobs APIConfig reads.
var apiKnobNames = []string{"REQUEST_TIMEOUT", "DB_DELAY", "WORK_DB_DELAY", "WORK_API_DELAY", "WORK_CPU_ROUNDS",
	"API_WAIT_MODE", "REQUEST_BUFFER_BYTES", "REQUEST_BUFFER_POOL", "HOLD_EARLY_RETRIES"}

// LogLevel is LOG_LEVEL's level.
func LogLevel(s string) slog.Level {
	switch s {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
