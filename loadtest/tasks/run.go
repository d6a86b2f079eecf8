package tasks

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Stats is what one run of n jobs measured.
type Stats struct {
	Jobs           int           `json:"jobs"`
	Workers        int           `json:"workers"` // 0: a goroutine per job
	Elapsed        time.Duration `json:"elapsed_ns"`
	PeakGoroutines int           `json:"peak_goroutines"`
	PeakHeapBytes  uint64        `json:"peak_heap_inuse_bytes"`
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
	return measure(n, 0, func() {
		var wg sync.WaitGroup
		for range n {
			wg.Go(job)
		}
		wg.Wait()
	})
}

// Pool runs n jobs on workers goroutines that take them from a channel, like
// a fixed thread pool's queue. workers <= 0 means GOMAXPROCS.
func Pool(workers, n int, job Job) Stats {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return measure(n, workers, func() {
		queue := make(chan struct{}, workers)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range queue {
					job()
				}
			})
		}
		for range n {
			queue <- struct{}{}
		}
		close(queue)
		wg.Wait()
	})
}

// measure times run while a sampler records the peak goroutine count and
// heap every 5 ms.
func measure(n, workers int, run func()) Stats {
	var peakG atomic.Int64
	var peakHeap atomic.Uint64
	sample := func() {
		if g := int64(runtime.NumGoroutine()); g > peakG.Load() {
			peakG.Store(g)
		}
		if h := heapInuse(); h > peakHeap.Load() {
			peakHeap.Store(h)
		}
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
	start := time.Now()
	run()
	elapsed := time.Since(start)
	close(stop)
	<-done
	return Stats{Jobs: n, Workers: workers, Elapsed: elapsed, PeakGoroutines: int(peakG.Load()), PeakHeapBytes: peakHeap.Load()}
}
