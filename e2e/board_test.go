package e2e

import (
	"sort"
	"strings"
	"testing"
)

// boardTarget is one query of one panel of a provisioned dashboard.
type boardTarget struct {
	Board    string
	Panel    string
	Repeat   string // template variable the panel repeats over, if any
	RefID    string
	Expr     string
	Exemplar bool
}

// board is the part of Grafana's dashboard JSON these tests read.
type board struct {
	UID           string  `json:"uid"`
	Title         string  `json:"title"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Templating    struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name       string        `json:"name"`
			Datasource datasourceRef `json:"datasource"`
			Expr       string        `json:"expr"`
			Placement  *string       `json:"placement"`
		} `json:"list"`
	} `json:"annotations"`
	Links []struct {
		Title     string  `json:"title"`
		URL       string  `json:"url"`
		Placement *string `json:"placement"`
	} `json:"links"`
}

type panel struct {
	ID         int           `json:"id"`
	Type       string        `json:"type"`
	Title      string        `json:"title"`
	Repeat     string        `json:"repeat"`
	Datasource datasourceRef `json:"datasource"`
	GridPos    struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Targets []struct {
		RefID    string `json:"refId"`
		Expr     string `json:"expr"`
		Exemplar bool   `json:"exemplar"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's panels
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// loadBoards reads every dashboard Grafana provisions from grafana/dashboards.
func loadBoards(t *testing.T) map[string]board {
	t.Helper()
	return decodeGlob[board](t, "grafana/dashboards/*.json", jsonUnmarshal)
}

// allPanels flattens rows: panels of collapsed rows sit inside the row.
func allPanels(b board) []panel {
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(b.Panels)
	return out
}

// boardTargets lists every PromQL query of every panel of every board,
// sorted for stable output.
func boardTargets(boards map[string]board) []boardTarget {
	var out []boardTarget
	for name, b := range boards {
		for _, p := range allPanels(b) {
			for _, tg := range p.Targets {
				out = append(out, boardTarget{
					Board: name, Panel: p.Title, Repeat: p.Repeat,
					RefID: tg.RefID, Expr: tg.Expr, Exemplar: tg.Exemplar,
				})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Board != out[j].Board {
			return out[i].Board < out[j].Board
		}
		if out[i].Panel != out[j].Panel {
			return out[i].Panel < out[j].Panel
		}
		return out[i].RefID < out[j].RefID
	})
	return out
}

// TestBoard checks the main board's structure: what Grafana needs to load it
// and what the lab promises.
func TestBoard(t *testing.T) {
	boards := loadBoards(t)
	b, ok := boards["orderlab-pool-starvation.json"]
	if !ok {
		t.Fatal("grafana/dashboards/orderlab-pool-starvation.json missing")
	}
	if b.Title != "Orders: pool starvation and tail latency" {
		t.Errorf("title %q", b.Title)
	}
	if b.SchemaVersion < 41 {
		t.Errorf("schemaVersion %d: older than Grafana 12's", b.SchemaVersion)
	}

	var service bool
	for _, v := range b.Templating.List {
		if v.Name == "service" && v.Type == "query" && strings.Contains(toString(v.Query), "orderlab_service_info") {
			service = true
		}
	}
	if !service {
		t.Error("no $service query variable over orderlab_service_info")
	}

	var loadRuns bool
	for _, a := range b.Annotations.List {
		if a.Name == "Load runs" && a.Datasource.Type == "grafana" {
			loadRuns = true
		}
	}
	if !loadRuns {
		t.Error("no annotation query for load runs")
	}

	// Controls where users look: a link or an annotation toggle with a
	// placement ("inControlsMenu", the SDK's default) is rendered inside the
	// dashboard-controls dropdown; without one it sits above the panels.
	for _, a := range b.Annotations.List {
		if a.Placement != nil {
			t.Errorf("annotation %q: placement %q hides its toggle in the controls menu; leave placement out", a.Name, *a.Placement)
		}
	}
	if len(b.Links) == 0 {
		t.Error("no dashboard links (Jaeger, Prometheus alerts)")
	}
	for _, l := range b.Links {
		if l.Placement != nil {
			t.Errorf("link %q: placement %q hides it in the controls menu; leave placement out", l.Title, *l.Placement)
		}
	}

	provisioned := provisionedDatasources(t)
	ids := map[int]bool{}
	var littles, exemplarHTTP, exemplarPool bool
	var firing *panel
	for _, p := range allPanels(b) {
		if firesPitfalls(p) && firing == nil {
			firing = &p
		}
		if p.Type == "row" {
			continue
		}
		if ids[p.ID] {
			t.Errorf("panel %q: duplicate id %d", p.Title, p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.W <= 0 || p.GridPos.X+p.GridPos.W > 24 || p.GridPos.H <= 0 {
			t.Errorf("panel %q: gridPos %+v outside the 24-column grid", p.Title, p.GridPos)
		}
		if _, ok := provisioned[p.Datasource.UID]; !ok {
			t.Errorf("panel %q: datasource %q is not provisioned", p.Title, p.Datasource.UID)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q: no queries", p.Title)
		}
		for _, tg := range p.Targets {
			// The services' series by job, postgres_exporter's by
			// application_name; two server-wide lines (grafana/board's test
			// names them) and PgBouncer's row, the pooler the three share,
			// follow neither.
			if !strings.Contains(tg.Expr, `job=~"$service"`) && !strings.Contains(tg.Expr, `application_name=~"orderlab-$service"`) &&
				!strings.HasPrefix(tg.Expr, `sum(pg_stat_activity_count{job="postgres"})`) && !strings.HasPrefix(tg.Expr, `max(pg_settings_max_connections{job="postgres"})`) &&
				!strings.Contains(tg.Expr, `{job="pgbouncer", `) {
				t.Errorf("panel %q %s: query ignores $service: %s", p.Title, tg.RefID, tg.Expr)
			}
			if tg.Exemplar && strings.Contains(tg.Expr, "orderlab_http_request_duration_seconds") {
				exemplarHTTP = true
			}
			if tg.Exemplar && strings.Contains(tg.Expr, "orderlab_db_pool_acquire_wait_seconds") {
				exemplarPool = true
			}
		}
		if strings.Contains(p.Title, "Little's law") {
			littles = true
		}
	}
	if !littles {
		t.Error("no Little's-law panel")
	}
	// The board's own diagnosis, near the top: the pitfall alerts that
	// fire, as a line per pitfall and service over the board's range.
	switch {
	case firing == nil:
		t.Error(`no panel over ALERTS{alertstate="firing", pitfall!=""}: the board does not show which pitfall the alerts name`)
	case firing.GridPos.Y > 8 || firing.Type != "state-timeline" || len(firing.Targets) != 1 ||
		!strings.Contains(firing.Targets[0].Expr, "by (pitfall, service)"):
		t.Errorf("panel %q: type %s at row %d, queries %+v: want a state timeline under the scoreboard, one line per pitfall and service",
			firing.Title, firing.Type, firing.GridPos.Y, firing.Targets)
	}
	if !exemplarHTTP || !exemplarPool {
		t.Error("request latency and acquire wait panels must show exemplars")
	}
}

// firesPitfalls says whether p draws the pitfall alerts that fire: a
// query over ALERTS that keeps the firing ones with a pitfall label.
func firesPitfalls(p panel) bool {
	for _, tg := range p.Targets {
		if strings.Contains(tg.Expr, "ALERTS{") && strings.Contains(tg.Expr, `alertstate="firing"`) && strings.Contains(tg.Expr, `pitfall!=""`) {
			return true
		}
	}
	return false
}

// toString is the query text of a template variable: a string, or the
// query field of an object.
func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		s, _ := v["query"].(string)
		return s
	}
	return ""
}
