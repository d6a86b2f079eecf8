package e2e

// The releases the lab pins, and that the e2e runs: Prometheus as a Go
// module version (v0.3MM.P) and as an image tag (v3.MM.P).

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// imageTag is the tag of an image reference ("" when it has none).
func imageTag(image string) string {
	name := image[strings.LastIndex(image, "/")+1:]
	if i := strings.LastIndex(name, ":"); i >= 0 {
		return name[i+1:]
	}
	return ""
}

// prometheusImageTag maps the Makefile's PROMETHEUS_VERSION (Go module
// version v0.3MM.P) to the image tag of the same release (v3.MM.P).
func prometheusImageTag(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^PROMETHEUS_VERSION\s*\?=\s*(v0\.\d+\.\d+)`).FindStringSubmatch(string(data))
	if m == nil {
		t.Fatal("Makefile: no PROMETHEUS_VERSION ?= v0.3MM.P")
	}
	tag, _ := prometheusRelease(m[1])
	return tag
}

// prometheusRelease maps a Prometheus Go module version, v0.3MM.P, to the
// release and image tag it is, v3.MM.P.
func prometheusRelease(module string) (string, bool) {
	var minor, patch int
	if _, err := fmt.Sscanf(module, "v0.%d.%d", &minor, &patch); err != nil {
		return "", false
	}
	return fmt.Sprintf("v%d.%d.%d", minor/100, minor%100, patch), true
}
