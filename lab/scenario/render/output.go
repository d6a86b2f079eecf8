package render

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/htmlreport"
)

// Files are the paths a run wrote: its report, and the flight recorder
// snapshots the report links (result.Snapshot).
type Files struct {
	JSON, Markdown, HTML string
	Snapshots            []string
}

// Write saves res as dir/stamp.json, .md and .html, beside the snapshots
// the run kept there.
func Write(dir, stamp string, res *result.Result) (Files, error) {
	base := filepath.Join(dir, stamp)
	f := Files{JSON: base + ".json", Markdown: base + ".md", HTML: base + ".html", Snapshots: snapshotPaths(dir, res)}
	return f, errors.Join(create(f.JSON, func(w io.Writer) error { return result.WriteJSON(w, res) }), writeViews(f, res))
}

// writeViews writes the Markdown and HTML of res to f's paths.
func writeViews(f Files, res *result.Result) error {
	return errors.Join(
		create(f.Markdown, func(w io.Writer) error { return WriteMarkdown(w, res) }),
		create(f.HTML, func(w io.Writer) error { return WriteHTML(w, res) }))
}

func create(path string, fill func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := fill(w); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Render reads a result JSON that Run wrote and writes its Markdown and
// HTML again beside it (after the report code changed, say).
func Render(jsonPath string) (Files, error) {
	f, err := os.Open(jsonPath)
	if err != nil {
		return Files{}, err
	}
	defer f.Close()
	var res result.Result
	if err := json.NewDecoder(f).Decode(&res); err != nil {
		return Files{}, fmt.Errorf("%s: %w", jsonPath, err)
	}
	if res.Schema != result.Schema {
		return Files{}, fmt.Errorf("%s: schema %q, want %q", jsonPath, res.Schema, result.Schema)
	}
	base := strings.TrimSuffix(jsonPath, ".json")
	files := Files{JSON: jsonPath, Markdown: base + ".md", HTML: base + ".html"}
	return files, writeViews(files, &res)
}

// WriteMarkdown writes the scenario's tables, with the command, the bound
// and the expectations.
func WriteMarkdown(w io.Writer, res *result.Result) error {
	s := res.Scenario
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: %s\n\n", scenario.Label(s), s.Title)
	fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(s.Question))
	fmt.Fprintf(&b, "Command: `%s`. %s\n\n", command(res), hostLine(res))
	if q := quickLine(res); q != "" {
		fmt.Fprintf(&b, "%s\n\n", q)
	}
	for _, p := range res.Phases {
		sp := phaseSpec(s, p.Name)
		fmt.Fprintf(&b, "**%s**: %s", p.Name, scenario.Describe(sp))
		if sp.Bound != nil {
			fmt.Fprintf(&b, "; bound %s = **%.0f/s**", sp.Bound.What, sp.Bound.RPS())
		}
		b.WriteString("\n\n")
		if res.Count > 1 {
			fmt.Fprintf(&b, "Median of %d runs of each target, with the range in brackets.\n\n", res.Count)
		}
		main, detail := TableOf(p).Split()
		if err := main.WriteMarkdown(&b); err != nil {
			return err
		}
		b.WriteString("\n")
		for _, w := range Warnings(p) {
			fmt.Fprintf(&b, "Warning, %s\n\n", w)
		}
		if len(detail.Rows) > 0 {
			b.WriteString(serverSide + ":\n\n")
			if err := detail.WriteMarkdown(&b); err != nil {
				return err
			}
			b.WriteString("\n")
			if n := clampNote(p); n != "" {
				b.WriteString(n + "\n\n")
			}
		}
		if err := writeViewsMarkdown(&b, s, p); err != nil {
			return err
		}
		writeSnapshotsMarkdown(&b, p)
		for i, t := range outageTables(p.Outages) {
			b.WriteString([]string{"Keyed orders beside the load, held to the orders table afterwards:\n\n", "Their answers, second by second:\n\n"}[i])
			if err := t.WriteMarkdown(&b); err != nil {
				return err
			}
			b.WriteString("\n")
		}
	}
	if len(s.Published) > 0 {
		b.WriteString("Published (Java): " + strings.Join(s.Published, "; ") + "\n\n")
	}
	for _, e := range s.Expect {
		fmt.Fprintf(&b, "- expected, %s: %s\n", cmp.Or(e.Target, "all"), e.Says)
	}
	if len(s.Expect) > 0 {
		b.WriteString("\nVerdicts:\n\n")
		for _, v := range result.Verdicts(res) {
			fmt.Fprintf(&b, "- %s\n", v)
		}
		fmt.Fprintf(&b, "\n%s\n", result.Conclusion(res))
	}
	if res.Board != "" {
		fmt.Fprintf(&b, "\nOn the board, exactly this run: %s\n", res.Board)
	}
	for _, l := range signalLines(s) {
		fmt.Fprintf(&b, "\n%s\n", l)
	}
	fmt.Fprintf(&b, "\nBoard panels: %s.\n", strings.Join(quoted(s.Panels), ", "))
	_, err := io.WriteString(w, b.String())
	return err
}

// serverSide is the caption of a phase's second table (Table.Split).
const serverSide = "Server side (CPU, memory, connections, pool)"

// WriteHTML writes the report with charts.
func WriteHTML(w io.Writer, res *result.Result) error {
	s := res.Scenario
	page := htmlreport.Page{
		Title:    s.Name + ": " + s.Title,
		Subtitle: fmt.Sprintf("%s. %s", command(res), hostLine(res)),
		Notes:    []string{strings.TrimSpace(s.Question)},
	}
	if len(s.Published) > 0 {
		page.Notes = append(page.Notes, "Published (Java): "+strings.Join(s.Published, "; "))
	}
	if len(res.Phases) == 0 { // else the verdict section says what each expected
		for _, e := range s.Expect {
			page.Notes = append(page.Notes, "Expected ("+cmp.Or(e.Target, "all")+"): "+e.Says)
		}
	}
	page.Notes = append(page.Notes, signalLines(s)...)
	page.Notes = append(page.Notes, "Board panels: "+strings.Join(quoted(s.Panels), ", "))
	if q := quickLine(res); q != "" {
		page.Notes = append([]string{q}, page.Notes...)
	}
	var b htmlreport.Builder
	if sec, ok := verdictSection(&b, res); ok {
		page.Sections = append(page.Sections, sec)
	}
	var tasksLabels []string
	var tasksSeconds []float64
	for _, p := range res.Phases {
		sp := phaseSpec(s, p.Name)
		main, detail := TableOf(p).Split()
		sec := htmlreport.Section{Title: p.Name + ": " + scenario.Describe(sp), Head: main.Head, Rows: main.Rows,
			More: append([]htmlreport.Table{{Caption: serverSide, Head: detail.Head, Rows: detail.Rows}}, viewTables(s, p)...)}
		if sp.Bound != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("Bound: %s = %.0f requests/s.", sp.Bound.What, sp.Bound.RPS()))
		}
		if sp.Note != "" {
			sec.Notes = append(sec.Notes, sp.Note)
		}
		for _, w := range Warnings(p) {
			sec.Notes = append(sec.Notes, "Warning, "+w)
		}
		if n := clampNote(p); n != "" {
			sec.Notes = append(sec.Notes, n)
		}
		if p.Loadtest != nil {
			runs, _ := chartRuns(p, result.Representative(p.Loadtest.Runs))
			sec.Charts = b.HTTPCharts(runs)
			if res.Count > 1 {
				sec.Notes = append(sec.Notes, fmt.Sprintf("Each target ran %d times: the table gives the median and the range, the charts the run with the median goodput.", res.Count))
			}
		}
		if sec.Links = snapshotLinks(p); len(sec.Links) > 0 {
			sec.Notes = append(sec.Notes, SnapshotsCaption+":")
		}
		if p.Tasks != nil {
			tasksLabels = append(tasksLabels, p.Name)
			tasksSeconds = append(tasksSeconds, max(p.Tasks.ScaledSeconds, p.Tasks.ElapsedSeconds))
		}
		page.Sections = append(page.Sections, sec)
		for i, ot := range outageTables(p.Outages) {
			title := []string{": keyed orders held to the table", ": keyed orders, answers second by second"}[i]
			page.Sections = append(page.Sections, htmlreport.Section{Title: p.Name + title, Head: ot.Head, Rows: ot.Rows})
		}
	}
	if len(tasksLabels) > 0 {
		page.Sections = append(page.Sections, htmlreport.Section{Title: "In-process tasks side by side",
			Charts: []htmlreport.Chart{b.Bars("Time for all jobs (scaled to the full count)", "s", tasksLabels, tasksSeconds)}})
	}
	return htmlreport.Write(w, page)
}

func phaseSpec(s scenario.Scenario, name string) scenario.Phase {
	for _, p := range s.Phases {
		if p.Name == name {
			return p
		}
	}
	return scenario.Phase{Name: name}
}

func command(res *result.Result) string {
	c := "make scenario NAME=" + res.Scenario.Name
	quick, count := " QUICK=1", " COUNT=%d"
	if !res.Local {
		c, quick, count = "lab scenario -lab "+res.Scenario.Name, " -quick", " -count %d"
	}
	if res.Quick {
		c += quick
	}
	if res.Count > 1 {
		c += fmt.Sprintf(count, res.Count)
	}
	return c
}

func hostLine(res *result.Result) string {
	h := res.Host
	env := scenario.EnvString(res.Scenario.Env)
	return fmt.Sprintf("%s, %d CPUs, %s, started %s; services with %s", h.Arch, h.CPUs, h.GoVersion,
		res.StartedAt.Format("2006-01-02 15:04 UTC"), env)
}

func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = `"` + s + `"`
	}
	return out
}

// verdictSection heads the HTML report with the run's picture (committed
// per second against the bound, success p99 against its target, answers
// by status, misses marked), the conclusion and the verdicts in words.
func verdictSection(b *htmlreport.Builder, res *result.Result) (htmlreport.Section, bool) {
	pic := result.PictureOf(res)
	if len(pic.Phases) == 0 || len(res.Scenario.Expect) == 0 {
		return htmlreport.Section{}, false
	}
	sec := htmlreport.Section{Title: "Verdict", Notes: []string{result.Conclusion(res)}}
	for _, v := range result.VerdictsOf(res) {
		sec.Notes = append(sec.Notes, v.String())
	}
	sec.Charts = append(sec.Charts, b.Verdict(result.PictureRows(pic)))
	return sec, true
}
