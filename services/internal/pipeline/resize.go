package pipeline

import "fmt"

// validate checks the sizes that Resize may change.
func (c Config) validate() error {
	switch {
	case c.Workers < 1:
		return fmt.Errorf("pipeline: WORKERS must be at least 1, got %d", c.Workers)
	case c.BatchMax < 1:
		return fmt.Errorf("pipeline: BATCH_MAX must be at least 1, got %d", c.BatchMax)
	case c.BatchWait < 0:
		return fmt.Errorf("pipeline: BATCH_WAIT must not be negative, got %s", c.BatchWait)
	case c.QueueCapacity < 1:
		return fmt.Errorf("pipeline: QUEUE_CAPACITY must be at least 1, got %d", c.QueueCapacity)
	case c.EnqueueWait < 0:
		return fmt.Errorf("pipeline: ENQUEUE_WAIT must not be negative, got %s", c.EnqueueWait)
	case c.AuditWorkers < 1:
		return fmt.Errorf("pipeline: AUDIT_WORKERS must be at least 1, got %d", c.AuditWorkers)
	case c.AuditQueue < 1:
		return fmt.Errorf("pipeline: AUDIT_QUEUE must be at least 1, got %d", c.AuditQueue)
	}
	return nil
}

// Config is the live configuration: the start's, with what Resize changed.
func (p *Pipeline) Config() Config { return *p.live.Load() }

// config is the live configuration, for the stages.
func (p *Pipeline) config() *Config { return p.live.Load() }

// Resize applies c's WORKERS, BATCH_MAX, BATCH_WAIT, QUEUE_CAPACITY,
// ENQUEUE_WAIT, AUDIT_WORKERS and AUDIT_QUEUE while the pipeline runs; its
// other fields (PriceWorkers, CommitTimeout, Audit) are the start's and
// are ignored. Nothing admitted is lost:
//   - workers: new ones start at once; extra ones leave when they have
//     committed the batch in hand;
//   - BATCH_MAX and BATCH_WAIT: from the next batch a worker fills (the
//     hand-off buffer between pricing and the workers keeps the BATCH_MAX
//     it was started with);
//   - QUEUE_CAPACITY and AUDIT_QUEUE: the bound of the queue; below the
//     queue's depth, queued jobs stay and Admit rejects until it has
//     drained under the new bound;
//   - ENQUEUE_WAIT: for the requests admitted from now on.
//
// A bad value is an error and changes nothing; so is a Resize after Close
// began (ErrClosed).
func (p *Pipeline) Resize(c Config) error {
	if err := c.validate(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	live := *p.live.Load()
	live.Workers, live.BatchMax, live.BatchWait = c.Workers, c.BatchMax, c.BatchWait
	live.QueueCapacity, live.EnqueueWait = c.QueueCapacity, c.EnqueueWait
	live.AuditWorkers, live.AuditQueue = c.AuditWorkers, c.AuditQueue
	p.live.Store(&live)
	p.slots.Resize(c.QueueCapacity)
	p.auditSlots.Resize(c.AuditQueue + c.AuditWorkers)
	p.workers.resize(c.Workers, p.persistWorker)
	if p.cfg.Audit != nil {
		p.auditors.resize(c.AuditWorkers, p.audit)
	}
	return nil
}
