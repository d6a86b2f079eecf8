package apptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// PromtoolPath finds promtool: $PROMTOOL, then ./bin at the module root
// (where `make test` installs it), then $PATH. It fails the test, never
// skips it, when there is none.
func PromtoolPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("PROMTOOL"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	if p := filepath.Join(root, "bin", "promtool"); fileExists(p) {
		return p
	}
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	t.Fatal("promtool not found: run `make test` (it installs bin/promtool) or set PROMTOOL")
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
