//go:build !linux

package attack

import (
	"context"
	"time"
)

// preciseTimer exists on Linux only (a timerfd); elsewhere workers wait
// with a time.Timer.
type preciseTimer struct{}

func newPreciseTimer(context.Context) *preciseTimer { return nil }

func (*preciseTimer) wait(context.Context, time.Duration) bool { return false }

func (*preciseTimer) close() {}
