package local

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/orderlab/orderlab/internal/proc"
)

// Service is one running service process (its Name, Log, Stop are the
// process's).
type Service struct {
	*proc.Process
	URL        string // API base, e.g. http://127.0.0.1:40123
	MetricsURL string // http://127.0.0.1:40124/metrics
	AdminURL   string // the admin listener: http://127.0.0.1:40124 (GET/PATCH /knobs)
}

// start launches bin with env on two free loopback ports, its output
// appended to log, and returns once it answers /readyz, or an error when it
// exits or ready passes first.
func start(ctx context.Context, name, bin, dbURL string, env map[string]string, log string, ready time.Duration) (*Service, error) {
	addrs, err := proc.LoopbackAddrs(2)
	if err != nil {
		return nil, err
	}
	httpAddr, adminAddr := addrs[0], addrs[1]
	vars := append(proc.BaseEnv(), "LOG_LEVEL=warn", "DATABASE_URL="+dbURL, "HTTP_ADDR="+httpAddr, "ADMIN_ADDR="+adminAddr)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		vars = append(vars, k+"="+env[k])
	}
	p, err := proc.Start(name, bin, nil, vars, log)
	if err != nil {
		return nil, err
	}
	s := &Service{Process: p, URL: "http://" + httpAddr, MetricsURL: "http://" + adminAddr + "/metrics", AdminURL: "http://" + adminAddr}
	if err := p.WaitReady(ctx, s.URL+"/readyz", ready); err != nil {
		_ = p.Stop(5 * time.Second)
		return nil, fmt.Errorf("%w (log %s)", err, log)
	}
	return s, nil
}

// binPath is dir/name, checked to exist.
func binPath(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("service binary %s: %w (run make build)", p, err)
	}
	return p, nil
}
