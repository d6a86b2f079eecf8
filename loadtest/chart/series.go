package chart

import (
	"github.com/orderlab/orderlab/loadtest/report"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

// Point is one (seconds since the run started, value) pair.
type Point struct{ X, Y float64 }

// Metric reads one value from each sample; rate ones are turned into a
// per-second rate between consecutive samples.
type Metric struct {
	Title string
	Unit  string // axis name
	Value func(scrape.Sample) float64
	Rate  bool
	Scale float64 // multiply by (0: 1)
	// Optional charts are left out when every point of every run is zero.
	Optional bool
}

// over returns m over time for one run.
func (m Metric) over(r report.Run) []Point {
	if r.Server == nil {
		return nil
	}
	scale := m.Scale
	if scale == 0 {
		scale = 1
	}
	ss := r.Server.Samples
	var pts []Point
	for i, s := range ss {
		x := s.Time.Sub(r.StartedAt).Seconds()
		if !m.Rate {
			pts = append(pts, Point{x, m.Value(s) * scale})
			continue
		}
		if i == 0 {
			continue
		}
		dt := s.Time.Sub(ss[i-1].Time).Seconds()
		if dt <= 0 {
			continue
		}
		pts = append(pts, Point{x, max(0, m.Value(s)-m.Value(ss[i-1])) / dt * scale})
	}
	return pts
}

func queued(s scrape.Sample) float64 {
	q := s.Waiters
	for _, v := range s.QueueLength {
		q += v
	}
	return q
}

// OverTime are the server-side charts of an HTTP phase.
var OverTime = []Metric{
	{Title: "Throughput (answered requests/s)", Unit: "req/s", Value: func(s scrape.Sample) float64 { return s.Requests }, Rate: true},
	{Title: "Orders committed/s", Unit: "orders/s", Value: func(s scrape.Sample) float64 { return s.Orders }, Rate: true, Optional: true},
	{Title: "Pool acquire wait p99", Unit: "ms", Value: func(s scrape.Sample) float64 { return s.AcquireWaitP99 }, Scale: 1e3},
	{Title: "Queue length (pipeline queues + semaphore waiters)", Unit: "items", Value: queued},
	{Title: "Requests in flight", Unit: "requests", Value: func(s scrape.Sample) float64 { return s.InFlight }},
	{Title: "Goroutines", Unit: "goroutines", Value: func(s scrape.Sample) float64 { return s.Goroutines }},
	{Title: "OS threads (go_threads)", Unit: "threads", Value: func(s scrape.Sample) float64 { return s.Threads }},
	{Title: "RSS", Unit: "MiB", Value: func(s scrape.Sample) float64 { return s.RSSBytes }, Scale: 1.0 / (1 << 20)},
	{Title: "Heap in use", Unit: "MiB", Value: func(s scrape.Sample) float64 { return s.HeapInuse }, Scale: 1.0 / (1 << 20)},
	{Title: "Audit writes pending", Unit: "audits", Value: func(s scrape.Sample) float64 { return s.AuditPending }, Optional: true},
	{Title: "Server CPU (cores)", Unit: "cores", Value: func(s scrape.Sample) float64 { return s.CPUSeconds }, Rate: true},
	{Title: "Semaphore limit (fixed or adaptive)", Unit: "permits", Value: func(s scrape.Sample) float64 { return s.Limit }, Optional: true},
}
