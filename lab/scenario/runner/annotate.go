package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/loadtest/annotate"
)

// AnnotationTag is on every phase's annotation, beside the scenario's name
// (and annotate.Tag, which the board's "Load runs" query selects).
const AnnotationTag = "scenario"

// annotate opens phase p's region on the board: the scenario, the phase
// and the question it asks. A failure to post is logged, not fatal.
func (r *Runner) annotate(ctx context.Context, s scenario.Scenario, p scenario.Phase) annotate.Run {
	if r.Annotate == nil || p.Tasks != nil {
		return annotate.Run{}
	}
	text := fmt.Sprintf("scenario %s, phase %s: %s", scenario.Label(s), p.Name, strings.TrimSpace(s.Question))
	mark, err := r.Annotate.Start(ctx, text, AnnotationTag, s.Name)
	if err != nil {
		fmt.Fprintf(r.Log, "   annotation: %v\n", err)
	}
	return mark
}

// endMark closes a phase's region, also after Ctrl-C.
func (r *Runner) endMark(ctx context.Context, mark annotate.Run) {
	if err := r.Annotate.End(context.WithoutCancel(ctx), mark); err != nil {
		fmt.Fprintf(r.Log, "   annotation: %v\n", err)
	}
}

// boardRange is the board's URL showing exactly from..to.
func boardRange(board string, from, to time.Time) string {
	sep := "?"
	if strings.Contains(board, "?") {
		sep = "&"
	}
	return fmt.Sprintf("%s%sfrom=%d&to=%d", board, sep, from.UnixMilli(), to.UnixMilli())
}
