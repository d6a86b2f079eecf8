package scrape

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Sample is one scrape of a target's metrics.
type Sample struct {
	Time         time.Time          `json:"time"`
	Goroutines   float64            `json:"goroutines"`
	Threads      float64            `json:"threads"`
	RSSBytes     float64            `json:"rss_bytes"`
	PoolAcquired float64            `json:"pool_acquired_connections"`
	QueueLength  map[string]float64 `json:"queue_length,omitempty"` // per pipeline stage
	Rejections   float64            `json:"rejections_total"`       // limiter + pipeline, cumulative
	// AcquireWaits is the cumulative count of pool acquires; AcquireWaitP99
	// is the p99 of the acquires since the previous sample (0 when none).
	AcquireWaits   float64 `json:"acquire_waits_total"`
	AcquireWaitP99 float64 `json:"acquire_wait_p99_seconds"`
	// AcquireWait holds the cumulative acquire-wait buckets, summed over
	// the outcome label, so that any window's quantiles can be computed.
	AcquireWait []Bucket `json:"acquire_wait_buckets,omitempty"`
	// CanceledAcquires counts, cumulative, the acquires that ended
	// without a connection because their context did (outcome canceled):
	// requests starved in the pool until their deadline.
	CanceledAcquires float64 `json:"canceled_acquires_total,omitempty"`
	HeapInuse        float64 `json:"heap_inuse_bytes"`
	InFlight         float64 `json:"in_flight"`             // requests being served
	Connections      float64 `json:"connections,omitempty"` // API connections open, idle or active
	Requests         float64 `json:"requests_total"`        // answered, cumulative, probes excluded
	Orders           float64 `json:"orders_total"`          // committed, cumulative
	Waiters          float64 `json:"limiter_waiters"`       // semaphore: requests waiting for a permit
	// AuditPending counts audit writes queued or running (AUDIT_DELAY).
	AuditPending float64 `json:"audit_pending"`
	// Limit is the semaphore's current limit (fixed or adaptive).
	Limit float64 `json:"limiter_limit,omitempty"`
	// CPUSeconds is the process's CPU time, user and system, cumulative.
	CPUSeconds float64 `json:"cpu_seconds_total"`
	// Holds and HoldSeconds are the cumulative count and sum of connection
	// hold times (acquire to release), every outcome; OKHolds and
	// OKHoldSeconds those of the calls that succeeded (outcome ok: the
	// transaction committed, the read answered). PoolMax is the pool's size.
	Holds         float64 `json:"holds_total,omitempty"`
	HoldSeconds   float64 `json:"hold_seconds_total,omitempty"`
	OKHolds       float64 `json:"ok_holds_total,omitempty"`
	OKHoldSeconds float64 `json:"ok_hold_seconds_total,omitempty"`
	PoolMax       float64 `json:"pool_max_connections,omitempty"`
	// DBErrors counts failed database calls by class, cumulative.
	DBErrors map[string]float64 `json:"db_errors_total,omitempty"`
	// Goroutines by state, as Go's scheduler counts them, and its
	// cumulative latency buckets (summed over replicas): see Scheduler.
	Runnable     float64  `json:"runnable_goroutines,omitempty"`
	Running      float64  `json:"running_goroutines,omitempty"`
	Waiting      float64  `json:"waiting_goroutines,omitempty"`
	NotInGo      float64  `json:"not_in_go_goroutines,omitempty"`
	SchedLatency []Bucket `json:"sched_latency_buckets,omitempty"`
	// MaxFiles is the target's open-files limit (the lowest over its
	// replicas; 0 when it does not say): a server needs one a connection.
	// Not kept in reports.
	MaxFiles float64 `json:"-"`
	// Knobs are the services' numeric knobs by name (durations in seconds,
	// booleans 0/1), for a caller that waits for a change to show; not
	// kept in reports.
	Knobs map[string]float64 `json:"-"`
}

// Bucket is one cumulative histogram bucket. In JSON it reads
// {"le":"0.005","count":12}, with "+Inf" for the last bound, as Prometheus writes it.
type Bucket struct {
	UpperBound float64
	Count      float64
}

type jsonBucket struct {
	LE    string  `json:"le"`
	Count float64 `json:"count"`
}

// MarshalJSON writes the bound as a string, since JSON has no +Inf.
func (b Bucket) MarshalJSON() ([]byte, error) {
	return json.Marshal(jsonBucket{LE: strconv.FormatFloat(b.UpperBound, 'g', -1, 64), Count: b.Count})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (b *Bucket) UnmarshalJSON(data []byte) error {
	var j jsonBucket
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	ub, err := strconv.ParseFloat(j.LE, 64)
	if err != nil {
		return fmt.Errorf("bucket bound %q: %w", j.LE, err)
	}
	*b = Bucket{UpperBound: ub, Count: j.Count}
	return nil
}

// parse decodes an exposition in format f into a Sample.
func parse(r io.Reader, f expfmt.Format, at time.Time) (Sample, error) {
	fams := make(map[string]*dto.MetricFamily)
	if err := decode(r, f, fams); err != nil {
		return Sample{}, err
	}
	return sampleOf(fams, at), nil
}

// decode adds the families of an exposition to fams; a family already
// there gets the new series appended, so that the expositions of several
// replicas read as one target whose figures are their sums.
func decode(r io.Reader, f expfmt.Format, fams map[string]*dto.MetricFamily) error {
	dec := expfmt.NewDecoder(r, f)
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("parsing metrics: %w", err)
		}
		if had := fams[mf.GetName()]; had != nil {
			had.Metric = append(had.Metric, mf.Metric...)
		} else {
			fams[mf.GetName()] = &mf
		}
	}
}

// sampleOf reads a Sample from decoded families.
func sampleOf(fams map[string]*dto.MetricFamily, at time.Time) Sample {
	s := Sample{
		Time:         at,
		Goroutines:   sum(fams[metricGoroutines]),
		Threads:      sum(fams[metricThreads]),
		RSSBytes:     sum(fams[metricRSS]),
		PoolAcquired: sum(fams[metricPoolAcquired]),
		Rejections:   sum(fams[metricLimiterRej]) + sum(fams[metricPipelineRej]),
		AcquireWait:  buckets(fams[metricAcquireWait]),
		HeapInuse:    sum(fams[metricHeapInuse]),
		InFlight:     sum(fams[metricInFlight]),
		Connections:  sum(fams[metricConnections]),
		Requests:     requests(fams[metricRequests]),
		Orders:       sum(fams[metricOrders]),
		Waiters:      sum(fams[metricWaiters]),
		AuditPending: sum(fams[metricAuditPending]),
		Limit:        sum(fams[metricLimit]),
		CPUSeconds:   sum(fams[metricCPU]),
		PoolMax:      sum(fams[metricPoolMax]),
		Runnable:     sum(fams[metricRunnable]),
		Running:      sum(fams[metricRunning]),
		Waiting:      sum(fams[metricWaiting]),
		NotInGo:      sum(fams[metricNotInGo]),
		SchedLatency: buckets(fams[metricSchedLatency]),
	}
	for _, m := range fams[metricMaxFiles].GetMetric() {
		if v := value(m); s.MaxFiles == 0 || v < s.MaxFiles {
			s.MaxFiles = v
		}
	}
	for _, m := range fams[metricAcquireWait].GetMetric() {
		if label(m, "outcome") == acquireCanceled {
			s.CanceledAcquires += float64(m.GetHistogram().GetSampleCount())
		}
	}
	for _, m := range fams[metricHold].GetMetric() {
		n, held := float64(m.GetHistogram().GetSampleCount()), m.GetHistogram().GetSampleSum()
		s.Holds += n
		s.HoldSeconds += held
		if label(m, "outcome") == holdOK {
			s.OKHolds += n
			s.OKHoldSeconds += held
		}
	}
	if mf := fams[metricDBErrors]; mf != nil {
		s.DBErrors = make(map[string]float64)
		for _, m := range mf.GetMetric() {
			s.DBErrors[label(m, "class")] += value(m)
		}
	}
	if mf := fams[metricKnob]; mf != nil {
		s.Knobs = make(map[string]float64)
		for _, m := range mf.GetMetric() {
			s.Knobs[label(m, "knob")] = value(m)
		}
	}
	if mf := fams[metricQueueLength]; mf != nil {
		s.QueueLength = make(map[string]float64)
		for _, m := range mf.GetMetric() {
			s.QueueLength[label(m, "stage")] += value(m)
		}
	}
	if n := len(s.AcquireWait); n > 0 {
		s.AcquireWaits = s.AcquireWait[n-1].Count
	}
	return s
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sum adds the values of every series of a gauge, counter or untyped family.
func sum(mf *dto.MetricFamily) float64 {
	var v float64
	for _, m := range mf.GetMetric() {
		v += value(m)
	}
	return v
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}

// requests counts the observations of a request histogram, probes excluded.
func requests(mf *dto.MetricFamily) float64 {
	var n float64
	for _, m := range mf.GetMetric() {
		if !probeRoutes[label(m, "route")] {
			n += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return n
}

// buckets sums a histogram family's classic buckets over all its series,
// by upper bound, and ends them with +Inf holding the total count.
func buckets(mf *dto.MetricFamily) []Bucket {
	if mf == nil {
		return nil
	}
	byBound := make(map[float64]float64)
	for _, m := range mf.GetMetric() {
		h := m.GetHistogram()
		inf := false
		for _, b := range h.GetBucket() {
			byBound[b.GetUpperBound()] += float64(b.GetCumulativeCount())
			inf = inf || math.IsInf(b.GetUpperBound(), 1)
		}
		if !inf {
			byBound[math.Inf(1)] += float64(h.GetSampleCount())
		}
	}
	return sorted(byBound)
}

// sorted turns counts by upper bound into buckets in order of their bounds.
func sorted(byBound map[float64]float64) []Bucket {
	out := make([]Bucket, 0, len(byBound))
	for ub, c := range byBound {
		out = append(out, Bucket{UpperBound: ub, Count: c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UpperBound < out[j].UpperBound })
	return out
}

// Delta returns the buckets of the observations between two cumulative
// snapshots of the same histogram. When the histogram went back between
// them (its total or any bucket decreased: the target restarted), the
// observations since the reset are all that is known, so Delta returns
// to, as PromQL's increase() does for a counter reset. The result is
// always cumulative. Over several snapshots, sum the deltas of each
// interval ([Increase]) rather than taking the first and the last.
func Delta(from, to []Bucket) []Bucket {
	prev := make(map[float64]float64, len(from))
	for _, b := range from {
		prev[b.UpperBound] = b.Count
	}
	out := make([]Bucket, len(to))
	for i, b := range to {
		if b.Count < prev[b.UpperBound] {
			return append(out[:0], to...)
		}
		out[i] = Bucket{UpperBound: b.UpperBound, Count: b.Count - prev[b.UpperBound]}
	}
	return out
}

// Increase sums the per-interval [Delta]s of a series of cumulative
// snapshots, by upper bound: the observations over the whole series, with
// counter resets handled interval by interval.
func Increase(snapshots [][]Bucket) []Bucket {
	byBound := make(map[float64]float64)
	for i := 1; i < len(snapshots); i++ {
		for _, b := range Delta(snapshots[i-1], snapshots[i]) {
			byBound[b.UpperBound] += b.Count
		}
	}
	if len(byBound) == 0 {
		return nil
	}
	return sorted(byBound)
}

// counterIncrease is how much a counter grew from one snapshot to the
// next: after a reset (it went down), its whole new value.
func counterIncrease(from, to float64) float64 {
	if to < from {
		return to
	}
	return to - from
}

// Quantile estimates the q-quantile (0..1) of cumulative buckets the way
// PromQL's histogram_quantile does: linear interpolation inside the bucket
// that holds the rank, the highest finite bound when the rank falls in
// +Inf. It returns 0 for an empty histogram.
func Quantile(q float64, b []Bucket) float64 {
	if len(b) == 0 || b[len(b)-1].Count <= 0 {
		return 0
	}
	rank := q * b[len(b)-1].Count
	lower, below := 0.0, 0.0
	for i, x := range b {
		if x.Count >= rank {
			if math.IsInf(x.UpperBound, 1) {
				if i == 0 {
					return 0
				}
				return b[i-1].UpperBound
			}
			if x.Count == below {
				return x.UpperBound
			}
			return lower + (x.UpperBound-lower)*(rank-below)/(x.Count-below)
		}
		lower, below = x.UpperBound, x.Count
	}
	return lower
}
