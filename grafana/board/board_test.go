package board

//lint:file-ignore SA1019 the v1 dashboard JSON is what the board provisions (see board.go)

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// TestCommittedJSONIsGenerated keeps grafana/dashboards in step with this
// package: Grafana provisions the JSON files, not the Go code.
func TestCommittedJSONIsGenerated(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "dashboards", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("grafana/dashboards/%s is stale: run `go run ./grafana/generate` (make dashboards)", name)
		}
	}
}

// TestCommittedJSONIsStrictlyValid parses every committed dashboard with
// the SDK's strict decoder (unknown fields are errors) and validates it,
// with the panel and query plugins of the pinned Grafana registered.
func TestCommittedJSONIsStrictlyValid(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	files, err := filepath.Glob(filepath.Join("..", "dashboards", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards (err %v)", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard.Dashboard
		if err := noBuildErrors(d.UnmarshalJSONStrict(data)); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := noBuildErrors(d.Validate()); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// noBuildErrors turns the SDK's empty cog.BuildErrors, which it returns as a
// non-nil error, into nil.
func noBuildErrors(err error) error {
	var be cog.BuildErrors
	if errors.As(err, &be) && len(be) == 0 {
		return nil
	}
	return err
}
