package board

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/units"
)

// runtimePanels are the row "Go runtime and process".
func runtimePanels() []cog.Builder[dashboard.Panel] {
	return []cog.Builder[dashboard.Panel]{
		series("Goroutines", units.Short, 8,
			"One goroutine per in-flight request plus the pool's and the pipeline's own. Unbounded concurrency shows here first (the Go side of the Java write-ups' thread counts).",
			query(sumBy("job", sel("go_goroutines")), "{{job}}"),
		),
		series("Pending audit writes", units.Short, 8,
			"Audit writes queued or running (AUDIT_DELAY; 0 when off). unbounded and semaphore start a goroutine per write with nothing to bound them, so this, goroutines and memory climb without limit under load (no backpressure); the pipeline's audit stage holds it at AUDIT_QUEUE plus AUDIT_WORKERS.",
			query(sumBy("job", sel("orderlab_audit_pending")), "{{job}}"),
		),
		series("OS threads", units.Short, 8,
			"go_threads: goroutines blocked in syscalls or cgo each hold an OS thread (the Go shape of virtual-thread pinning; API_WAIT_MODE=syscall on /work/api shows it).",
			query(sumBy("job", sel("go_threads")), "{{job}}"),
		),
		series("Scheduler: goroutines by state", units.Short, 12,
			"Go's scheduler's own count (go_sched_goroutines_*): running ones are on a thread (at most GOMAXPROCS), runnable ones wait for a thread to run on (CPU contention), waiting ones are parked (a pool acquire, a permit, a channel, the network), not-in-go ones are in a system call or cgo and hold an OS thread each (os-thread-pinning); right axis, the p99 of how long a runnable goroutine waited to run (go_sched_latencies_seconds). All three models tie on CPU-bound work: this is where it shows they are waiting for cores, not for the pool.",
			query(sumBy("job", sel("go_sched_goroutines_running_goroutines")), "{{job}} running"),
			query(sumBy("job", sel("go_sched_goroutines_runnable_goroutines")), "{{job}} runnable"),
			query(sumBy("job", sel("go_sched_goroutines_waiting_goroutines")), "{{job}} waiting"),
			query(sumBy("job", sel("go_sched_goroutines_not_in_go_goroutines")), "{{job}} not in Go"),
			classicQuantile("0.99", "go_sched_latencies_seconds", "job", "{{job}} scheduling latency p99"),
		).OverrideByRegexp(".* scheduling latency p99", rightAxis(units.Seconds)),
		series("Memory", units.BytesIEC, 12,
			"Resident set size, and the Go heap in use (dashed). Per-request allocations (REQUEST_BUFFER_BYTES) multiplied by unbounded concurrency show up here; REQUEST_BUFFER_POOL=true reuses them.",
			query(sumBy("job", sel("process_resident_memory_bytes")), "{{job}} RSS"),
			query(sumBy("job", sel("go_memstats_heap_inuse_bytes")), "{{job}} heap in use"),
		).OverrideByRegexp(".* heap in use", dashed()),
		series("Open file descriptors", units.Short, 12,
			"Sockets and files: client connections plus pool connections.",
			query(sumBy("job", sel("process_open_fds")), "{{job}}"),
		),
		series("API connections: idle vs active", units.Short, 12,
			"Open API connections: active ones have a request being read, queued or handled; idle ones are kept alive between requests. Under HTTP_SERVER=net/http every open connection holds a goroutine, idle or not; under nbio an idle one holds none (compare with Goroutines and Memory).",
			query(sumBy("job, state", sel("orderlab_http_connections")), "{{job}} {{state}}"),
		),
		series("Handler pool (HTTP_SERVER=nbio)", units.Short, 12,
			"nbio runs handlers on a bounded pool: goroutines running a request now (busy), requests read in full and waiting for a goroutine (queued), the pool's size (dashed) and, right axis, the p99 of that wait, which lies outside REQUEST_TIMEOUT and the latency panels. Empty for services on net/http, which runs each connection's handler on the connection's own goroutine.",
			query(sumBy("job", sel("orderlab_http_handler_pool_busy")), "{{job}} busy"),
			query(sumBy("job", sel("orderlab_http_handler_pool_queued")), "{{job}} queued"),
			query(sumBy("job", sel("orderlab_http_handler_pool_size")), "{{job}} size"),
			quantile("0.99", "orderlab_http_handler_pool_wait_seconds", "job", "{{job}} wait p99"),
		).
			OverrideByRegexp(".* size", dashed()).
			OverrideByRegexp(".* wait p99", rightAxis(units.Seconds)),
	}
}
