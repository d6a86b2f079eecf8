package pipeline

import (
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
)

// price is the first stage: it takes a job off intake, which frees its
// intake slot, prices the order and fingerprints it for idempotency, then
// hands it on. Its send blocks when persist is full: that is the
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
		p.persist <- j
	}
}
