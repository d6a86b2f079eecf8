package pipeline

import (
	"github.com/orderlab/orderlab/services/internal/model"
	"github.com/orderlab/orderlab/services/internal/order"
)

// price is the first stage: it receives a job from intake, which frees its
// intake slot, prices the order and fingerprints it for idempotency, then
// sends it on to persist. The send waits while persist holds BATCH_MAX
// jobs: that is the backpressure.
func (p *Pipeline) price() {
	for j := range p.intake {
		<-p.slots
		p.intakeReleased.Released()
		p.priceBusy.Add(1)
		if j.op == model.PlaceOrder {
			j.req = order.NewRequest(j.input, j.key)
		}
		p.priceBusy.Add(-1)
		p.persist <- j
	}
}
