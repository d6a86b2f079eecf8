package report

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/orderlab/orderlab/loadtest/attack"
)

// ShowProgress rewrites one line on w every interval with a run's figures so
// far (elapsed time, answers per second over the last interval, p99 of
// successes, errors and rejections) until ctx is done, then clears it.
// Meant for a terminal.
func ShowProgress(ctx context.Context, w io.Writer, name string, get func() attack.Progress, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var prev attack.Progress
	for {
		select {
		case <-ctx.Done():
			fmt.Fprint(w, "\r\x1b[K")
			return
		case <-t.C:
			p := get()
			rps := 0.0
			if dt := (p.Elapsed - prev.Elapsed).Seconds(); dt > 0 {
				rps = float64(p.Answered-prev.Answered) / dt
			}
			fmt.Fprintf(w, "\r\x1b[K%s  %s  %.0f rps  p99 %s  errors %d  rejected %d",
				name, p.Elapsed.Round(time.Second), rps, FormatSeconds(p.P99.Seconds()), p.Errors, p.Rejected)
			prev = p
		}
	}
}
