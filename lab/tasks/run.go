package tasks

import (
	"runtime"
	"sync"
	"time"

	"github.com/orderlab/orderlab/loadtest/scrape"
)

// Stats is what one run of n jobs measured.
type Stats struct {
	Jobs           int           `json:"jobs"`
	Workers        int           `json:"workers"` // 0: a goroutine per job
	Elapsed        time.Duration `json:"elapsed_ns"`
	PeakGoroutines int           `json:"peak_goroutines"`
	PeakHeapBytes  uint64        `json:"peak_heap_inuse_bytes"`
	// Go's scheduler over the run, from runtime/metrics in-process: the
	// goroutines by state sampled with the peaks, the latency from its
	// histogram before and after (the runner's few goroutines included).
	scrape.Scheduler
}

// Throughput is jobs per second.
func (s Stats) Throughput() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Jobs) / s.Elapsed.Seconds()
}

// Goroutines starts one goroutine per job, n in all, and waits for every one.
func Goroutines(n int, job Job) Stats {
	return measure(n, 0, func(started func()) {
		var wg sync.WaitGroup
		for range n {
			wg.Go(job)
		}
		started()
		wg.Wait()
	})
}

// Pool runs n jobs on workers goroutines that take them from a channel, like
// a fixed thread pool's queue. workers <= 0 means GOMAXPROCS.
func Pool(workers, n int, job Job) Stats {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return measure(n, workers, func(started func()) {
		queue := make(chan struct{}, workers)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range queue {
					job()
				}
			})
		}
		started()
		for range n {
			queue <- struct{}{}
		}
		close(queue)
		wg.Wait()
	})
}

// measure times run while a sampler records the peak goroutine count, the
// heap and the goroutines by state every 5 ms, and once more when run calls
// started, once every goroutine it starts is there: the sampler is one of
// the goroutines waiting for a core, and behind n CPU-bound jobs it may
// first run when most are done. The samples are written under mu, and the
// sampler has stopped before they are read.
func measure(n, workers int, run func(started func())) Stats {
	st := Stats{Jobs: n, Workers: workers}
	var samples int
	var runnableSum float64
	var mu sync.Mutex
	sample := func() {
		mu.Lock()
		defer mu.Unlock()
		g := readGauges()
		st.PeakGoroutines = max(st.PeakGoroutines, runtime.NumGoroutine())
		st.PeakHeapBytes = max(st.PeakHeapBytes, g.heap)
		st.PeakRunnable, st.PeakRunning = max(st.PeakRunnable, g.runnable), max(st.PeakRunning, g.running)
		st.PeakWaiting, st.PeakNotInGo = max(st.PeakWaiting, g.waiting), max(st.PeakNotInGo, g.notInGo)
		runnableSum += g.runnable
		samples++
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	before := latencyBuckets()
	start := time.Now()
	run(sample)
	st.Elapsed = time.Since(start)
	close(stop)
	<-done
	st.SetLatency(scrape.Delta(before, latencyBuckets()))
	if samples > 0 {
		st.MeanRunnable = runnableSum / float64(samples)
	}
	return st
}
