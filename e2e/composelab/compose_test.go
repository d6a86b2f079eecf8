//go:build composelab

package composelab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// composeLab runs `docker compose` in root with compose.yaml, exactly as
// the README gives it: no other compose file, no environment of its own.
type composeLab struct {
	files []string
}

func newComposeLab(t *testing.T) *composeLab {
	t.Helper()
	return &composeLab{files: []string{filepath.Join(root, "compose.yaml")}}
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

// resourceLimits lists every per-container limit compose.yaml asks for,
// as `docker run` flags (--ulimit, --memory, --pids-limit), with the
// services that ask for each, from `docker compose config`: what the
// engine at hand must grant for the README's `docker compose up` to start.
func (l *composeLab) resourceLimits(t *testing.T) map[string][]string {
	t.Helper()
	out := l.must(t, time.Minute, nil, nil, "--profile", "*", "config", "--format", "json")
	var cfg struct {
		Services map[string]struct {
			Ulimits map[string]json.RawMessage `json:"ulimits"`
			Deploy  *struct {
				Resources struct {
					Limits *struct {
						Memory json.Number `json:"memory"`
						Pids   int64       `json:"pids"`
					} `json:"limits"`
				} `json:"resources"`
			} `json:"deploy"`
			PidsLimit int64 `json:"pids_limit"`
		} `json:"services"`
	}
	if err := json.Unmarshal([]byte(out), &cfg); err != nil {
		t.Fatalf("docker compose config: %v", err)
	}
	asked := map[string][]string{}
	for name, s := range cfg.Services {
		for kind, raw := range s.Ulimits {
			var both struct{ Soft, Hard int64 }
			if json.Unmarshal(raw, &both) != nil || both.Hard == 0 {
				var single int64
				if err := json.Unmarshal(raw, &single); err != nil {
					t.Fatalf("service %s: ulimits %s: %s", name, kind, raw)
				}
				both.Soft, both.Hard = single, single
			}
			flag := fmt.Sprintf("--ulimit=%s=%d:%d", kind, both.Soft, both.Hard)
			asked[flag] = append(asked[flag], name)
		}
		if s.Deploy != nil && s.Deploy.Resources.Limits != nil {
			if m := s.Deploy.Resources.Limits.Memory.String(); m != "" && m != "0" {
				asked["--memory="+m] = append(asked["--memory="+m], name)
			}
			if p := s.Deploy.Resources.Limits.Pids; p > 0 {
				flag := "--pids-limit=" + strconv.FormatInt(p, 10)
				asked[flag] = append(asked[flag], name)
			}
		}
		if s.PidsLimit > 0 {
			flag := "--pids-limit=" + strconv.FormatInt(s.PidsLimit, 10)
			asked[flag] = append(asked[flag], name)
		}
	}
	return asked
}

// checkLimitsGranted starts a container with each limit compose.yaml asks
// for: an engine that refuses one (an open-files limit above its own hard
// limit, as any engine started inside a container has) fails the README's
// `docker compose up` for every user of such an engine, so compose.yaml
// must not ask for it.
func checkLimitsGranted(t *testing.T, l *composeLab) {
	asked := l.resourceLimits(t)
	for _, flag := range slices.Sorted(maps.Keys(asked)) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, "docker", "run", "--rm", flag, alpineImage(t), "true").CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("compose.yaml asks for %s (services %s), which this engine refuses: %v\n%s",
				flag, strings.Join(asked[flag], ", "), err, out)
			continue
		}
		t.Logf("granted: %s (%s)", flag, strings.Join(asked[flag], ", "))
	}
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
