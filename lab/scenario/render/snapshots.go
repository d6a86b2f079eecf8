package render

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/htmlreport"
	"github.com/orderlab/orderlab/loadtest/report"
)

// SnapshotsCaption heads a phase's flight recorder snapshots.
const SnapshotsCaption = "Flight recorder snapshots, the last seconds of the service's execution trace " +
	"(open one with go tool trace FILE; what to look for: docs/metrics.md, \"Inside the process\")"

// snapshotLinks are phase p's snapshots as list items: the target, the
// file linked relative to the report, and why it was taken; one that
// could not be taken says why not, and what asked for it.
func snapshotLinks(p result.PhaseResult) []htmlreport.Link {
	var out []htmlreport.Link
	for _, s := range p.Snapshots {
		if s.Err != "" {
			out = append(out, htmlreport.Link{Text: s.Target + ": not kept: " + s.Err,
				Note: "(asked for because " + s.Why + ")"})
			continue
		}
		out = append(out, htmlreport.Link{Text: s.File, Href: s.File,
			Note: fmt.Sprintf("(%s, %s%s), taken because %s", s.Target, report.FormatBytes(float64(s.Bytes)), repetition(s), s.Why)})
	}
	return out
}

// repetition names a snapshot's repetition when it is not the first.
func repetition(s result.Snapshot) string {
	if s.Repetition == 0 {
		return ""
	}
	return fmt.Sprintf(", repetition %d", s.Repetition+1)
}

// writeSnapshotsMarkdown writes phase p's snapshots, if any, as a list.
func writeSnapshotsMarkdown(b *strings.Builder, p result.PhaseResult) {
	links := snapshotLinks(p)
	if len(links) == 0 {
		return
	}
	b.WriteString(SnapshotsCaption + ":\n\n")
	for _, l := range links {
		if l.Href != "" {
			fmt.Fprintf(b, "- [%s](%s) %s\n", l.Text, l.Href, l.Note)
		} else {
			fmt.Fprintf(b, "- %s %s\n", l.Text, l.Note)
		}
	}
	b.WriteString("\n")
}

// snapshotPaths are the trace files res's snapshots wrote in dir.
func snapshotPaths(dir string, res *result.Result) []string {
	var out []string
	for _, p := range res.Phases {
		for _, s := range p.Snapshots {
			if s.File != "" {
				out = append(out, filepath.Join(dir, s.File))
			}
		}
	}
	return out
}
