package proc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/poll"
)

// The test binary doubles as the child process: with PROC_TEST_CHILD set it
// runs child instead of the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("PROC_TEST_CHILD"); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child catches SIGTERM, prints its environment, then, by mode: serves
// /readyz on ADDR until SIGTERM (serve), exits at once with status 3 (fail),
// or never exits on its own (stubborn).
func child(mode string) int {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	fmt.Println(strings.Join(os.Environ(), "\n"))
	switch mode {
	case "fail":
		return 3
	case "stubborn":
		time.Sleep(time.Hour)
		return 0
	}
	srv := &http.Server{Addr: os.Getenv("ADDR"), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	go srv.ListenAndServe() //nolint:errcheck // ends with the process
	<-term
	fmt.Println("draining")
	return 0
}

func startChild(t *testing.T, mode string, env ...string) *Process {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env = append(BaseEnv(), append(env, "PROC_TEST_CHILD="+mode)...)
	p, err := Start(mode, self, nil, env, filepath.Join(t.TempDir(), mode+".log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(5 * time.Second) })
	return p
}

func logOf(t *testing.T, p *Process) string {
	t.Helper()
	b, err := os.ReadFile(p.Log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A child gets exactly the environment it is given, answers, and drains on
// SIGTERM; its output is in its log.
func TestStartWaitStop(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://leaked")
	addrs, err := LoopbackAddrs(1)
	if err != nil {
		t.Fatal(err)
	}
	p := startChild(t, "serve", "ADDR="+addrs[0])
	if err := p.WaitReady(context.Background(), "http://"+addrs[0]+"/readyz", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(30 * time.Second); err != nil {
		t.Errorf("Stop after a clean drain: %v", err)
	}
	log := logOf(t, p)
	if !strings.Contains(log, "draining") {
		t.Errorf("the child did not get SIGTERM; log:\n%s", log)
	}
	if strings.Contains(log, "DATABASE_URL") {
		t.Errorf("the parent's DATABASE_URL leaked into the child; log:\n%s", log)
	}
	if !strings.Contains(log, "ADDR="+addrs[0]) {
		t.Errorf("the child lacks the env it was given; log:\n%s", log)
	}
	if err := p.Stop(time.Second); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
}

func TestWaitReadyFailsWhenTheChildExits(t *testing.T) {
	p := startChild(t, "fail")
	err := p.WaitReady(context.Background(), "http://127.0.0.1:1/readyz", time.Minute)
	if err == nil || !strings.Contains(err.Error(), "exited before") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("WaitReady = %v, want an error that says the child exited with status 3", err)
	}
	if err := p.Stop(time.Second); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Stop = %v, want the failure status", err)
	}
}

func TestStopKillsAfterTheGracePeriod(t *testing.T) {
	p := startChild(t, "stubborn")
	// The child catches SIGTERM before it prints its environment.
	poll.Until(t, 30*time.Second, "the child to print its environment", func() error {
		if !strings.Contains(logOf(t, p), "PROC_TEST_CHILD") {
			return errors.New("nothing printed yet")
		}
		return nil
	})
	if err := p.Stop(200 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Stop = %v, want it killed", err)
	}
}

func TestWaitReadyWaitsForOK(t *testing.T) {
	ready := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-ready:
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)

	err := WaitReady(context.Background(), srv.URL, 2*time.Second, nil)
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("WaitReady on a 503 = %v, want an error naming the last status", err)
	}
	exited := make(chan struct{})
	close(exited)
	if err := WaitReady(context.Background(), srv.URL, time.Minute, exited); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("WaitReady after exit = %v", err)
	}
	close(ready)
	if err := WaitReady(context.Background(), srv.URL, time.Minute, nil); err != nil {
		t.Errorf("WaitReady on a 200: %v", err)
	}
}

func TestBaseEnvPassesOnlyWhatABinaryNeeds(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://leaked")
	t.Setenv("GOMAXPROCS", "1")
	t.Setenv("PATH", "/bin")
	env := BaseEnv()
	if !slices.Contains(env, "PATH=/bin") {
		t.Errorf("BaseEnv() = %q, want PATH", env)
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "DATABASE_URL=") || strings.HasPrefix(kv, "GOMAXPROCS=") {
			t.Errorf("BaseEnv() passes %s", kv)
		}
	}
	if env := BaseEnv("GOMAXPROCS"); !slices.Contains(env, "GOMAXPROCS=1") {
		t.Errorf("BaseEnv(GOMAXPROCS) = %q", env)
	}
}
