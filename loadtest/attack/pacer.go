package attack

import (
	"math"
	"time"
)

// Pacer says when each request of an open run is due.
type Pacer interface {
	// Due returns the intended send time of request i (counted from 0) as
	// an offset from the start of the run. It never decreases as i grows.
	Due(i int64) time.Duration
}

// PacerFunc adapts a function to [Pacer].
type PacerFunc func(i int64) time.Duration

// Due calls f(i).
func (f PacerFunc) Due(i int64) time.Duration { return f(i) }

var (
	_ Pacer = PacerFunc(nil)
	_ Pacer = ConstantPacer{}
	_ Pacer = RampPacer{}
)

// ConstantPacer sends Rate requests per second, evenly spaced, starting at 0.
type ConstantPacer struct {
	Rate float64 // requests per second, > 0
}

// Due returns i/Rate seconds.
func (p ConstantPacer) Due(i int64) time.Duration {
	return seconds(float64(i) / p.Rate)
}

// NewPacer is the pacer of an open run: rate requests per second from the
// start, or with ramp > 0 a linear rise from rampFrom to rate over ramp.
func NewPacer(rate, rampFrom float64, ramp time.Duration) Pacer {
	if ramp > 0 {
		return RampPacer{From: rampFrom, To: rate, Ramp: ramp}
	}
	return ConstantPacer{Rate: rate}
}

// RampPacer raises the arrival rate linearly from From to To requests per
// second over Ramp, then holds To. With Ramp 0 it is a ConstantPacer at To.
type RampPacer struct {
	From, To float64       // requests per second; To > 0, From >= 0
	Ramp     time.Duration // length of the ramp
}

// Due inverts the cumulative arrival count: during the ramp the count is
// n(t) = From·t + (To-From)·t²/(2·Ramp), after it grows by To per second.
func (p RampPacer) Due(i int64) time.Duration {
	if p.Ramp <= 0 {
		return ConstantPacer{Rate: p.To}.Due(i)
	}
	n, ramp := float64(i), p.Ramp.Seconds()
	inRamp := (p.From + p.To) / 2 * ramp // requests due during the ramp
	if n >= inRamp {
		return seconds(ramp + (n-inRamp)/p.To)
	}
	if n == 0 {
		return 0
	}
	// a·t² + b·t - n = 0, solved in the form that stays finite when a == 0.
	a, b := (p.To-p.From)/(2*ramp), p.From
	return seconds(2 * n / (b + math.Sqrt(b*b+4*a*n)))
}

// DueBefore returns how many requests p schedules strictly before d: the
// smallest i with p.Due(i) >= d.
func DueBefore(p Pacer, d time.Duration) int64 {
	hi := int64(1)
	for p.Due(hi) < d {
		if hi > math.MaxInt64/2 {
			return hi
		}
		hi *= 2
	}
	lo := int64(0) // invariant: answer in [lo, hi]
	for lo < hi {
		mid := lo + (hi-lo)/2
		if p.Due(mid) < d {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

func seconds(s float64) time.Duration {
	return time.Duration(math.Round(s * float64(time.Second)))
}
