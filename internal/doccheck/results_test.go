package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var figure = regexp.MustCompile(`\d`)

// unquoted returns the cells of a Markdown table's body rows that hold a
// figure and that the report does not contain, as written (bold aside): a
// table copied from a report's Markdown quotes its cells exactly, and a
// cell is checked whole, so that "244ms" does not pass because the report
// has a "244.1 KiB" somewhere.
func unquoted(table, report string) []string {
	var missing []string
	for i, line := range strings.Split(table, "\n") {
		if i < 2 || !strings.HasPrefix(line, "|") {
			continue // the header and the alignment row
		}
		for _, cell := range strings.Split(strings.Trim(line, "| "), " | ") {
			cell = strings.TrimSpace(strings.ReplaceAll(cell, "**", ""))
			if figure.MatchString(cell) && !strings.Contains(report, cell) && !slices.Contains(missing, cell) {
				missing = append(missing, cell)
			}
		}
	}
	return missing
}

// tableAfter returns the table that directly follows the paragraph holding
// position i of text (the paragraph's end, blank lines, then rows), or "".
func tableAfter(text string, i int) string {
	rest := text[i:]
	end := strings.Index(rest, "\n\n")
	if end < 0 {
		return ""
	}
	var table []string
	for _, l := range strings.Split(strings.TrimLeft(rest[end:], "\n"), "\n") {
		if !strings.HasPrefix(l, "|") {
			break
		}
		table = append(table, l)
	}
	return strings.Join(table, "\n")
}

func TestUnquotedFindsFiguresMissingFromTheReport(t *testing.T) {
	report := "| service | req/s | p99 |\n|---|---:|---:|\n| unbounded | 965 | 524 ms |\n"
	if got := unquoted("| s | r | p |\n|---|---|---|\n| unbounded | 965 | 524 ms |", report); len(got) != 0 {
		t.Errorf("a table copied from its report: unquoted = %v, want none", got)
	}
	if got := unquoted("| s | r | p |\n|---|---|---|\n| unbounded | 966 | 524 ms |", report); !slices.Equal(got, []string{"966"}) {
		t.Errorf("a table with one figure changed: unquoted = %v, want [966]", got)
	}
	if got := unquoted("| s | p |\n|---|---|\n| unbounded | **52 ms** |", report); !slices.Equal(got, []string{"52 ms"}) {
		t.Errorf("a cell whose figure is only part of one in the report: unquoted = %v, want [52 ms]", got)
	}
	page := "Median of 3, [report](r.md):\n\n| s | r |\n|---|---|\n| u | 965 |\n\nText.\n"
	if got := tableAfter(page, strings.Index(page, "](")); got != "| s | r |\n|---|---|\n| u | 965 |" {
		t.Errorf("tableAfter a link paragraph = %q, want its table", got)
	}
	if got := tableAfter("See [report](r.md).\n\nText.\n\n| s |\n", 5); got != "" {
		t.Errorf("tableAfter a link followed by text = %q, want none", got)
	}
}

// TestResultsTablesQuoteTheirReports: a table that directly follows a
// paragraph linking committed reports (Markdown reports under
// docs/results/) quotes only figures of those reports: a table of before
// and after quotes the two its paragraph links.
func TestResultsTablesQuoteTheirReports(t *testing.T) {
	reports, tables := 0, 0
	for _, page := range markdownFiles(t) {
		data, _ := os.ReadFile(filepath.Join(root, page))
		text := string(data)
		type linked struct {
			table   string
			targets []string
			reports strings.Builder
		}
		var order []int
		byParagraph := map[int]*linked{} // by the end of the linking paragraph
		for _, m := range mdLink.FindAllStringSubmatchIndex(text, -1) {
			target := filepath.Join(filepath.Dir(page), text[m[2]:m[3]])
			if !strings.HasPrefix(target, "docs/results/") || !strings.HasSuffix(target, ".md") || filepath.Base(target) == "README.md" {
				continue
			}
			reports++
			report, err := os.ReadFile(filepath.Join(root, target))
			if err != nil {
				t.Errorf("%s links %s: %v", page, target, err)
				continue
			}
			table := tableAfter(text, m[1])
			if table == "" {
				continue // a link to the report, with no table of its figures
			}
			end := m[1] + strings.Index(text[m[1]:], "\n\n")
			l := byParagraph[end]
			if l == nil {
				l = &linked{table: table}
				byParagraph[end] = l
				order = append(order, end)
			}
			l.targets = append(l.targets, target)
			l.reports.Write(report)
			l.reports.WriteString("\n")
		}
		for _, end := range order {
			l := byParagraph[end]
			tables++
			if missing := unquoted(l.table, l.reports.String()); len(missing) > 0 {
				t.Errorf("%s: the table after the link to %s quotes %v, which the report does not contain", page, strings.Join(l.targets, " and "), missing)
			}
		}
	}
	t.Logf("%d links to committed reports, %d tables held to them", reports, tables)
}
