//go:build composelab

package composelab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// root is the repository: compose.yaml's directory.
var root, _ = filepath.Abs(filepath.Join("..", ".."))

// composeLab runs `docker compose` in root with compose.yaml and, where the
// machine cannot grant the open-files limit compose.yaml asks for, an
// override that lowers only that (nofileOverride).
type composeLab struct {
	files []string
}

func newComposeLab(t *testing.T) *composeLab {
	t.Helper()
	l := &composeLab{files: []string{filepath.Join(root, "compose.yaml")}}
	if o := nofileOverride(t); o != "" {
		l.files = append(l.files, o)
	}
	return l
}

// cmd is `docker compose -f ... args`, with env added to the environment.
func (l *composeLab) cmd(ctx context.Context, env []string, args ...string) *exec.Cmd {
	full := []string{"compose"}
	for _, f := range l.files {
		full = append(full, "-f", f)
	}
	c := exec.CommandContext(ctx, "docker", append(full, args...)...)
	c.Dir = root
	c.Env = append(os.Environ(), env...)
	c.WaitDelay = 10 * time.Second
	return c
}

// run runs a compose command and returns its output (stdout and stderr).
func (l *composeLab) run(ctx context.Context, env []string, args ...string) (string, error) {
	var out bytes.Buffer
	c := l.cmd(ctx, env, args...)
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	return out.String(), err
}

// must runs a compose command; on failure the test fails with its output
// and the last log lines of services (all of them when none is named).
func (l *composeLab) must(t *testing.T, timeout time.Duration, env []string, services []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	out, err := l.run(ctx, env, args...)
	if err != nil {
		t.Fatalf("docker compose %s (%s): %v\n%s%s", strings.Join(args, " "), time.Since(start).Round(time.Second), err, tail(out, 60), l.logs(services...))
	}
	t.Logf("docker compose %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Second))
	return out
}

// logs returns the last log lines of services (every service when none is
// named), for a failure's message.
func (l *composeLab) logs(services ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, _ := l.run(ctx, nil, append([]string{"logs", "--no-color", "--tail", "40"}, services...)...)
	ps, _ := l.run(ctx, nil, "ps", "-a")
	return "\n--- docker compose ps -a\n" + ps + "--- last log lines\n" + out
}

// container is one line of `docker compose ps --format json`.
type container struct {
	ID, Name, Service, State, Health string
}

// ps lists the project's containers (with -a, stopped ones too).
func (l *composeLab) ps(t *testing.T, all bool) []container {
	t.Helper()
	args := []string{"ps", "--format", "json"}
	if all {
		args = append(args, "-a")
	}
	out := l.must(t, time.Minute, nil, nil, args...)
	var cs []container
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var c container
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("docker compose ps: %v\n%s", err, out)
		}
		cs = append(cs, c)
	}
	return cs
}

// nofileOverride: compose.yaml asks for 65536 open files (ulimits nofile)
// for the services and the load generators. Where the engine cannot grant
// that (a daemon with a lower hard limit, as in an unprivileged
// container), it returns an override file that lowers only that limit to
// the engine's own; otherwise "".
func nofileOverride(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	probe, err := exec.CommandContext(ctx, "docker", "run", "--rm", "--ulimit", "nofile=65536:65536", alpineImage(t), "true").CombinedOutput()
	if err == nil {
		return ""
	}
	t.Logf("the engine cannot grant nofile=65536 (%s): lowering it in an override", strings.TrimSpace(string(probe)))
	out, err := exec.CommandContext(ctx, "docker", "run", "--rm", alpineImage(t), "sh", "-c", "ulimit -Hn").Output()
	if err != nil {
		t.Fatalf("docker run %s: %v", alpineImage(t), err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("ulimit -Hn in a container: %q", out)
	}
	var b strings.Builder
	b.WriteString("# nofile only: what this machine's engine can grant (composelab).\nservices:\n")
	for _, s := range []string{"unbounded", "semaphore", "pipeline", "front", "lab", "loadtest"} {
		fmt.Fprintf(&b, "  %s:\n    ulimits:\n      nofile: {soft: %d, hard: %d}\n", s, n, n)
	}
	path := filepath.Join(t.TempDir(), "compose.nofile.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("override %s: nofile %d", path, n)
	return path
}

// alpineImage is the Dockerfile's runtime base, which every engine that
// built the lab has.
func alpineImage(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "services", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "ARG ALPINE_VERSION="); ok {
			return "alpine:" + strings.TrimSpace(v)
		}
	}
	t.Fatal("services/Dockerfile: no ARG ALPINE_VERSION")
	return ""
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

// dockerOut runs docker args and returns its standard output.
func dockerOut(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", args...).Output()
	return string(out), err
}
