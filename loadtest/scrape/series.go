package scrape

import "time"

// Series is every scrape of one target during a run.
type Series struct {
	URL       string   `json:"url"`
	Samples   []Sample `json:"samples"`
	Errors    int      `json:"errors"`
	LastError string   `json:"last_error,omitempty"`
}

func (s *Series) add(x Sample, err error) {
	if err != nil {
		s.Errors++
		s.LastError = err.Error()
		return
	}
	if n := len(s.Samples); n > 0 {
		prev := s.Samples[n-1]
		x.AcquireWaitP99, _ = capWait(Quantile(0.99, Delta(prev.AcquireWait, x.AcquireWait)), max(waitCeiling(prev), waitCeiling(x)))
	}
	s.Samples = append(s.Samples, x)
}

// Summary is what a run did to a target, as its metrics tell it.
type Summary struct {
	Scrapes          int     `json:"scrapes"`
	Errors           int     `json:"errors"`
	PeakGoroutines   float64 `json:"peak_goroutines"`
	PeakThreads      float64 `json:"peak_threads"`
	PeakRSSBytes     float64 `json:"peak_rss_bytes"`
	PeakPoolAcquired float64 `json:"peak_pool_acquired_connections"`
	PeakQueueLength  float64 `json:"peak_queue_length"` // all stages together
	PeakHeapInuse    float64 `json:"peak_heap_inuse_bytes"`
	PeakInFlight     float64 `json:"peak_in_flight"`
	PeakConnections  float64 `json:"peak_connections,omitempty"`
	PeakAuditPending float64 `json:"peak_audit_pending"`
	// AcquireWaitP99 is the p99 pool-acquire wait over the run, from the
	// bucket deltas between consecutive scrapes summed over the run (a
	// counter reset counts from zero, as in PromQL's increase());
	// AcquireWaits is the number of acquires it covers. Like each
	// sample's, it is at most the longest REQUEST_TIMEOUT of the run,
	// which ends every wait; AcquireWaitP99Capped says the buckets put it
	// above (interpolating inside the bucket that holds the deadline).
	AcquireWaitP99       float64 `json:"acquire_wait_p99_seconds"`
	AcquireWaitP99Capped bool    `json:"acquire_wait_p99_capped,omitempty"`
	AcquireWaits         float64 `json:"acquire_waits"`
	Rejections           float64 `json:"rejections"` // during the run, summed per interval like AcquireWaits
	// StarvedAcquires are the run's acquires that its deadline ended
	// while they waited (or a client that gave up): of AcquireWaits.
	StarvedAcquires float64 `json:"starved_acquires,omitempty"`
	// CPUSeconds, Answers and Commits are the run's increases of the
	// server's CPU time (user and system), of its answered API requests
	// (probes excluded) and of its committed orders.
	CPUSeconds float64 `json:"cpu_seconds"`
	Answers    float64 `json:"answers"`
	Commits    float64 `json:"commits"`
	Window     float64 `json:"window_seconds"`
	// MeanHoldSeconds is the mean connection hold time over the run (the W
	// of Little's law) and PoolMax the pool's size at the end (summed over
	// replicas): PoolMax / MeanHoldSeconds is the pool's bound as measured.
	MeanHoldSeconds float64 `json:"mean_hold_seconds,omitempty"`
	PoolMax         float64 `json:"pool_max_connections,omitempty"`
	// OKHoldsPerSecond and MeanOKHoldSeconds are the rate and the mean
	// hold of the holds whose call succeeded (a transaction that
	// committed, a read that answered), and PoolUse, by Little's law, the
	// share of the pool they kept busy: OKHoldsPerSecond x
	// MeanOKHoldSeconds / PoolMax, both over the scrapes' window (a
	// report puts them over the load's own time: report.Server). A pool
	// busy with calls that fail (run into their deadline) is not in use
	// by this count.
	OKHoldsPerSecond  float64 `json:"ok_holds_per_second,omitempty"`
	MeanOKHoldSeconds float64 `json:"mean_ok_hold_seconds,omitempty"`
	PoolUse           float64 `json:"pool_use,omitempty"`
	// DBErrors are the run's failed database calls by class.
	DBErrors map[string]float64 `json:"db_errors,omitempty"`
	Scheduler
}

// Summary computes the peaks and the run's deltas.
func (s Series) Summary() Summary {
	sum := Summary{Scrapes: len(s.Samples), Errors: s.Errors}
	if len(s.Samples) == 0 {
		return sum
	}
	buckets := make([][]Bucket, len(s.Samples))
	var holds, held, okHolds, okHeld, ceiling float64
	for i, x := range s.Samples {
		ceiling = max(ceiling, waitCeiling(x))
		sum.PeakGoroutines = max(sum.PeakGoroutines, x.Goroutines)
		sum.PeakThreads = max(sum.PeakThreads, x.Threads)
		sum.PeakRSSBytes = max(sum.PeakRSSBytes, x.RSSBytes)
		sum.PeakPoolAcquired = max(sum.PeakPoolAcquired, x.PoolAcquired)
		sum.PeakHeapInuse = max(sum.PeakHeapInuse, x.HeapInuse)
		sum.PeakInFlight = max(sum.PeakInFlight, x.InFlight)
		sum.PeakConnections = max(sum.PeakConnections, x.Connections)
		sum.PeakAuditPending = max(sum.PeakAuditPending, x.AuditPending)
		var q float64
		for _, v := range x.QueueLength {
			q += v
		}
		sum.PeakQueueLength = max(sum.PeakQueueLength, q)
		buckets[i] = x.AcquireWait
		if i > 0 {
			prev := s.Samples[i-1]
			sum.Rejections += counterIncrease(prev.Rejections, x.Rejections)
			sum.StarvedAcquires += counterIncrease(prev.CanceledAcquires, x.CanceledAcquires)
			sum.CPUSeconds += counterIncrease(prev.CPUSeconds, x.CPUSeconds)
			sum.Answers += counterIncrease(prev.Requests, x.Requests)
			sum.Commits += counterIncrease(prev.Orders, x.Orders)
			holds += counterIncrease(prev.Holds, x.Holds)
			held += counterIncrease(prev.HoldSeconds, x.HoldSeconds)
			okHolds += counterIncrease(prev.OKHolds, x.OKHolds)
			okHeld += counterIncrease(prev.OKHoldSeconds, x.OKHoldSeconds)
			for class, v := range x.DBErrors {
				if d := counterIncrease(prev.DBErrors[class], v); d > 0 {
					if sum.DBErrors == nil {
						sum.DBErrors = map[string]float64{}
					}
					sum.DBErrors[class] += d
				}
			}
		}
	}
	sum.Scheduler = schedulerOf(s.Samples)
	d := Increase(buckets)
	sum.AcquireWaitP99, sum.AcquireWaitP99Capped = capWait(Quantile(0.99, d), ceiling)
	if n := len(d); n > 0 {
		sum.AcquireWaits = d[n-1].Count
	}
	if holds > 0 {
		sum.MeanHoldSeconds = held / holds
	}
	first, last := s.Samples[0], s.Samples[len(s.Samples)-1]
	sum.PoolMax = last.PoolMax
	sum.Window = last.Time.Sub(first.Time).Round(time.Millisecond).Seconds()
	if okHolds > 0 && sum.Window > 0 {
		sum.OKHoldsPerSecond = okHolds / sum.Window
		sum.MeanOKHoldSeconds = okHeld / okHolds
		if sum.PoolMax > 0 {
			sum.PoolUse = okHeld / sum.Window / sum.PoolMax
		}
	}
	return sum
}

// waitCeiling is the longest a pool acquire can wait on the target as
// sample x shows it: its REQUEST_TIMEOUT (the knob gauge), whose deadline
// ends every wait; 0 when the sample does not show it.
func waitCeiling(x Sample) float64 { return x.Knobs[knobRequestTimeout] }

// capWait is a wait quantile q read from buckets, at most ceiling (when
// known, above 0): interpolating inside the bucket that holds the deadline
// can put a quantile above every wait there was (2.48 s against a 2 s
// deadline). capped says it was.
func capWait(q, ceiling float64) (wait float64, capped bool) {
	if ceiling > 0 && q > ceiling {
		return ceiling, true
	}
	return q, false
}
