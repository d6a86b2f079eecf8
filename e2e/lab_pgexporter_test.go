//go:build labcheck

package e2e

import (
	"bytes"
	"context"
	"fmt"
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
// local process reading the test's database dbURL directly (the services
// reach it through the database proxy; the exporter, as in compose, does
// not). It returns the exporter's listen address once it reports pg_up 1,
// and stops when the test ends.
func startPostgresExporter(t *testing.T, ctx context.Context, project *types.Project, dbURL string) string {
	t.Helper()
	p, addr := runPostgresExporter(t, project, dbURL)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := waitMetric(ctx, addr, `(?m)^pg_up 1$`); err != nil {
		t.Fatalf("postgres_exporter at %s: %v\n%s", addr, err, tail(p.Log, 10))
	}
	return addr
}

// TestPostgresExporterSaysWhenItCannotConnect: an exporter that cannot reach
// the server reports pg_up 0, fails compose's healthcheck and logs why,
// instead of leaving the board's "Postgres server" row silently empty.
func TestPostgresExporterSaysWhenItCannotConnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	project := loadCompose(t)
	closed, err := proc.LoopbackAddrs(1) // a free port: nothing listens there
	if err != nil {
		t.Fatal(err)
	}
	p, addr := runPostgresExporter(t, project, "postgres://orderlab@"+closed[0]+"/orderlab?sslmode=disable")
	body, err := waitMetric(ctx, addr, `(?m)^pg_up 0$`)
	if err != nil {
		t.Fatalf("postgres_exporter with no server: %v", err)
	}
	// compose's healthcheck: wget ... | grep -q PATTERN.
	test := strings.Join(project.Services["postgres-exporter"].HealthCheck.Test, " ")
	m := regexp.MustCompile(`grep -q '([^']+)'`).FindStringSubmatch(test)
	if m == nil {
		t.Fatalf("compose.yaml: postgres-exporter's healthcheck %q greps for no pattern", test)
	}
	if regexp.MustCompile("(?m)" + m[1]).MatchString(body) {
		t.Errorf("the healthcheck's pattern %q matches the metrics of an exporter that cannot connect", m[1])
	}
	log, _ := os.ReadFile(p.Log)
	if !bytes.Contains(log, []byte("connection refused")) {
		t.Errorf("postgres_exporter's log does not say why it cannot connect:\n%s", log)
	}
}

// runPostgresExporter starts the postgres_exporter binary (POSTGRES_EXPORTER,
// or bin/postgres_exporter from make) of the release compose.yaml pins, on a
// free loopback port, reading dsn. It stops when the test ends.
func runPostgresExporter(t *testing.T, project *types.Project, dsn string) (*proc.Process, string) {
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
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v", bin, err)
	}
	// The release the Makefile builds, which the lab's offline stand-in image
	// runs too; compose.yaml may pin a newer one the module proxy does not
	// serve (docs/lab.md says which and why).
	built := makeVersion(t, "POSTGRES_EXPORTER_VERSION")
	if !regexp.MustCompile(`version ` + regexp.QuoteMeta(strings.TrimPrefix(built, "v")) + `\b`).Match(out) {
		t.Fatalf("postgres_exporter under test says %q; the Makefile builds %s", bytes.TrimSpace(out), built)
	}
	if pin := imageTag(svc.Image); pin != built {
		t.Logf("compose.yaml pins %s; the postgres_exporter under test is %s, the newest the module proxy serves", svc.Image, built)
	}
	addrs, err := proc.LoopbackAddrs(1)
	if err != nil {
		t.Fatal(err)
	}
	env := append(proc.BaseEnv(), "DATA_SOURCE_NAME="+dsn)
	return startProc(t, "postgres-exporter", bin, []string{"--web.listen-address=" + addrs[0]}, env), addrs[0]
}

// waitMetric polls the exporter's /metrics at addr until its body matches
// pattern, and returns the body.
func waitMetric(ctx context.Context, addr, pattern string) (string, error) {
	re := regexp.MustCompile(pattern)
	var body string
	var err error
	for {
		body, err = getText(ctx, "http://"+addr+"/metrics")
		if err == nil && re.MatchString(body) {
			return body, nil
		}
		select {
		case <-ctx.Done():
			return body, fmt.Errorf("no %q in /metrics (last error %v)", pattern, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
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

// makeVersion is the Makefile's NAME ?= vX.Y.Z: the release of a tool the
// Makefile builds from the Go module proxy.
func makeVersion(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s*\?=\s*(v\d+\.\d+\.\d+)`).FindStringSubmatch(string(data))
	if m == nil {
		t.Fatalf("Makefile: no %s ?= vX.Y.Z", name)
	}
	return m[1]
}
