package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/goccy/go-yaml"
)

// root is the repository root, relative to this package's directory (where
// go test runs).
const root = ".."

// jsonUnmarshal and yamlUnmarshal are the decoders decodeFile takes.
var (
	jsonUnmarshal = json.Unmarshal
	yamlUnmarshal = func(data []byte, v any) error { return yaml.Unmarshal(data, v) }
)

// decodeFile reads path and decodes it into v.
func decodeFile(t *testing.T, path string, unmarshal func([]byte, any) error, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// decodeGlob decodes every file that matches pattern (relative to root),
// keyed by file name. No match fails the test.
func decodeGlob[T any](t *testing.T, pattern string, unmarshal func([]byte, any) error) map[string]T {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, pattern))
	if err != nil || len(files) == 0 {
		t.Fatalf("no %s (err %v)", pattern, err)
	}
	out := map[string]T{}
	for _, f := range files {
		var v T
		decodeFile(t, f, unmarshal, &v)
		out[filepath.Base(f)] = v
	}
	return out
}

// abs is the absolute path of rel, a path in the repository.
func abs(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
