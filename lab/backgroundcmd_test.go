package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/internal/metrictest"
	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/internal/proc"
	"github.com/orderlab/orderlab/internal/standin"
)

// TestBackgroundServesItsCountsUntilStopped runs the background command
// against a stand-in service: its /metrics shows the requests it sent,
// under the service's name, and a stop is a normal end (exit 0).
func TestBackgroundServesItsCountsUntilStopped(t *testing.T) {
	s := standin.New(t, false)
	bg := startBackground(t, s, "50", func(string) string { return "" })

	counted := map[string]string{"job": "svc", "outcome": "ok", "route": "/orders"}
	err := poll.Wait(30*time.Second, func() error {
		fams, err := metrictest.ScrapeErr("http://" + bg.addr + "/metrics") // the listener may not be up yet
		if err != nil {
			return err
		}
		if n := fams.Value("orderlab_background_requests_total", counted); n == 0 {
			return fmt.Errorf("orderlab_background_requests_total%v = %v", counted, n)
		}
		return nil
	})
	bg.cancel()
	if code := <-bg.done; code != cli.ExitOK {
		t.Fatalf("exit %d after a stop, want 0: %s", code, bg.errb.String())
	}
	if err != nil {
		t.Errorf("no counted orders on /metrics within 30 s: %v", err)
	}
	if s.Orders.Load() < 2 {
		t.Errorf("the service got %d orders", s.Orders.Load())
	}
	if !strings.Contains(bg.out.String(), "50 requests/s to each of svc") {
		t.Errorf("stdout does not say what runs: %q", bg.out.String())
	}
}

// TestBackgroundRateZeroIsOff: BACKGROUND_RATE=0 with nothing that could
// switch it on (no listener, no token): the command says so and ends at
// once, successfully.
func TestBackgroundRateZeroIsOff(t *testing.T) {
	code, stdout, stderr := runCLI(t, "background", "-rate", "0", "-allow-remote", "unbounded=http://unbounded:8080")
	if code != cli.ExitOK || !strings.Contains(stdout, "off") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and \"off\"", code, stdout, stderr)
	}
}

func TestBackgroundUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"background"}, // no target
		{"background", "-rate", "-1", "a=http://127.0.0.1:1"},
		{"background", "-rate", "NaN", "a=http://127.0.0.1:1"},
		{"background", "a=http://unbounded:8080"}, // not loopback, no -allow-remote
		{"background", "http://127.0.0.1:1"},      // no name
		{"background", "a=http://127.0.0.1:1", "a=http://127.0.0.1:2"},
		{"background", "-listen", "9090", "a=http://127.0.0.1:1"},
	} {
		if code, _, stderr := runCLI(t, args...); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d (usage); stderr %q", args, code, cli.ExitUsage, stderr)
		}
	}
}

// TestBackgroundAtRateZeroWaitsForPUTRate: with the listener and the token
// (the lab's front page changes the rate), rate 0 idles, sends no load, and
// starts sending once PUT /rate raises a target's rate.
func TestBackgroundAtRateZeroWaitsForPUTRate(t *testing.T) {
	s := standin.New(t, false)
	bg := startBackground(t, s, "0", func(k string) string { return map[string]string{"ADMIN_TOKEN": "tok"}[k] })
	defer func() {
		bg.cancel()
		if code := <-bg.done; code != cli.ExitOK {
			t.Errorf("exit %d after a stop, want 0: %s", code, bg.errb.String())
		}
	}()
	rateURL := "http://" + bg.addr + "/rate"
	poll.Until(t, 30*time.Second, "GET /rate answers", func() error {
		resp, err := http.Get(rateURL)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
	if n := s.Orders.Load(); n > 1 { // the one order its reads need (createOrder)
		t.Fatalf("%d orders sent at rate 0, want at most the one its reads need", n)
	}
	req, err := http.NewRequest(http.MethodPut, rateURL, strings.NewReader(`{"svc": 50}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT /rate: %s", resp.Status)
	}
	poll.Until(t, 30*time.Second, "orders after PUT /rate raised the rate", func() error {
		if n := s.Orders.Load(); n < 3 {
			return fmt.Errorf("%d orders", n)
		}
		return nil
	})
}

// runningBackground is `lab background` running in the test against a
// stand-in service, its listener on addr.
type runningBackground struct {
	addr      string
	out, errb *bytes.Buffer
	cancel    context.CancelFunc
	done      chan int // its exit code, once cancel has stopped it
}

// startBackground runs `lab background -rate rate -listen ADDR
// svc=URL` against s with getenv as its environment.
func startBackground(t *testing.T, s *standin.Service, rate string, getenv func(string) string) *runningBackground {
	t.Helper()
	addrs, err := proc.LoopbackAddrs(1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	bg := &runningBackground{addr: addrs[0], out: &bytes.Buffer{}, errb: &bytes.Buffer{}, cancel: cancel, done: make(chan int, 1)}
	go func() {
		bg.done <- run(ctx, []string{"background", "-rate", rate, "-listen", bg.addr, "svc=" + s.API.URL}, getenv, bg.out, bg.errb)
	}()
	return bg
}
