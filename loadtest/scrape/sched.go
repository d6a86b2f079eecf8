package scrape

// Scheduler is what Go's scheduler said of a run: the services export it
// from runtime/metrics as go_sched_* (docs/metrics.md); an in-process run
// reads runtime/metrics itself (lab/tasks).
type Scheduler struct {
	// LatencyP99 is the p99, over the run, of how long a goroutine that
	// could run waited for a thread to run on: CPU contention, measured.
	// LatencyBeyond says the p99 lies past the histogram's highest finite
	// bound, which LatencyP99 then is (client_golang's buckets for it end
	// at about 117 ms). Latencies counts the waits it covers.
	LatencyP99    float64 `json:"sched_latency_p99_seconds"`
	LatencyBeyond bool    `json:"sched_latency_p99_beyond_buckets,omitempty"`
	Latencies     float64 `json:"sched_latencies"`
	// Goroutines by state over the samples: runnable (ready, waiting for a
	// thread), running (at most GOMAXPROCS), waiting (parked: a timer, a
	// channel, a lock, the network) and not in Go (in a system call or cgo,
	// each holding an OS thread).
	PeakRunnable float64 `json:"peak_runnable_goroutines"`
	MeanRunnable float64 `json:"mean_runnable_goroutines"`
	PeakRunning  float64 `json:"peak_running_goroutines"`
	PeakWaiting  float64 `json:"peak_waiting_goroutines"`
	PeakNotInGo  float64 `json:"peak_not_in_go_goroutines"`
}

// Exported says the target exported the scheduler's series at all (a
// running process has a goroutine running, and has scheduled one).
func (s Scheduler) Exported() bool { return s.Latencies > 0 || s.PeakRunning > 0 }

// SetLatency sets the latency figures from the run's latency buckets
// (cumulative, the run's increase).
func (s *Scheduler) SetLatency(b []Bucket) {
	s.LatencyP99, s.LatencyBeyond, s.Latencies = Quantile(0.99, b), beyond(0.99, b), 0
	if n := len(b); n > 0 {
		s.Latencies = b[n-1].Count
	}
}

// beyond says the q-quantile of cumulative buckets b falls in the +Inf
// bucket, past the highest finite bound (where Quantile stops).
func beyond(q float64, b []Bucket) bool {
	n := len(b)
	if n < 2 || b[n-1].Count <= 0 {
		return false
	}
	return b[n-2].Count < q*b[n-1].Count
}

// schedulerOf summarises the scheduler's series of a run's samples.
func schedulerOf(samples []Sample) Scheduler {
	var s Scheduler
	if len(samples) == 0 {
		return s
	}
	snapshots := make([][]Bucket, len(samples))
	var runnable float64
	for i, x := range samples {
		s.PeakRunnable, s.PeakRunning = max(s.PeakRunnable, x.Runnable), max(s.PeakRunning, x.Running)
		s.PeakWaiting, s.PeakNotInGo = max(s.PeakWaiting, x.Waiting), max(s.PeakNotInGo, x.NotInGo)
		runnable += x.Runnable
		snapshots[i] = x.SchedLatency
	}
	s.MeanRunnable = runnable / float64(len(samples))
	s.SetLatency(Increase(snapshots))
	return s
}
