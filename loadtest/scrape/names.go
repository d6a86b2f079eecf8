package scrape

// The metric names read from the services (docs/metrics.md). A series the
// target does not expose reads as 0.
const (
	metricGoroutines   = "go_goroutines"
	metricThreads      = "go_threads"
	metricRSS          = "process_resident_memory_bytes"
	metricPoolAcquired = "orderlab_db_pool_acquired_connections"
	metricQueueLength  = "orderlab_pipeline_queue_length"        // label stage
	metricAcquireWait  = "orderlab_db_pool_acquire_wait_seconds" // histogram, label outcome
	acquireCanceled    = "canceled"                              // its outcome of an acquire its deadline ended
	metricLimiterRej   = "orderlab_limiter_rejections_total"
	metricPipelineRej  = "orderlab_pipeline_rejections_total"
	metricHeapInuse    = "go_memstats_heap_inuse_bytes"
	metricInFlight     = "orderlab_http_requests_in_flight"
	metricConnections  = "orderlab_http_connections"              // label state
	metricRequests     = "orderlab_http_request_duration_seconds" // label route
	metricOrders       = "orderlab_orders_created_total"
	metricAuditPending = "orderlab_audit_pending"
	metricWaiters      = "orderlab_limiter_waiters"
	metricLimit        = "orderlab_limiter_limit"
	metricCPU          = "process_cpu_seconds_total"
	metricMaxFiles     = "process_max_fds"
	metricHold         = "orderlab_db_pool_connection_hold_seconds" // histogram, label outcome
	holdOK             = "ok"                                       // its outcome of a call that succeeded
	metricPoolMax      = "orderlab_db_pool_max_connections"
	metricDBErrors     = "orderlab_db_errors_total" // label class
	metricKnob         = "orderlab_knob_value"      // label knob
	// Go's scheduler (runtime/metrics, in client_golang's Go collector).
	metricSchedLatency = "go_sched_latencies_seconds" // histogram
	metricRunnable     = "go_sched_goroutines_runnable_goroutines"
	metricRunning      = "go_sched_goroutines_running_goroutines"
	metricWaiting      = "go_sched_goroutines_waiting_goroutines"
	metricNotInGo      = "go_sched_goroutines_not_in_go_goroutines"

	knobRequestTimeout = "REQUEST_TIMEOUT" // seconds, the deadline of every request and its pool acquire
)

// probeRoutes are answered by every service without doing any work; they
// are left out of the request count.
var probeRoutes = map[string]bool{"/livez": true, "/readyz": true}
