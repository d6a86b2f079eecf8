package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/orderlab/orderlab/lab/scenario"
)

func TestEveryScenarioParsesAndValidates(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, Order) {
		t.Errorf("catalog = %v, want the catalog's scenarios in order %v", names, Order)
	}
	if _, err := Get("no-such-scenario"); err == nil {
		t.Error("Get(no-such-scenario) did not fail")
	}
}

func TestEveryPanelIsOnTheBoard(t *testing.T) {
	boards, _ := filepath.Glob("../../../grafana/dashboards/*.json")
	if len(boards) == 0 {
		t.Fatal("no board JSON in grafana/dashboards (make dashboards writes it)")
	}
	titles := map[string]bool{}
	for _, b := range boards {
		data, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		var board struct{ Panels []panel }
		if err := json.Unmarshal(data, &board); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		collect(board.Panels, titles)
	}
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		for _, p := range s.Panels {
			if !titles[p] {
				t.Errorf("%s: panel %q is not on the board", s.Name, p)
			}
		}
	}
}

type panel struct {
	Title  string  `json:"title"`
	Panels []panel `json:"panels"`
}

func collect(ps []panel, into map[string]bool) {
	for _, p := range ps {
		into[p.Title] = true
		collect(p.Panels, into)
	}
}

// TestEveryKnobIsDocumented checks the scenario package's knob list against
// the knobs table of docs/reference/knobs.md, both ways: a scenario can set
// only what the table documents, and a documented knob is one scenarios may
// set (the table itself is checked against the services' declarations).
func TestEveryKnobIsDocumented(t *testing.T) {
	data, err := os.ReadFile("../../../docs/reference/knobs.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(data), "\n## The table\n")
	if !ok {
		t.Fatal("docs/reference/knobs.md has no table section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z_]+)`").FindAllStringSubmatch(table, -1) {
		documented[m[1]] = true
	}
	runner := map[string]bool{"DATABASE_URL": true, "HTTP_ADDR": true, "ADMIN_ADDR": true, "STARTUP_TIMEOUT": true, "ADMIN_TOKEN": true,
		"OTEL_EXPORTER_OTLP_ENDPOINT": true, "OTEL_EXPORTER_OTLP_PROTOCOL": true, "OTEL_SERVICE_NAME": true}
	for _, k := range scenario.Knobs {
		if !documented[k.Name] {
			t.Errorf("knob %s is not in docs/reference/knobs.md's table", k.Name)
		}
		delete(documented, k.Name)
	}
	for k := range documented {
		if !runner[k] {
			t.Errorf("docs/reference/knobs.md documents %s, which scenario.Knobs does not list", k)
		}
	}
}

// TestEveryScenarioHasAKindAndTheFixOfItsPage: the front page filters the
// catalog by kind and shows the fix after a run; the fix is the first
// sentence of the scenario page's "The fix" section (links and code marks
// dropped), so that the two cannot drift apart.
func TestEveryScenarioHasAKindAndTheFixOfItsPage(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`\[([^\]]+)\]\([^)]+\)`)
	for _, s := range all {
		if !slices.Contains(scenario.Kinds, s.Kind) {
			t.Errorf("%s: kind %q, want one of %v", s.Name, s.Kind, scenario.Kinds)
		}
		page, err := os.ReadFile("../../../docs/scenarios/" + s.Name + ".md")
		if err != nil {
			t.Fatal(err)
		}
		_, section, ok := strings.Cut(string(page), "\n## The fix\n")
		if !ok {
			t.Errorf("docs/scenarios/%s.md has no section The fix", s.Name)
			continue
		}
		first, _, _ := strings.Cut(strings.TrimSpace(section), " The principle:")
		want := strings.ReplaceAll(link.ReplaceAllString(first, "$1"), "`", "")
		if s.Fix != want {
			t.Errorf("%s: fix %q, want the page's %q", s.Name, s.Fix, want)
		}
	}
}

// otherNumbering is a number of another scheme than the scenarios' own
// (Order): the pitfalls' 1-14 and the experiments' A-D that the catalog
// once used beside it.
var otherNumbering = regexp.MustCompile(`(?i)\b(pitfall|experiment)s? ([0-9]+|[A-D])\b`)

// One numbering: a scenario's number is its place in Order (the CLI, the
// reports, the annotations), and no file of the catalog numbers it otherwise.
func TestTheCatalogNumbersScenariosOneWay(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := otherNumbering.Find(data); m != nil {
			t.Errorf("%s: %q: a scenario's number is its place in the catalog (Order), not a pitfall's or an experiment's", f, m)
		}
	}
}
