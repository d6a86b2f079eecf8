package htmlreport

import (
	"time"

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

// RateWindow is the span a rate chart averages over. The samples come
// every 250 ms, and a rate between two of them swings with what each quarter
// second happened to hold (a batch answered just before or just after the
// scrape): from 0 to 18,000 req/s and back in a saturated run. A rate over
// the last second reads at a glance; the per-sample rate stays on the chart
// as a series hidden until its legend entry is clicked.
const RateWindow = time.Second

// over returns m over time for one run: a gauge as sampled, a rate between
// consecutive samples.
func (m Metric) over(r report.Run) []Point { return m.rate(r, 0) }

// windowed returns m over time for one run, a rate over the window before
// each sample (RateWindow; less at the start of the run, before a whole
// window has passed); a gauge as sampled.
func (m Metric) windowed(r report.Run) []Point { return m.rate(r, RateWindow) }

// rate is m's points, a counter's increase divided over the span from the
// latest sample at least window before each one (the one before it, for
// window 0). A counter that went down (a restarted service) counts from
// its new value.
func (m Metric) rate(r report.Run, window time.Duration) []Point {
	if r.Server == nil {
		return nil
	}
	scale := m.Scale
	if scale == 0 {
		scale = 1
	}
	ss := r.Server.Samples
	var pts []Point
	from := 0
	for i, s := range ss {
		x := s.Time.Sub(r.StartedAt).Seconds()
		if !m.Rate {
			pts = append(pts, Point{x, m.Value(s) * scale})
			continue
		}
		if i == 0 {
			continue
		}
		for from+1 < i && s.Time.Sub(ss[from+1].Time) >= window {
			from++
		}
		if window == 0 {
			from = i - 1
		}
		dt := s.Time.Sub(ss[from].Time).Seconds()
		if dt <= 0 {
			continue
		}
		var inc float64
		for j := from + 1; j <= i; j++ {
			d := m.Value(ss[j]) - m.Value(ss[j-1])
			if d < 0 { // reset: the counter restarted from 0
				d = m.Value(ss[j])
			}
			inc += d
		}
		pts = append(pts, Point{x, inc / dt * scale})
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
