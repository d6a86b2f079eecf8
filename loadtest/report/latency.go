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

// Quantile returns a named figure of l: "p50", "p90", "p99", "p99.9",
// "p99.99", "max" or "mean"; ok is false for any other name.
func (l *Latency) Quantile(name string) (d time.Duration, ok bool) {
	var s float64
	switch name {
	case "p50":
		s = l.P50
	case "p90":
		s = l.P90
	case "p99":
		s = l.P99
	case "p99.9":
		s = l.P999
	case "p99.99":
		s = l.P9999
	case "max":
		s = l.Max
	case "mean":
		s = l.Mean
	default:
		return 0, false
	}
	return time.Duration(s * float64(time.Second)), true
}
