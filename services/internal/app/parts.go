package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/orderlab/orderlab/services/internal/api"
	"github.com/orderlab/orderlab/services/internal/audit"
	"github.com/orderlab/orderlab/services/internal/knob"
	"github.com/orderlab/orderlab/services/internal/postgres"
)

// liveParts registers how the shared parts follow their knobs: the API's
// per-request snapshot, the log level, the store's pool and leak, the
// audit delay. SHUTDOWN_TIMEOUT needs no hook: shutdown reads the set in
// force when it begins.
func liveParts(live *Live, cfg Config, level *slog.LevelVar, apiLive *api.LiveConfig, store *postgres.Store, auditor *audit.Recorder) {
	// The servers' write timeout (and nbio's queue deadline) is derived
	// from REQUEST_TIMEOUT at start (apiLimits): a longer deadline would be
	// cut by it.
	startTimeout := cfg.API.RequestTimeout
	live.Check(func(next *knob.Set) error {
		if d := next.Duration("REQUEST_TIMEOUT"); d > startTimeout {
			return &knob.Error{Knob: "REQUEST_TIMEOUT", Value: d.String(), Reason: fmt.Sprintf(
				"at most %s live, the value at start: the HTTP server's write timeout follows it; restart to raise it", startTimeout)}
		}
		return nil
	}, "REQUEST_TIMEOUT")
	live.On(func(_ context.Context, next *knob.Set) error {
		c := apiConfig(next)
		c.Service = cfg.API.Service
		apiLive.Store(c)
		return nil
	}, apiKnobNames...)
	live.On(func(_ context.Context, next *knob.Set) error {
		level.Set(logLevel(next.Text("LOG_LEVEL")))
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
