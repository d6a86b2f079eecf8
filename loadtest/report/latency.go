package report

import (
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

type hist = *hdr.Histogram

// Latency summarises one histogram. Figures are in seconds; HDR is the
// histogram itself (microseconds, HdrHistogram V2 compressed encoding,
// base64), readable by any HdrHistogram library and mergeable.
type Latency struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	P9999 float64 `json:"p99_99"`
	Max   float64 `json:"max"`
	HDR   string  `json:"hdr"`
}

func latencyOf(h hist) (*Latency, error) {
	enc, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("encoding histogram: %w", err)
	}
	us := func(v int64) float64 { return float64(v) / 1e6 }
	l := &Latency{Count: h.TotalCount(), HDR: string(enc)}
	if l.Count > 0 {
		l.Mean = h.Mean() / 1e6
		l.P50 = us(h.ValueAtQuantile(50))
		l.P90 = us(h.ValueAtQuantile(90))
		l.P99 = us(h.ValueAtQuantile(99))
		l.P999 = us(h.ValueAtQuantile(99.9))
		l.P9999 = us(h.ValueAtQuantile(99.99))
		l.Max = us(h.Max())
	}
	return l, nil
}

// Histogram decodes the HDR field.
func (l *Latency) Histogram() (hist, error) {
	h, err := hdr.Decode([]byte(l.HDR))
	if err != nil {
		return nil, fmt.Errorf("decoding histogram: %w", err)
	}
	return h, nil
}

// sameGeometry reports whether a and b have the same buckets, so that
// merging one into the other adds counts bucket by bucket, exactly.
func sameGeometry(a, b hist) bool {
	return a.SignificantFigures() == b.SignificantFigures() &&
		a.LowestTrackableValue() == b.LowestTrackableValue() &&
		a.HighestTrackableValue() == b.HighestTrackableValue()
}

// figures are the named figures of a Latency, as table columns and SLO
// terms write them.
var figures = map[string]func(*Latency) float64{
	"p50":    func(l *Latency) float64 { return l.P50 },
	"p90":    func(l *Latency) float64 { return l.P90 },
	"p99":    func(l *Latency) float64 { return l.P99 },
	"p99.9":  func(l *Latency) float64 { return l.P999 },
	"p99.99": func(l *Latency) float64 { return l.P9999 },
	"max":    func(l *Latency) float64 { return l.Max },
	"mean":   func(l *Latency) float64 { return l.Mean },
}

// Quantile returns a named figure of l: "p50", "p90", "p99", "p99.9",
// "p99.99", "max" or "mean"; ok is false for any other name.
func (l *Latency) Quantile(name string) (d time.Duration, ok bool) {
	f, ok := figures[name]
	if !ok {
		return 0, false
	}
	return time.Duration(f(l) * float64(time.Second)), true
}
