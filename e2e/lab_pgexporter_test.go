package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/orderlab/orderlab/internal/proc"
)

// startPostgresExporter runs the compose service "postgres-exporter" as a
// local process: the postgres_exporter binary (POSTGRES_EXPORTER, or
// bin/postgres_exporter from make) of the release compose.yaml pins, reading
// the test's database dbURL directly (the services reach it through the
// database proxy; the exporter, as in compose, does not). It returns the
// exporter's listen address once it reports pg_up 1, and stops when the test
// ends.
func startPostgresExporter(t *testing.T, ctx context.Context, project *types.Project, dbURL string) string {
	t.Helper()
	svc, ok := project.Services["postgres-exporter"]
	if !ok {
		t.Fatal("compose.yaml: no postgres-exporter service")
	}
	bin := os.Getenv("POSTGRES_EXPORTER")
	if bin == "" {
		bin = filepath.Join(root, "bin", "postgres_exporter")
	}
	bin, _ = filepath.Abs(bin)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("postgres_exporter binary: %v (make bin/postgres_exporter, or set POSTGRES_EXPORTER)", err)
	}
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	if want := strings.TrimPrefix(imageTag(svc.Image), "v"); !regexp.MustCompile(`version ` + regexp.QuoteMeta(want) + `\b`).Match(out) {
		t.Fatalf("postgres_exporter under test says %q; compose.yaml runs %s", bytes.TrimSpace(out), svc.Image)
	}
	addrs, err := proc.LoopbackAddrs(1)
	if err != nil {
		t.Fatal(err)
	}
	env := append(proc.BaseEnv(), "DATA_SOURCE_NAME="+dbURL)
	startProc(t, "postgres-exporter", bin, []string{"--web.listen-address=" + addrs[0]}, env)
	metrics := "http://" + addrs[0] + "/metrics"
	up := regexp.MustCompile(`(?m)^pg_up 1$`)
	deadline := time.Now().Add(time.Minute)
	for {
		body, err := getText(ctx, metrics)
		if err == nil && up.MatchString(body) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("postgres_exporter at %s: no pg_up 1 within a minute (last error %v)", addrs[0], err)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	return addrs[0]
}

// getText returns the body of a GET of url.
func getText(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
