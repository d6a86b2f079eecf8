package app

import (
	"errors"
	"log/slog"
	"time"

	"github.com/orderlab/orderlab/services/internal/api"
	"github.com/orderlab/orderlab/services/internal/httpserver"
	"github.com/orderlab/orderlab/services/internal/knob"
	"github.com/orderlab/orderlab/services/internal/live"
	"github.com/orderlab/orderlab/services/internal/telemetry"
)

// Config holds what start-up reads from the knobs (services/internal/knob
// declares them all): the restart-only settings, and the start values of
// the live ones.
type Config struct {
	HTTPAddr        string
	AdminAddr       string
	AdminToken      string          // ADMIN_TOKEN: PATCH /knobs needs it; empty: read-only
	HTTPServer      httpserver.Kind // the API listener's server (HTTP_SERVER)
	HandlerPool     int             // nbio's handler goroutines at most (HTTP_HANDLER_POOL; 0: from the open-files limit, httpserver)
	DatabaseURL     string
	DBMaxConns      int
	DBMinConns      int
	StartupTimeout  time.Duration
	ShutdownTimeout time.Duration
	AuditDelay      time.Duration
	// LeakEvery: every LeakEvery-th database call keeps its connection
	// (LEAK_EVERY, 0: off; docs/scenarios/connection-leak.md).
	LeakEvery int
	LogLevel  slog.Level
	Tracing   telemetry.Tracing // OTEL_* (telemetry.ReadTracing)
	API       api.Config
}

// readKnobs reads every knob of model from getenv, and the tracer's
// settings, reporting every bad variable at once.
func readKnobs(model string, getenv func(string) string) (*knob.Set, Config, error) {
	s, err := knob.FromEnv(model, getenv)
	tracing, terr := telemetry.ReadTracing(getenv, "orderlab-"+model)
	if err := errors.Join(err, terr); err != nil {
		return nil, Config{}, err
	}
	c := loadConfig(s)
	c.Tracing = tracing
	return s, c, nil
}

func loadConfig(s *knob.Set) Config {
	return Config{
		HTTPAddr:        s.Text("HTTP_ADDR"),
		AdminAddr:       s.Text("ADMIN_ADDR"),
		AdminToken:      s.Text("ADMIN_TOKEN"),
		HTTPServer:      httpserver.Kind(s.Text("HTTP_SERVER")),
		HandlerPool:     s.Int("HTTP_HANDLER_POOL"),
		DatabaseURL:     s.Text("DATABASE_URL"),
		DBMaxConns:      s.Int("DB_MAX_CONNS"),
		DBMinConns:      s.Int("DB_MIN_CONNS"),
		StartupTimeout:  s.Duration("STARTUP_TIMEOUT"),
		ShutdownTimeout: s.Duration("SHUTDOWN_TIMEOUT"),
		AuditDelay:      s.Duration("AUDIT_DELAY"),
		LeakEvery:       s.Int("LEAK_EVERY"),
		LogLevel:        live.LogLevel(s.Text("LOG_LEVEL")),
		API:             live.APIConfig(s),
	}
}
