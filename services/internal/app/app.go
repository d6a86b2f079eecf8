// Package app owns what the three services share around their concurrency
// model: configuration from the environment, start-up (logger, metrics,
// tracing, Postgres, servers) and a graceful shutdown. A service's main
// passes its model in a Service and calls Run.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/orderlab/orderlab/services/internal/api"
	"github.com/orderlab/orderlab/services/internal/audit"
	"github.com/orderlab/orderlab/services/internal/httpserver"
	"github.com/orderlab/orderlab/services/internal/knob"
	"github.com/orderlab/orderlab/services/internal/live"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/overload"
	"github.com/orderlab/orderlab/services/internal/postgres"
	"github.com/orderlab/orderlab/services/internal/telemetry"
)

// Version is set at build time with -ldflags "-X ...app.Version=...".
var Version = "dev"

// Deps are what a model is built from, besides its knobs.
type Deps struct {
	Store    *postgres.Store
	Log      *slog.Logger
	Registry prometheus.Registerer
	Tracer   trace.TracerProvider
	// Audit performs the optional slow write after each order (AUDIT_DELAY);
	// the model decides how to schedule it.
	Audit *audit.Recorder
}

// Build builds a model from its knobs: at start, and again at every live
// change of one of the model's own knobs (live.Model).
type Build func(*knob.Set) (model.Model, error)

// Service describes one binary.
type Service struct {
	// Model names the concurrency model: unbounded, semaphore or pipeline;
	// it selects the knobs that apply (services/internal/knob).
	Model string
	// Start makes, once the store is open, what every generation of the
	// model shares (its metrics), and returns how to build one.
	Start func(Deps) (Build, error)
}

// Run is the whole life of a service: read the settings, start, serve until
// ctx ends or SIGINT/SIGTERM arrives, then drain and stop. It returns an
// error for a bad setting or a failed start; main turns that into exit 1.
func Run(ctx context.Context, svc Service, getenv func(string) string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Configuration: every bad variable is reported before anything starts.
	knobs, cfg, err := readKnobs(svc.Model, getenv)
	if err != nil {
		return fmt.Errorf("invalid configuration:\n%w", err)
	}

	// Logging, at a level that LOG_LEVEL changes live.
	var level slog.LevelVar
	level.Set(cfg.LogLevel)
	log := telemetry.NewLogger(stdout, &level, "orderlab-"+svc.Model)
	log.Info("starting", append([]any{"model", svc.Model, "version", Version}, knobs.LogAttrs()...)...)

	// The flight recorder: the last seconds of the execution trace, served
	// on the admin listener for when a pitfall shows. Without it the
	// service still runs.
	stopFlight, err := telemetry.StartFlightRecorder()
	if err != nil {
		log.Warn("no flight recorder", "err", err)
	}
	defer stopFlight()

	// Metrics and tracing.
	reg := telemetry.NewRegistry()
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "orderlab_service_info",
		Help:        "Which concurrency model and API HTTP server this process runs (always 1).",
		ConstLabels: prometheus.Labels{"model": svc.Model, "http_server": string(cfg.HTTPServer), "version": Version},
	}, func() float64 { return 1 }))
	liveKnobs, err := live.New(knobs, log, reg)
	if err != nil {
		return err
	}
	tp, err := telemetry.NewTracerProvider(ctx, cfg.Tracing)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			log.Warn("tracer shutdown", "err", err)
		}
	}()

	// Database: wait for it, migrate, open the instrumented pool.
	store, err := postgres.Open(ctx, postgres.Config{
		URL: cfg.DatabaseURL, MaxConns: int32(cfg.DBMaxConns), MinConns: int32(cfg.DBMinConns),
		StartupTimeout: cfg.StartupTimeout, ApplicationName: "orderlab-" + svc.Model, LeakEvery: cfg.LeakEvery,
	}, log, reg, tp)
	if err != nil {
		return err
	}
	defer store.Close()

	// The concurrency model, and the API in front of it.
	auditor, err := audit.New(cfg.AuditDelay, reg)
	if err != nil {
		return err
	}
	build, err := svc.Start(Deps{Store: store, Log: log, Registry: reg, Tracer: tp, Audit: auditor})
	if err != nil {
		return fmt.Errorf("start %s model: %w", svc.Model, err)
	}
	m, err := live.NewModel(build, knobs, log, func() time.Duration { return liveKnobs.Current().Duration("SHUTDOWN_TIMEOUT") })
	if err != nil {
		return fmt.Errorf("build %s model: %w", svc.Model, err)
	}
	liveKnobs.On(func(_ context.Context, next *knob.Set) error { return m.Swap(next) }, modelKnobs(svc.Model)...)
	serving := false
	defer func() {
		if !serving { // a failed start: stop the model's goroutines
			cctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
			defer cancel()
			_ = m.Close(cctx)
			_ = auditor.Wait(cctx)
		}
	}()
	var ready atomic.Bool
	apiLive := api.NewLiveConfig(cfg.API)
	handler, err := api.NewServer(apiLive, m, store, ready.Load, log, reg, tp)
	if err != nil {
		return err
	}
	live.Parts(liveKnobs, cfg.API, &level, apiLive, store, auditor)

	// Servers: the API (net/http or nbio, HTTP_SERVER), and an admin
	// listener for /metrics, pprof and the flight recorder (always net/http).
	apiLn, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("HTTP_ADDR: %w", err)
	}
	adminLn, err := net.Listen("tcp", cfg.AdminAddr)
	if err != nil {
		_ = apiLn.Close()
		return fmt.Errorf("ADMIN_ADDR: %w", err)
	}
	apiSrv, err := httpserver.New(httpserver.Config{Kind: cfg.HTTPServer, Limits: apiLimits(cfg), HandlerPool: cfg.HandlerPool,
		BodyTooLarge: api.BodyTooLarge(), ConnContext: overload.WithClient, Log: log, Registry: reg}, apiLn, handler)
	if err != nil {
		_ = apiLn.Close()
		_ = adminLn.Close()
		return err
	}
	adminSrv := &http.Server{
		Handler:           adminHandler(reg, liveKnobs, cfg.AdminToken, store, log),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 2)
	go func() { errc <- apiSrv.Serve() }()
	go func() { errc <- serve(adminSrv, adminLn) }()
	serving = true
	ready.Store(true)
	log.Info("serving", "http_addr", apiSrv.Addr().String(), "http_server", cfg.HTTPServer, "admin_addr", adminLn.Addr().String())

	// Wait for a signal, or a server that died.
	var serveErr error
	select {
	case <-ctx.Done():
		stop() // a second signal now ends the process at once
		log.Info("shutdown requested")
	case serveErr = <-errc:
		log.Error("server failed", "err", serveErr)
	}

	// Shutdown: no knob changes from here (one in progress completes first),
	// stop taking requests, let in-flight ones finish, drain the model's
	// queues, then close the pool (deferred above).
	start := time.Now()
	liveKnobs.Close()
	ready.Store(false)
	sctx, cancel := context.WithTimeout(context.Background(), liveKnobs.Current().Duration("SHUTDOWN_TIMEOUT"))
	defer cancel()
	var errs []error
	if err := apiSrv.Shutdown(sctx); err != nil {
		errs = append(errs, fmt.Errorf("http shutdown: %w", err))
	}
	if err := m.Close(sctx); err != nil {
		errs = append(errs, fmt.Errorf("model drain: %w", err))
	}
	if err := auditor.Wait(sctx); err != nil {
		errs = append(errs, err)
	}
	if err := adminSrv.Shutdown(sctx); err != nil {
		errs = append(errs, fmt.Errorf("admin shutdown: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		log.Error("shutdown incomplete", "err", err, "took", time.Since(start).String())
		return errors.Join(serveErr, err)
	}
	log.Info("stopped", "took", time.Since(start).String())
	return serveErr
}

// apiLimits are the API listener's timeouts and sizes, the same for both
// servers (docs/reference/http-servers.md). The body bound nbio buffers is above
// the API's own (api.MaxBodyBytes), so that the API answers 413 as it does
// under net/http.
func apiLimits(cfg Config) httpserver.Limits {
	return httpserver.Limits{
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      cfg.API.RequestTimeout + 10*time.Second,
		RequestTimeout:    cfg.API.RequestTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		MaxBufferedBody:   4 * api.MaxBodyBytes,
		MaxUnsentBytes:    1 << 20,
	}
}

func serve(s *http.Server, ln net.Listener) error {
	if err := s.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// adminHandler serves /metrics (OpenMetrics with exemplars when asked, and
// protobuf for native histograms), the knob API (live.Routes), pprof and
// the flight recorder, away from the API listener and from
// http.DefaultServeMux.
func adminHandler(reg *prometheus.Registry, liveKnobs *live.Live, token string, store *postgres.Store, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	live.Routes(mux, liveKnobs, token, store, log)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}))
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	mux.Handle("GET "+telemetry.FlightRecorderPath, telemetry.FlightRecorderHandler(log))
	return mux
}

// modelKnobs are the knobs of model's own (LIMIT..., WORKERS...): a change
// of any builds a new generation of the model (live.Model).
func modelKnobs(model string) []string {
	var names []string
	for _, k := range knob.All {
		if k.Live && len(k.Models) > 0 && k.AppliesTo(model) {
			names = append(names, k.Name)
		}
	}
	return names
}
