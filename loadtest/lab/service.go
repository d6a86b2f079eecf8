package lab

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// Service is one running service process.
type Service struct {
	Name       string
	URL        string // API base, e.g. http://127.0.0.1:40123
	MetricsURL string // http://127.0.0.1:40124/metrics
	cmd        *exec.Cmd
	done       chan struct{}
	waitErr    error
}

// start launches bin with env on two free loopback ports and returns once
// it answers /readyz, or an error when it exits or ready passes first.
func start(ctx context.Context, name, bin, dbURL string, env map[string]string, logFile *os.File, ready time.Duration) (*Service, error) {
	addrs, err := freeAddrs(2, listenLoopback)
	if err != nil {
		return nil, err
	}
	httpAddr, adminAddr := addrs[0], addrs[1]
	cmd := exec.Command(bin)
	cmd.Env = append(baseEnv(), "DATABASE_URL="+dbURL, "HTTP_ADDR="+httpAddr, "ADMIN_ADDR="+adminAddr)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s := &Service{Name: name, URL: "http://" + httpAddr, MetricsURL: "http://" + adminAddr + "/metrics",
		cmd: cmd, done: make(chan struct{})}
	go func() { s.waitErr = cmd.Wait(); close(s.done) }()
	if err := s.awaitReady(ctx, ready); err != nil {
		_ = s.stop(5 * time.Second)
		return nil, fmt.Errorf("%s (log %s): %w", name, logFile.Name(), err)
	}
	return s, nil
}

// baseEnv passes on what a Go binary needs from the parent and nothing
// that could configure a service by accident.
func baseEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, "LOG_LEVEL=warn")
}

// awaitReady polls /readyz every 50 ms for at most d.
func (s *Service) awaitReady(ctx context.Context, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/readyz", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("exited before ready: %v", s.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("not ready within %s", d)
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM, waits up to grace for the drain, then kills.
func (s *Service) stop(grace time.Duration) error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
		_ = s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("%s did not stop within %s; killed", s.Name, grace)
	}
	var exit *exec.ExitError
	if errors.As(s.waitErr, &exit) {
		return fmt.Errorf("%s: %w", s.Name, s.waitErr)
	}
	return nil
}

// freeAddrs asks listen for n free loopback ports. It holds every listener
// until all n are chosen: a port released before the next is picked may be
// handed out again. (The ports are free only until the service binds them;
// nothing closes that window short of passing the listeners down.)
func freeAddrs(n int, listen func() (net.Listener, error)) ([]string, error) {
	addrs := make([]string, 0, n)
	held := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := listen()
		if err != nil {
			return nil, err
		}
		held = append(held, l)
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}

func listenLoopback() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// binPath is dir/name, checked to exist.
func binPath(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("service binary %s: %w (run make build)", p, err)
	}
	return p, nil
}
