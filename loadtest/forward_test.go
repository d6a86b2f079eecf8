package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// buildBoth builds loadtest and, when withLab, lab into one new directory
// and returns loadtest's path.
func buildBoth(t *testing.T, withLab bool) string {
	t.Helper()
	dir := t.TempDir()
	pkgs := []string{"./loadtest"}
	if withLab {
		pkgs = append(pkgs, "./lab")
	}
	cmd := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", pkgs, err, out)
	}
	exe := "loadtest"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	return filepath.Join(dir, exe)
}

// exitCode runs cmd and returns its exit code, its stdout and its stderr.
func exitCode(t *testing.T, cmd *exec.Cmd) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("%s: %v", cmd, err)
	return 0, "", ""
}

// The lab's former modes still run from loadtest: through the lab binary
// beside it, with its output and its exit code, and one line saying so;
// with no lab beside it, a usage error that says how to get one.
func TestLabModesForwardToTheLabBesideLoadtest(t *testing.T) {
	loadtest := buildBoth(t, true)
	lab := filepath.Join(filepath.Dir(loadtest), strings.Replace(filepath.Base(loadtest), "loadtest", "lab", 1))

	code, want, _ := exitCode(t, exec.Command(lab, "scenario", "-list"))
	if code != 0 || !strings.Contains(want, "pool-starvation") {
		t.Fatalf("lab scenario -list: exit %d, %q", code, want)
	}
	code, got, stderr := exitCode(t, exec.Command(loadtest, "scenario", "-list"))
	if code != 0 || got != want {
		t.Errorf("loadtest scenario -list: exit %d, stdout %q; want lab's %q", code, got, want)
	}
	if n := strings.Count(stderr, "this mode is `lab scenario` now"); n != 1 {
		t.Errorf("loadtest scenario -list: the move said %d times on stderr %q, want once", n, stderr)
	}
	if code, _, stderr := exitCode(t, exec.Command(loadtest, "scenario", "no-such-scenario")); code != 2 || !strings.Contains(stderr, `no scenario "no-such-scenario"`) {
		t.Errorf("loadtest scenario no-such-scenario: exit %d, stderr %q; want lab's 2 and its message", code, stderr)
	}

	alone := buildBoth(t, false)
	code, _, stderr = exitCode(t, exec.Command(alone, "front"))
	if code != 2 || !strings.Contains(stderr, "no lab binary beside loadtest") || !strings.Contains(stderr, "make build") {
		t.Errorf("loadtest front without lab: exit %d, stderr %q; want 2 and how to build lab", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(alone), "lab")); err == nil {
		t.Fatal("the lone loadtest has a lab beside it")
	}
}
