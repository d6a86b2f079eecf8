package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/orderlab/orderlab/services/internal/audit"
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/overload"
)

// Admission reserves the slots before anything is decoded; a request that
// leaves without enqueueing (a validation failure) gives them back.
func TestAdmitReservesAndReleaseGivesBack(t *testing.T) {
	rec, err := audit.New(time.Hour, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	p := newPipeline(t, Config{Workers: 1, BatchMax: 1, QueueCapacity: 4, PriceWorkers: 1,
		Audit: rec, AuditWorkers: 1, AuditQueue: 1}, blockingStore{release: make(chan struct{})})

	tk, err := p.admit(context.Background(), model.PlaceOrder)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.slots) != 1 || len(p.auditSlots) != 1 {
		t.Fatalf("after Admit: %d intake and %d audit slots reserved, want 1 and 1", len(p.slots), len(p.auditSlots))
	}
	tk.Release(true)
	tk.Release(true) // idempotent
	if len(p.slots) != 0 || len(p.auditSlots) != 0 {
		t.Fatalf("after Release: %d intake and %d audit slots reserved, want none", len(p.slots), len(p.auditSlots))
	}
	// A connection hold needs no audit slot.
	tk, err = p.admit(context.Background(), model.HoldConnection)
	if err != nil {
		t.Fatal(err)
	}
	defer tk.Release(true)
	if len(p.auditSlots) != 0 {
		t.Errorf("a connection hold reserved an audit slot")
	}
}

// A full intake rejects at once, counted by reason, with a Retry-After of
// at least a second; a full audit stage rejects orders with its own reason.
func TestRejectionsByReason(t *testing.T) {
	rec, err := audit.New(time.Hour, prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	p := newPipeline(t, Config{Workers: 1, BatchMax: 1, QueueCapacity: 1, PriceWorkers: 1,
		Audit: rec, AuditWorkers: 1, AuditQueue: 1}, blockingStore{release: make(chan struct{})})
	ctx := context.Background()

	held, err := p.admit(ctx, model.HoldConnection) // the one intake slot
	if err != nil {
		t.Fatal(err)
	}
	var rej *overload.RejectedError
	if _, err := p.admit(ctx, model.HoldConnection); !errors.As(err, &rej) || rej.Resource != "queue" {
		t.Fatalf("Admit on a full intake = %v, want a queue rejection", err)
	}
	if rej.RetryAfter < overload.MinRetryAfter || rej.RetryAfter > overload.MaxRetryAfter {
		t.Errorf("RetryAfter = %s, want %s..%s", rej.RetryAfter, overload.MinRetryAfter, overload.MaxRetryAfter)
	}
	// An order rejected for its intake slot gives its audit slot back.
	if _, err := p.admit(ctx, model.PlaceOrder); !errors.As(err, &rej) {
		t.Fatalf("Admit of an order on a full intake = %v, want a rejection", err)
	}
	if len(p.auditSlots) != 0 {
		t.Errorf("a rejected order kept %d audit slots", len(p.auditSlots))
	}
	held.Release(true)

	// Two orders take the audit stage's two slots; the third is refused for that.
	for range 2 {
		tk, err := p.admit(ctx, model.PlaceOrder)
		if err != nil {
			t.Fatal(err)
		}
		defer tk.Release(true)
		tk.slot = false // keep the audit slot, give the intake slot back
		select {
		case <-p.slots:
		default:
			t.Fatal("an admitted order holds no intake slot")
		}
	}
	if _, err := p.admit(ctx, model.PlaceOrder); !errors.As(err, &rej) || rej.Resource != "audit queue" {
		t.Fatalf("Admit with the audit stage full = %v, want an audit queue rejection", err)
	}
	for reason, want := range map[string]int{ReasonIntakeFull: 2, ReasonAuditFull: 1} {
		if got := rejections(p, reason); got != want {
			t.Errorf("rejections{reason=%q} = %v, want %v", reason, got, want)
		}
	}
	if n := waits(p, "rejected"); n != 3 {
		t.Errorf("enqueue waits with outcome=rejected = %d, want 3", n)
	}
}

// A ticket is good for one job; a read's holds no slot to enqueue with.
func TestEnqueueWantsATicketWithASlot(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	p := newPipeline(t, Config{Workers: 1, BatchMax: 1, QueueCapacity: 1, PriceWorkers: 1}, blockingStore{release: release})
	ctx := context.Background()
	tk, err := p.admit(ctx, model.HoldConnection)
	if err != nil {
		t.Fatal(err)
	}
	defer tk.Release(true)
	if err := p.enqueue(tk, &job{ctx: ctx, op: model.HoldConnection, done: make(chan result, 1)}); err != nil {
		t.Fatalf("enqueue with a fresh ticket = %v", err)
	}
	if err := p.enqueue(tk, &job{ctx: ctx, op: model.HoldConnection, done: make(chan result, 1)}); !errors.Is(err, errNoSlot) {
		t.Errorf("enqueue with a used ticket = %v, want errNoSlot", err)
	}
	read, err := p.Admit(ctx, model.GetOrder)
	if err != nil {
		t.Fatal(err)
	}
	defer read.Release(true)
	if err := read.HoldConnection(ctx, 0, 1); !errors.Is(err, errNoSlot) {
		t.Errorf("a hold with a read's admission = %v, want errNoSlot", err)
	}
}
