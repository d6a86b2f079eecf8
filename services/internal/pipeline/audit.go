package pipeline

import "github.com/orderlab/orderlab/services/internal/order"

// toAudit sends a newly created order, with its job's reserved slot, to
// the audit stage, after its handler has been answered. audits has room
// for every reserved slot, so this never blocks the worker. Anything else
// (a replay, a failure) gives the slot back.
func (p *Pipeline) toAudit(j *job, r order.Result) {
	if !j.audit {
		return
	}
	if r.Err != nil || !r.Created {
		p.releaseAudit(j)
		return
	}
	j.audit = false // the slot now travels with the order
	p.cfg.Audit.Queued()
	p.audits <- r.Order
}

// releaseAudit gives back j's audit slot, if it holds one.
func (p *Pipeline) releaseAudit(j *job) {
	if j.audit {
		j.audit = false
		<-p.auditSlots
		p.auditReleased.Released()
	}
}

// audit is one audit worker: it writes each order's audit record, then
// frees the order's audit slot.
func (p *Pipeline) audit() {
	for o := range p.audits {
		p.auditBusy.Add(1)
		p.cfg.Audit.Write(o)
		p.auditBusy.Add(-1)
		<-p.auditSlots
		p.auditReleased.Released()
	}
}
