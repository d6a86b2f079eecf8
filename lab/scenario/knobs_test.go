package scenario

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// runnersKnobs are the services' knobs that a scenario may not set: the
// runner's (where the services listen and what they reach) and the start's.
var runnersKnobs = []string{"DATABASE_URL", "HTTP_ADDR", "ADMIN_ADDR", "ADMIN_TOKEN", "STARTUP_TIMEOUT",
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_SERVICE_NAME"}

// TestKnobsAreTheServicesKnobs holds Knobs to the table of
// docs/reference/knobs.md, which services/internal/knob's test holds to the
// declarations (the load generator may not import them): every row is a
// Knob or the runner's, with the same models, and a knob needs a restart
// here exactly when it does there, for the declaration's reason.
func TestKnobsAreTheServicesKnobs(t *testing.T) {
	data, err := os.ReadFile("../../docs/reference/knobs.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 7 {
			t.Fatalf("docs/reference/knobs.md: %q: want the table's six columns", line)
		}
		rows++
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		models, when := strings.TrimSpace(cells[4]), strings.TrimSpace(cells[5])
		kn, ok := knob(name)
		if !ok {
			if !slices.Contains(runnersKnobs, name) {
				t.Errorf("%s: a knob of the services that Knobs does not have (or runnersKnobs, if a scenario may not set it)", name)
			}
			continue
		}
		if slices.Contains(runnersKnobs, name) {
			t.Errorf("%s: in Knobs and in runnersKnobs", name)
		}
		if want := strings.Join(kn.Services, ", "); (kn.Services == nil && models != "all") || (kn.Services != nil && models != want) {
			t.Errorf("%s: models %q in the docs, %v in Knobs", name, models, kn.Services)
		}
		if want := "live"; kn.Restart != "" {
			want = "restart: " + kn.Restart
			if when != want {
				t.Errorf("%s: %q in the docs, Restart %q in Knobs", name, when, kn.Restart)
			}
		} else if when != want {
			t.Errorf("%s: %q in the docs, live in Knobs", name, when)
		}
	}
	if rows != len(Knobs)+len(runnersKnobs) {
		t.Errorf("%d knobs in the docs' table, %d in Knobs and %d the runner's", rows, len(Knobs), len(runnersKnobs))
	}
}
