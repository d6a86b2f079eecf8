//go:build linux && labcheck

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/pgtest"
	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/internal/proc"
)

// localLabPorts are the ports deploy/local/lab.sh listens on: the database
// proxy, the page, the services and their admin listeners, Prometheus, the
// proxy's control API, the background load.
var localLabPorts = []int{5434, 8080, 8081, 8082, 8083, 9090, 9091, 9092, 9093, 9094, 9095}

// TestLocalLab runs deploy/local/lab.sh (make local-lab) as a user does:
// it prints the page's URL; the page answers and drives the services and
// the background load with the one token; Prometheus scrapes every target
// and has the lab's rules; Ctrl-C stops every process it started.
func TestLocalLab(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	promBin := prometheusBin(t)
	bins := goBuild(t, ctx, "./services/unbounded", "./services/semaphore", "./services/pipeline", "./loadtest", "./lab")
	if err := os.Symlink(promBin, filepath.Join(bins, "prometheus")); err != nil {
		t.Fatal(err)
	}
	host := freeLoopbackHost(t)
	const token = "local-lab-token"

	cmd := exec.Command(filepath.Join(abs(t, "deploy/local"), "lab.sh"))
	cmd.Env = append(proc.BaseEnv(), "BIN="+bins, "DATABASE_URL="+pgtest.New(t), "LOCAL_LAB_HOST="+host,
		"LOCAL_LAB_DIR="+t.TempDir(), "ADMIN_TOKEN="+token, "BACKGROUND_RATE=2")
	// Its own process group, which a terminal's Ctrl-C signals as a whole.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	var children []int
	t.Cleanup(func() { // a failed test leaves nothing behind either
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for _, pid := range children {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	page := "http://" + host + ":8080"
	var said []string
	for seen := false; !seen; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("lab.sh ended before printing the page's URL: %v\n%s\n%s", <-exited, strings.Join(said, "\n"), stderr.String())
			}
			said = append(said, l)
			seen = strings.Contains(l, "the front page is on "+page)
		case <-ctx.Done():
			t.Fatalf("no page URL printed: %s\n%s", strings.Join(said, "\n"), stderr.String())
		}
	}
	go func() {
		for l := range lines {
			t.Log("lab.sh: " + l)
		}
	}()
	for _, pid := range descendants(cmd.Process.Pid) {
		if strings.HasPrefix(cmdline(pid), bins) { // not the loop's sleep
			children = append(children, pid)
		}
	}
	if len(children) != 7 {
		t.Errorf("lab.sh runs %d processes (%v), want the database proxy, the three services, the background load, Prometheus and the page", len(children), children)
	}

	// The page reaches every service; a knob change passes with the one
	// token, as does a change of the background load's rate.
	call := func(method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, page+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	var all map[string]struct {
		Knobs map[string]struct{ Value string }
		Error string
	}
	code, body := call("GET", "/api/knobs", "")
	if err := json.Unmarshal([]byte(body), &all); code != http.StatusOK || err != nil || len(all) != 3 {
		t.Errorf("GET /api/knobs: %d %.300s (%v), want the three services' knobs", code, body, err)
	}
	for name, a := range all {
		if a.Error != "" || a.Knobs["ADMIN_TOKEN"].Value != "set" {
			t.Errorf("%s's knobs through the page: %q, ADMIN_TOKEN %q", name, a.Error, a.Knobs["ADMIN_TOKEN"].Value)
		}
	}
	if code, body := call("PATCH", "/api/knobs/semaphore", `{"LIMIT_WAIT": "70ms"}`); code != http.StatusOK {
		t.Errorf("a knob change through the page: %d %s, want 200 (the services take the page's token)", code, body)
	}
	if code, body := call("POST", "/api/knobs/reset", ""); code != http.StatusOK || !strings.Contains(body, "LIMIT_WAIT") {
		t.Errorf("the reset: %d %s", code, body)
	}
	var rates map[string]float64
	code, body = call("PUT", "/api/background", `{"pipeline": 1}`)
	if err := json.Unmarshal([]byte(body), &rates); code != http.StatusOK || err != nil || rates["pipeline"] != 1 || rates["semaphore"] != 2 {
		t.Errorf("a background rate through the page: %d %s, want 200 (the background load takes the page's token)", code, body)
	}

	// A scenario that needs the database proxy runs from the page, quick.
	code, body = call("POST", "/api/runs", `{"scenario": "db-latency", "quick": true}`)
	if code != http.StatusAccepted {
		t.Fatalf("starting db-latency: %d %s", code, body)
	}
	var run struct {
		State, Error string
		Log          []string
	}
	poll.Until(t, 2*time.Minute, "db-latency's end", func() error {
		code, body := call("GET", "/api/runs/current", "")
		if code == http.StatusOK {
			return fmt.Errorf("still running: %.200s", body)
		}
		_, body = call("GET", "/api/runs/1", "")
		return json.Unmarshal([]byte(body), &run)
	})
	if run.State != "done" || run.Error != "" {
		t.Errorf("db-latency from the local lab's page: %s %q, want done; its log:\n%s", run.State, run.Error, strings.Join(run.Log, "\n"))
	}

	// Prometheus scrapes all five targets, and has the lab's rules.
	api := promAPI{base: "http://" + host + ":9090", hc: &http.Client{Timeout: 10 * time.Second}}
	waitTargetsUp(t, ctx, api, 5)
	if rules, err := api.rules(ctx); err != nil || len(rules) == 0 {
		t.Errorf("Prometheus's rules: %d (%v), want the lab's", len(rules), err)
	}

	// Ctrl-C: SIGINT to the script's process group, as a terminal sends it.
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 130 {
			t.Errorf("lab.sh after Ctrl-C: %v, want exit status 130\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("lab.sh still runs 60 s after Ctrl-C\n%s", stderr.String())
	}
	for _, pid := range children {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d (%s) still runs after Ctrl-C", pid, cmdline(pid))
		}
	}
	for _, port := range localLabPorts {
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), time.Second); err == nil {
			c.Close()
			t.Errorf("%s:%d still answers after Ctrl-C", host, port)
		}
	}
}

// freeLoopbackHost is an address of 127.0.0.0/8 on which every port of the
// local lab is free, so that the test runs beside a lab or a make run on
// 127.0.0.1.
func freeLoopbackHost(t *testing.T) string {
	t.Helper()
	var taken error
	for range 10 {
		host := fmt.Sprintf("127.%d.%d.%d", 1+rand.IntN(254), rand.IntN(256), 1+rand.IntN(254))
		taken = nil
		for _, port := range localLabPorts {
			ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
			if err != nil {
				taken = err
				break
			}
			ln.Close()
		}
		if taken == nil {
			return host
		}
	}
	t.Fatalf("no loopback address with the local lab's ports free: %v", taken)
	return ""
}

// descendants are the processes under pid (from /proc), children first.
func descendants(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so after the last ')'.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 {
			parent[p], _ = strconv.Atoi(fields[1])
		}
	}
	var out []int
	for frontier := []int{pid}; len(frontier) > 0; {
		var next []int
		for p, pp := range parent {
			for _, f := range frontier {
				if pp == f {
					next = append(next, p)
				}
			}
		}
		out = append(out, next...)
		frontier = next
	}
	return out
}

// cmdline is process pid's command line, for a message.
func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
}
