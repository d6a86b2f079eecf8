package board

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// pipelinePanels are the row "Pipeline (pipeline service)".
func pipelinePanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		series("Queue length vs capacity", units.Short, 8,
			"Items in each stage's input channel against its capacity (dashed). A full intake queue is backpressure: new requests wait up to ENQUEUE_WAIT, then get 429.",
			query(sumBy("job, stage", sel("orderlab_pipeline_queue_length")), "{{stage}} length"),
			query(sumBy("job, stage", sel("orderlab_pipeline_queue_capacity")), "{{stage}} capacity"),
		).OverrideByRegexp(".* capacity", dashed()).Min(0),

		series("Workers busy", units.Short, 8,
			"Goroutines running each stage (dashed) and how many are working on an item now. All busy with a growing queue: the stage is the bottleneck (the blocked event loop of the Java write-ups).",
			query(sumBy("job, stage", sel("orderlab_pipeline_workers")), "{{stage}} workers"),
			query(sumBy("job, stage", sel("orderlab_pipeline_workers_busy")), "{{stage}} busy"),
		).OverrideByRegexp(".* workers", dashed()).Min(0),

		series("Enqueue wait p99 and rejections", units.Seconds, 8,
			"Time a request waited for admission to the intake queue, by outcome (orderlab_pipeline_enqueue_wait_seconds; closed: the service was shutting down), and, right axis, requests answered 429 at admission by reason (orderlab_pipeline_rejections_total): intake_full, no intake slot within ENQUEUE_WAIT; audit_full, no audit slot for an order.",
			quantile("0.99", "orderlab_pipeline_enqueue_wait_seconds", "job, outcome", "{{job}} {{outcome}}"),
			query(sumBy("job, reason", rate(sel("orderlab_pipeline_rejections_total"))), "{{job}} {{reason}} rejections/s"),
		).OverrideByRegexp(".* rejections/s", append(rightAxis(units.RequestsPerSecond), fixedColor("orange")...)),

		series("Batch size", units.Short, 12,
			"Orders committed per transaction (orderlab_pipeline_batch_size, buckets 1..256). Batching is how the pipeline gets more orders/s out of the same connections: the bigger the batch, the further orders/s can exceed the pool's Little's-law bound.",
			query("histogram_quantile(0.5, "+sumBy("job, le", rate(sel("orderlab_pipeline_batch_size_bucket")))+")", "{{job}} p50"),
			query("histogram_quantile(0.99, "+sumBy("job, le", rate(sel("orderlab_pipeline_batch_size_bucket")))+")", "{{job}} p99"),
			query(meanByJob("orderlab_pipeline_batch_size_sum", "orderlab_pipeline_batch_size_count"), "{{job}} mean"),
		).OverrideByRegexp(".* mean", dashed()).Min(0),

		series("Batch commit time", units.Seconds, 12,
			"Time to run and commit one batch transaction, by outcome (orderlab_pipeline_batch_commit_seconds).",
			quantile("0.5", "orderlab_pipeline_batch_commit_seconds", "job, outcome", "{{job}} {{outcome}} p50"),
			quantile("0.99", "orderlab_pipeline_batch_commit_seconds", "job, outcome", "{{job}} {{outcome}} p99"),
		),
	}
}
