// Package audit owns the slow "audit write" that may follow each committed
// order: the work of the backpressure-void scenario (docs/scenarios: backpressure-voidno backpressure). How the
// writes are scheduled is the concurrency model's business: unbounded and
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

// Recorder performs audit writes that each take Delay.
type Recorder struct {
	delay   time.Duration
	pending atomic.Int64
	wg      sync.WaitGroup
}

// New returns a Recorder whose writes take delay (0: auditing is off), with
// orderlab_audit_pending registered on reg.
func New(delay time.Duration, reg prometheus.Registerer) (*Recorder, error) {
	r := &Recorder{delay: delay}
	err := reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "orderlab_audit_pending",
		Help: "Audit writes queued or running (AUDIT_DELAY).",
	}, func() float64 { return float64(r.pending.Load()) }))
	return r, err
}

// Enabled says whether AUDIT_DELAY is set.
func (r *Recorder) Enabled() bool { return r != nil && r.delay > 0 }

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
	time.Sleep(r.delay) // the slow downstream write
	runtime.KeepAlive(buf)
}

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
