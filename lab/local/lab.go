package local

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"
)

// Config says which services to run and how.
type Config struct {
	BinDir   string            // holds the built services (make build: ./bin)
	Services []string          // e.g. unbounded, semaphore, pipeline
	Env      map[string]string // every service gets it at start
	Database string            // URL of the scenario's database
	LogDir   string            // each service's stdout and stderr go to LogDir/<name>.log
	// Replicas of each service (default 1) run side by side, named
	// <name>-1, <name>-2, ... (docs/scenarios: too-many-clients).
	Replicas int
	// AdminToken is every service's ADMIN_TOKEN (PATCH /knobs on its
	// AdminURL); empty: their knobs are read-only.
	AdminToken string
	// Ready bounds the wait for /readyz (default 30 s); Grace the drain
	// on Stop (default 15 s) before the process is killed.
	Ready, Grace time.Duration
}

// Lab is a set of running services. Stop it.
type Lab struct {
	Services []*Service
	cfg      Config
}

// Start launches every service in cfg in turn, each ready before the next
// starts (they migrate the same database under an advisory lock).
func Start(ctx context.Context, cfg Config) (*Lab, error) {
	if cfg.Ready <= 0 {
		cfg.Ready = 30 * time.Second
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 15 * time.Second
	}
	if err := os.MkdirAll(cfg.LogDir, 0o755); err != nil {
		return nil, err
	}
	l := &Lab{cfg: cfg}
	for _, name := range cfg.Services {
		bin, err := binPath(cfg.BinDir, name)
		if err != nil {
			return nil, errors.Join(err, l.Stop())
		}
		for r := range max(1, cfg.Replicas) {
			label := name
			if cfg.Replicas > 1 {
				label = fmt.Sprintf("%s-%d", name, r+1)
			}
			s, err := start(ctx, label, bin, cfg.Database, withToken(cfg.Env, cfg.AdminToken), filepath.Join(cfg.LogDir, label+".log"), cfg.Ready)
			if err != nil {
				return nil, errors.Join(err, l.Stop())
			}
			l.Services = append(l.Services, s)
		}
	}
	return l, nil
}

// Stop terminates every service (SIGTERM, then SIGKILL after the grace
// period).
func (l *Lab) Stop() error {
	var errs []error
	for _, s := range l.Services {
		errs = append(errs, s.Stop(l.cfg.Grace))
	}
	l.Services = nil
	return errors.Join(errs...)
}

// withToken is env with ADMIN_TOKEN set to token, when there is one.
func withToken(env map[string]string, token string) map[string]string {
	if token == "" {
		return env
	}
	out := maps.Clone(env)
	if out == nil {
		out = map[string]string{}
	}
	out["ADMIN_TOKEN"] = token
	return out
}
