package attack

import (
	"testing"
	"time"
)

func TestConstantPacerSpacesRequestsEvenly(t *testing.T) {
	p := ConstantPacer{Rate: 200}
	for i, want := range map[int64]time.Duration{0: 0, 1: 5 * time.Millisecond, 200: time.Second, 1000: 5 * time.Second} {
		if got := p.Due(i); got != want {
			t.Errorf("Due(%d) = %v, want %v", i, got, want)
		}
	}
}

func TestRampPacerFollowsTheLinearRate(t *testing.T) {
	// 0 → 100/s over 10 s: n(t) = 5·t², so 500 requests are due in the ramp.
	p := RampPacer{From: 0, To: 100, Ramp: 10 * time.Second}
	cases := map[int64]time.Duration{
		0:   0,
		5:   time.Second,     // 5·1² = 5
		125: 5 * time.Second, // 5·5² = 125
		500: 10 * time.Second,
		600: 11 * time.Second, // then 100/s
	}
	for i, want := range cases {
		if got := p.Due(i); (got - want).Abs() > time.Microsecond {
			t.Errorf("Due(%d) = %v, want %v", i, got, want)
		}
	}
	for i := range int64(1000) {
		if p.Due(i+1) < p.Due(i) {
			t.Fatalf("Due(%d) = %v < Due(%d) = %v", i+1, p.Due(i+1), i, p.Due(i))
		}
	}
	flat := RampPacer{From: 50, To: 50, Ramp: time.Second}
	if got := flat.Due(25); got != 500*time.Millisecond {
		t.Errorf("equal rates: Due(25) = %v, want 500ms", got)
	}
	if got := (RampPacer{To: 10}).Due(3); got != 300*time.Millisecond {
		t.Errorf("no ramp: Due(3) = %v, want 300ms", got)
	}
}

func TestDueBeforeCountsTheSchedule(t *testing.T) {
	if got := DueBefore(ConstantPacer{Rate: 200}, 3*time.Second); got != 600 {
		t.Errorf("200/s for 3s: %d requests, want 600", got)
	}
	if got := DueBefore(RampPacer{To: 100, Ramp: 10 * time.Second}, 11*time.Second); got != 600 {
		t.Errorf("ramp: %d, want 600", got)
	}
	f := PacerFunc(func(i int64) time.Duration { return time.Duration(i*i) * time.Millisecond })
	if got := DueBefore(f, 100*time.Millisecond); got != 10 {
		t.Errorf("PacerFunc i²ms before 100ms: %d, want 10", got)
	}
}
