package scrape

// The metric names read from the services (docs/metrics.md). A series the
// target does not expose reads as 0.
const (
	metricGoroutines   = "go_goroutines"
	metricThreads      = "go_threads"
	metricRSS          = "process_resident_memory_bytes"
	metricPoolAcquired = "orderlab_db_pool_acquired_connections"
	metricQueueLength  = "orderlab_pipeline_queue_length" // label stage
	metricAcquireWait  = "orderlab_db_pool_acquire_wait_seconds"
	metricLimiterRej   = "orderlab_limiter_rejections_total"
	metricPipelineRej  = "orderlab_pipeline_rejections_total"
)
