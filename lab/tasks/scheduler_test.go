//go:build labcheck

package tasks

import (
	"testing"
	"time"
)

// Go's scheduler, read in-process: CPU-bound jobs on a goroutine each, each
// longer than the scheduler's 10 ms time slice, queue for the cores
// (nearly all runnable at once, and waits for a thread in the latency
// histogram); on a GOMAXPROCS pool no more are runnable than its workers
// and the two goroutines around them; sleeping jobs park (waiting), one
// goroutine each.
func TestStatsSayWhatTheSchedulerSaw(t *testing.T) {
	const jobs, rounds = 40, 30_000
	g := Goroutines(jobs, SHA256Chain(rounds))
	if g.PeakRunnable < jobs/2 || g.Latencies == 0 || g.LatencyP99 <= 0 || g.MeanRunnable <= 0 {
		t.Errorf("a goroutine per CPU-bound job: %+v; want %d runnable or about at the peak, and waits for a thread", g.Scheduler, jobs)
	}
	p := Pool(0, jobs, SHA256Chain(rounds))
	if p.PeakRunnable > float64(p.Workers+2) || p.PeakRunning < 1 {
		t.Errorf("a pool of %d: %+v; want at most %d runnable (its workers, the feeder, the sampler) and one running", p.Workers, p.Scheduler, p.Workers+2)
	}
	if s := Goroutines(1000, Sleep(100*time.Millisecond)); s.PeakWaiting < 900 || s.PeakNotInGo > 10 {
		t.Errorf("1,000 sleeping jobs: %+v; want about 1,000 waiting, none in a system call", s.Scheduler)
	}
}
