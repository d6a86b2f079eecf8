// Package audit owns the slow "audit write" that may follow each committed
// order: the write the backpressure-void scenario slows (docs/scenarios:
// backpressure-void). How the writes are scheduled is the concurrency model's business: unbounded and
// semaphore start one goroutine per order, the pipeline runs a bounded stage.
package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/services/internal/order"
)

// payloadBytes is what one pending audit record holds in memory: the
// serialised order in a buffer the size of a typical audit-log entry.
const payloadBytes = 16 << 10

// Recorder performs audit writes that each take its delay (AUDIT_DELAY,
// which changes live: SetDelay).
type Recorder struct {
	delay   atomic.Int64 // a time.Duration
	pending atomic.Int64
	wg      sync.WaitGroup
	hold    atomic.Pointer[<-chan struct{}] // HoldWrites
}

// New returns a Recorder whose writes take delay (0: auditing is off), with
// orderlab_audit_pending registered on reg.
func New(delay time.Duration, reg prometheus.Registerer) (*Recorder, error) {
	r := &Recorder{}
	r.SetDelay(delay)
	err := reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "orderlab_audit_pending",
		Help: "Audit writes queued or running (AUDIT_DELAY).",
	}, func() float64 { return float64(r.pending.Load()) }))
	return r, err
}

// Enabled says whether AUDIT_DELAY is set now: an order committed while it
// is gets an audit write.
func (r *Recorder) Enabled() bool { return r != nil && r.delay.Load() > 0 }

// SetDelay sets AUDIT_DELAY: how long each audit write started from now on
// takes; 0 (or below) turns auditing off for the orders that follow. Writes
// already queued or running keep going.
func (r *Recorder) SetDelay(d time.Duration) { r.delay.Store(int64(max(d, 0))) }

// Delay is AUDIT_DELAY's current value.
func (r *Recorder) Delay() time.Duration { return time.Duration(r.delay.Load()) }

// Go writes o's audit record on a goroutine of its own and returns at once:
// fire and forget, with nothing to bound how many run.
func (r *Recorder) Go(o order.Order) {
	r.pending.Add(1)
	r.wg.Go(func() { r.write(o) })
}

// Queued counts a record handed to a bounded stage, which calls Write.
func (r *Recorder) Queued() { r.pending.Add(1) }

// Write performs one audit write of a record counted by Queued.
func (r *Recorder) Write(o order.Order) { r.write(o) }

func (r *Recorder) write(o order.Order) {
	defer r.pending.Add(-1)
	buf := make([]byte, payloadBytes)
	b, _ := json.Marshal(o) // an Order always marshals
	copy(buf, b)
	time.Sleep(r.Delay()) // the slow downstream write
	if h := r.hold.Load(); h != nil {
		<-*h
	}
	runtime.KeepAlive(buf)
}

// HoldWrites makes each audit write, once its delay is over, also wait
// until release is closed: a test's hold on the slow downstream, which
// ends when the test has looked at the writes in progress, where the
// delay alone is a sleep the test would race. A service never calls it.
func (r *Recorder) HoldWrites(release <-chan struct{}) { r.hold.Store(&release) }

// Wait waits for the writes started with Go, within ctx.
func (r *Recorder) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("audit writes: %w (%d pending)", ctx.Err(), r.pending.Load())
	}
}
