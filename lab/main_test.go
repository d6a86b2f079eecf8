package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/orderlab/orderlab/internal/cli"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runCLI runs the command with an empty environment.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLIEnv(t, nil, args...)
}

// runCLIEnv runs the command with env as its whole environment.
func runCLIEnv(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, func(k string) string { return env[k] }, &out, &errb)
	return code, out.String(), errb.String()
}

// The modes are the lab's; the generator's are refused by name, and no
// mode at all prints the usage.
func TestModesAreTheLabsOnly(t *testing.T) {
	if code, _, stderr := runCLI(t); code != cli.ExitUsage || !strings.Contains(stderr, "usage: lab <mode>") {
		t.Errorf("no mode: exit %d, stderr %q", code, stderr)
	}
	if code, stdout, _ := runCLI(t, "-h"); code != cli.ExitOK || !strings.Contains(stdout, "front") {
		t.Errorf("-h: exit %d, stdout %q", code, stdout)
	}
	if code, _, stderr := runCLI(t, "open", "-rate", "10", "http://127.0.0.1:1"); code != cli.ExitUsage || !strings.Contains(stderr, `unknown mode "open"`) {
		t.Errorf("open: exit %d, stderr %q", code, stderr)
	}
}
