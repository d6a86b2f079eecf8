//go:build labcheck

package e2e

import (
	"context"
	"os/exec"
	"strconv"
	"testing"

	"github.com/orderlab/orderlab/internal/proc"
	"github.com/orderlab/orderlab/lab/local"
)

// runLoad runs loadtest in closed mode against one service, with
// POSTed orders, and logs its report. GRAFANA_URL points at the fake
// Grafana, which records the load-run annotations.
func runLoad(ctx context.Context, t *testing.T, loadtest string, s *local.Service, o overload, grafanaURL string) {
	t.Helper()
	args := []string{
		"closed",
		"-c", strconv.Itoa(o.clients),
		"-d", o.duration.String(),
		"-method", "POST",
		"-timeout", "30s",
		"-name", s.Name,
		"-metrics", s.MetricsURL,
		s.URL + "/orders?db_delay=" + o.dbDelay,
	}
	cmd := exec.CommandContext(ctx, loadtest, args...)
	cmd.Env = append(proc.BaseEnv("GOMAXPROCS"), "GRAFANA_URL="+grafanaURL)
	out, err := cmd.CombinedOutput()
	// Exit status 1 means "requests failed or an SLO was missed": under
	// overload, failures (429, 503) are the point. Only a usage error (2)
	// or a crash is a broken test.
	if err != nil && cmd.ProcessState.ExitCode() != 1 {
		t.Errorf("loadtest %v: %v\n%s", args, err, out)
		return
	}
	t.Logf("loadtest %s:\n%s", s.Name, out)
}
