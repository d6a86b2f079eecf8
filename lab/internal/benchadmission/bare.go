package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/orderlab/orderlab/internal/proc"
)

// bareFlag makes this binary the bare baseline: a net/http server on the
// given address whose only work is a fixed 200, with the process's CPU on
// /metrics (client_golang's process collector, as the services export it).
const bareFlag = "-bare-server"

// bareBody is the bare answer: as short as the 429's problem is not, so
// that the baseline is the least HTTP can cost.
var bareBody = []byte("ok\n")

// serveBare is the bare server's main.
func serveBare(addr string) error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /bare", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(bareBody)
	})
	return http.ListenAndServe(addr, mux) //nolint:gosec // a loopback bench, no timeouts wanted
}

// bare is a running bare server.
type bare struct {
	p          *proc.Process
	url, stats string
}

// startBare starts this binary as the bare server on a free loopback port,
// pinned like the service.
func (o options) startBare(ctx context.Context, logDir string) (*bare, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addrs, err := proc.LoopbackAddrs(1)
	if err != nil {
		return nil, err
	}
	p, err := proc.Start("bare net/http", self, []string{bareFlag, addrs[0]}, proc.BaseEnv(), filepath.Join(logDir, "bare.log"))
	if err != nil {
		return nil, err
	}
	b := &bare{p: p, url: "http://" + addrs[0] + "/bare", stats: "http://" + addrs[0] + "/metrics"}
	if err := p.WaitReady(ctx, b.url, 10*time.Second); err != nil {
		_ = p.Stop(time.Second)
		return nil, err
	}
	if o.serverCPU != "" {
		if out, err := exec.Command("taskset", "-a", "-p", "-c", o.serverCPU, strconv.Itoa(p.Pid())).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("pinning the bare server: taskset: %v %s", err, out)
		}
	}
	return b, nil
}
