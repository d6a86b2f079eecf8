package tasks

import (
	"flag"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestGoroutinesAndPoolRunEveryJob(t *testing.T) {
	var n1, n2 int
	var mu = make(chan struct{}, 1)
	count := func(n *int) Job {
		return func() { mu <- struct{}{}; *n++; <-mu }
	}
	if s := Goroutines(500, count(&n1)); n1 != 500 || s.Jobs != 500 || s.Workers != 0 {
		t.Errorf("Goroutines ran %d jobs, stats %+v", n1, s)
	}
	if s := Pool(0, 500, count(&n2)); n2 != 500 || s.Workers < 1 {
		t.Errorf("Pool ran %d jobs, stats %+v", n2, s)
	}
}

func TestPoolOfOneSerialisesSleeps(t *testing.T) {
	// 4 jobs of 5 ms on one worker cannot take less than 20 ms: the pool
	// really is the bound (ceil(n/workers) x hold).
	if s := Pool(1, 4, Sleep(5*time.Millisecond)); s.Elapsed < 20*time.Millisecond {
		t.Errorf("pool of 1 ran 4 x 5 ms in %s", s.Elapsed)
	}
}

// poolJobs is how many jobs the 8-worker pool runs: the full 100,000 take
// ceil(100000/8) x 50 ms = 625 s, so by default it runs 2,000 (12.5 s) and
// reports the time scaled to 100,000, which is exact for a fixed pool.
var poolJobs = flag.Int("tasks.pooljobs", 2000, "jobs for the 8-worker pool of BenchmarkHundredThousandTasks (100000: the full 625 s)")

// BenchmarkHundredThousandTasks is scenario 4, hundred-thousand-tasks: 100,000
// background jobs of 50 ms on a goroutine each, versus a fixed pool of 8
// workers (Java's default @Async pool: about 678 s), versus a pool large
// enough for the load. Run it with -benchtime 1x (make bench).
func BenchmarkHundredThousandTasks(b *testing.B) {
	const jobs, hold = 100_000, 50 * time.Millisecond
	cases := []struct {
		name          string
		workers, jobs int
	}{
		{"goroutines", 0, jobs},
		{"pool-8", 8, *poolJobs},
		{"pool-1000", 1000, jobs},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var s Stats
			for b.Loop() {
				if c.workers == 0 {
					s = Goroutines(c.jobs, Sleep(hold))
				} else {
					s = Pool(c.workers, c.jobs, Sleep(hold))
				}
			}
			b.ReportMetric(s.Elapsed.Seconds()*jobs/float64(c.jobs), "s/100k-jobs")
			b.ReportMetric(float64(s.PeakGoroutines), "peak-goroutines")
			b.ReportMetric(float64(s.PeakHeapBytes)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(s.LatencyP99*1e3, "sched-p99-ms")
			b.ReportMetric(s.PeakWaiting, "peak-waiting")
		})
	}
}

// BenchmarkCPUBound is the in-process half of scenario 10: 2,000 chains of
// 5,000 SHA-256 rounds on a goroutine each versus a pool of GOMAXPROCS
// workers. No concurrency model adds cores: they tie.
func BenchmarkCPUBound(b *testing.B) {
	const jobs, rounds = 2000, 5000
	for _, c := range []struct {
		name    string
		workers int
	}{{"goroutines", -1}, {"pool-gomaxprocs", 0}} {
		b.Run(c.name, func(b *testing.B) {
			var s Stats
			for b.Loop() {
				if c.workers < 0 {
					s = Goroutines(jobs, SHA256Chain(rounds))
				} else {
					s = Pool(c.workers, jobs, SHA256Chain(rounds))
				}
			}
			b.ReportMetric(s.Throughput(), "jobs/s")
			b.ReportMetric(s.LatencyP99*1e3, "sched-p99-ms")
			b.ReportMetric(s.PeakRunnable, "peak-runnable")
		})
	}
}
