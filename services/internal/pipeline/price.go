package pipeline

import (
	"context"

	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
)

// price is the first stage: it takes a job off intake, which frees its
// intake slot, prices the order and fingerprints it for idempotency, then
// hands it on. It waits when persist holds BATCH_MAX jobs: that is the
// backpressure.
func (p *Pipeline) price() {
	for {
		j, ok := p.intake.pop(nil)
		if !ok {
			return
		}
		p.slots.Release()
		p.intakeReleased.Released()
		p.priceBusy.Add(1)
		if j.op == model.PlaceOrder {
			j.req = order.NewRequest(j.input, j.key)
		}
		p.priceBusy.Add(-1)
		_ = p.handoff.Acquire(context.Background()) // without a deadline: it cannot fail
		p.persist <- j
	}
}
