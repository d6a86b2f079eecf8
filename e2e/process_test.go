//go:build labcheck

package e2e

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/proc"
)

// startProc starts bin (proc.Start) with its log in the test's temporary
// directory. It is stopped when the test ends (SIGTERM, killed after 15 s),
// and a failed test prints the end of its log.
func startProc(t *testing.T, name, bin string, args, env []string) *proc.Process {
	t.Helper()
	log := filepath.Join(t.TempDir(), name+".log")
	p, err := proc.Start(name, bin, args, env, log)
	if err != nil {
		t.Fatal(err)
	}
	logOnFailure(t, name, log)
	t.Cleanup(func() {
		if err := p.Stop(15 * time.Second); err != nil {
			t.Logf("stopping %s: %v", name, err)
		}
	})
	return p
}

// logOnFailure prints the end of the log at path when the test has failed.
// Cleanups run last-registered first: call it before registering the stop,
// so that the log is read after the process has ended.
func logOnFailure(t *testing.T, name, path string) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- end of %s log ---\n%s", name, tail(path, 25))
		}
	})
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// goBuild builds the given packages of this module into a temporary
// directory and returns it.
func goBuild(t *testing.T, ctx context.Context, pkgs ...string) string {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{"build", "-o", dir + string(os.PathSeparator)}, pkgs...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	return dir
}
