package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var figure = regexp.MustCompile(`\d[\d,]*(?:\.\d+)?`)

// unquoted returns the figures of a Markdown table's body rows that the
// report does not contain, as written (a table copied from a report's
// Markdown quotes its figures exactly).
func unquoted(table, report string) []string {
	var missing []string
	for i, line := range strings.Split(table, "\n") {
		if i < 2 || !strings.HasPrefix(line, "|") {
			continue // the header and the alignment row
		}
		for _, f := range figure.FindAllString(line, -1) {
			if !strings.Contains(report, f) && !slices.Contains(missing, f) {
				missing = append(missing, f)
			}
		}
	}
	return missing
}

// tableAfter returns the first Markdown table after position i of text.
func tableAfter(text string, i int) string {
	lines := strings.Split(text[i:], "\n")
	var table []string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "|") {
			table = append(table, l)
		} else if len(table) > 0 {
			break
		}
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
}

// TestResultsTablesQuoteTheirReports: a page that links a committed report
// (a Markdown report under docs/results/) quotes, in the first table after
// the link, only figures of that report.
func TestResultsTablesQuoteTheirReports(t *testing.T) {
	reports := 0
	for _, page := range markdownFiles(t) {
		data, _ := os.ReadFile(filepath.Join(root, page))
		text := string(data)
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
				t.Errorf("%s links the report %s with no table after it", page, target)
				continue
			}
			if missing := unquoted(table, string(report)); len(missing) > 0 {
				t.Errorf("%s: the table after the link to %s quotes %v, which the report does not contain", page, target, missing)
			}
		}
	}
	t.Logf("%d linked reports checked (docs/results/README.md: none is committed yet)", reports)
}
