package local

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a service: with LAB_TEST_SERVICE set it serves
// /readyz on HTTP_ADDR and, on ADMIN_ADDR, /metrics that lists the
// environment it got, until SIGTERM.
func TestMain(m *testing.M) {
	if os.Getenv("LAB_TEST_SERVICE") != "" {
		fakeService()
		return
	}
	os.Exit(m.Run())
}

func fakeService() {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	api := &http.Server{Addr: os.Getenv("HTTP_ADDR"), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	admin := &http.Server{Addr: os.Getenv("ADMIN_ADDR"), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Join(os.Environ(), "\n")) //nolint:errcheck // test server
	})}
	go api.ListenAndServe()   //nolint:errcheck // ends with the process
	go admin.ListenAndServe() //nolint:errcheck // ends with the process
	<-term
}

// A service starts with the lab's environment and nothing of ours, on the
// addresses its URLs name, and stops cleanly.
func TestStartGivesEachServiceItsEnvironment(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "unbounded")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OTEL_SERVICE_NAME", "leaked")
	logDir := t.TempDir()
	l, err := Start(context.Background(), Config{BinDir: bin, Services: []string{"unbounded"},
		Env: map[string]string{"LAB_TEST_SERVICE": "1", "LIMIT": "4"}, Database: "postgres://db/x", LogDir: logDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Stop() }) // a no-op once stopped
	s := l.Services[0]
	if s.Name != "unbounded" || s.Log != filepath.Join(logDir, "unbounded.log") {
		t.Errorf("service %q, log %q", s.Name, s.Log)
	}
	resp, err := http.Get(s.MetricsURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	env := strings.Split(string(body), "\n")
	for _, want := range []string{"DATABASE_URL=postgres://db/x", "LIMIT=4", "LOG_LEVEL=warn",
		"HTTP_ADDR=" + strings.TrimPrefix(s.URL, "http://"),
		"ADMIN_ADDR=" + strings.TrimSuffix(strings.TrimPrefix(s.MetricsURL, "http://"), "/metrics")} {
		if !slices.Contains(env, want) {
			t.Errorf("the service's environment lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(string(body), "leaked") {
		t.Errorf("our OTEL_SERVICE_NAME leaked into the service:\n%s", body)
	}
	if err := l.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
}

func TestStartWithoutTheBinarySaysToBuildIt(t *testing.T) {
	_, err := Start(context.Background(), Config{BinDir: t.TempDir(), Services: []string{"pipeline"},
		LogDir: t.TempDir(), Ready: time.Second})
	if err == nil || !strings.Contains(err.Error(), "make build") {
		t.Errorf("Start = %v, want an error that says to run make build", err)
	}
}
