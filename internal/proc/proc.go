// Package proc runs the binaries that the lab and its tests start as child
// processes (the orderlab services, Prometheus, Jaeger): it starts a binary
// with exactly the environment it is given, its output in a log file; waits
// until an HTTP endpoint of it answers 200 (a service's /readyz); stops it
// with SIGTERM and a grace period before SIGKILL; and hands out loopback
// addresses for children to listen on without handing one out twice.
//
// The scenario runner uses it at run time (through lab/local) and the
// end-to-end tests use it directly, so it does not import testing. An
// in-process server needs no address from here: it listens on port 0 and
// keeps its listener (httptest.NewServer).
package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Process is a started child process.
type Process struct {
	Name string // for messages
	Log  string // the file that holds its stdout and stderr

	cmd  *exec.Cmd
	done chan struct{} // closed once it has exited
	err  error         // cmd.Wait's result, set before done closes
}

// Start starts bin with args and exactly env (nothing is inherited: start
// from BaseEnv), appending its stdout and stderr to the file log, which it
// creates if missing.
func Start(name, bin string, args, env []string, log string) (*Process, error) {
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{}, env...) // never nil: nil would inherit ours
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &Process{Name: name, Log: log, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process's id, e.g. to pin it to a CPU.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// WaitReady polls url until it answers 200 OK (see the function WaitReady),
// and fails at once when the process exits first.
func (p *Process) WaitReady(ctx context.Context, url string, within time.Duration) error {
	err := WaitReady(ctx, url, within, p.done)
	if err == nil {
		return nil
	}
	select {
	case <-p.done:
		return fmt.Errorf("%s: %w (%v)", p.Name, err, p.err)
	default:
		return fmt.Errorf("%s: %w", p.Name, err)
	}
}

// Stop sends SIGTERM, waits up to grace for the process to finish its
// drain, then kills it. It returns an error when the process had to be
// killed or exited with a failure status. On a process that has exited
// already, it only reports how it exited.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM) // it may exit meanwhile
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			_ = p.cmd.Process.Kill()
			<-p.done
			return fmt.Errorf("%s did not stop within %s; killed", p.Name, grace)
		}
	}
	var exit *exec.ExitError
	if errors.As(p.err, &exit) {
		return fmt.Errorf("%s: %w", p.Name, p.err)
	}
	return nil
}

// BaseEnv is what a binary needs from our environment and nothing that
// could configure it by accident (no DATABASE_URL, no OTEL_*): PATH, HOME,
// TMPDIR and TZ, then the variables named in also, each where it is set.
func BaseEnv(also ...string) []string {
	var env []string
	for _, k := range append([]string{"PATH", "HOME", "TMPDIR", "TZ"}, also...) {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
