package knob

//go:generate go run ./labtable -o ../../../lab/scenario/knobs_gen.go

import "time"

// Models are the three concurrency models.
var Models = []string{"unbounded", "semaphore", "pipeline"}

var (
	semaphore = []string{"semaphore"}
	pipeline  = []string{"pipeline"}
)

const (
	ms = int64(time.Millisecond)
	s  = int64(time.Second)
)

// All declares every knob, in the order of the table in
// docs/reference/knobs.md.
var All = []Knob{
	// Where the service listens and what it talks to.
	{Name: "DATABASE_URL", Kind: DSN, Default: "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
		Restart: "the store migrates and opens its pool against it at start; another database is another service",
		Meaning: "Postgres to use, a URL or a keyword/value string (password never shown)"},
	{Name: "HTTP_ADDR", Kind: String, Default: "127.0.0.1:8080",
		Restart: "the API listener is bound once, at start", Meaning: "API listener"},
	{Name: "HTTP_SERVER", Kind: Enum, Values: []string{"net/http", "nbio"}, Default: "net/http",
		Restart: "the API listener's server is built at start, and open connections belong to it",
		Meaning: "the API listener's server: a goroutine per connection, or an event loop with a bounded handler pool"},
	{Name: "HTTP_HANDLER_POOL", Kind: Int, Unit: "goroutines", Min: 1, Max: 1_000_000, Default: "0", DefaultText: "the open-files limit (at least 1024 per GOMAXPROCS, at most 65,536)",
		Restart: "nbio sizes its handler pool when the server is built",
		Meaning: "with HTTP_SERVER=nbio: handler goroutines at most; further requests wait, read in full, in its queue"},
	{Name: "ADMIN_ADDR", Kind: String, Default: "127.0.0.1:9090",
		Restart: "the admin listener (this API) is bound once, at start", Meaning: "/metrics, /knobs and /debug/pprof/"},
	{Name: "ADMIN_TOKEN", Kind: Secret,
		Restart: "the credential that guards changes is not itself changed through them",
		Meaning: "bearer token that PATCH /knobs requires; unset: /knobs is read-only"},

	// The pool and the deadlines.
	{Name: "DB_MAX_CONNS", Kind: Int, Unit: "connections", Min: 1, Max: 10_000, Default: "20", Live: true,
		Meaning: "pool size; a change swaps in a new pool, the old one finishes its in-flight queries and closes"},
	{Name: "DB_MIN_CONNS", Kind: Int, Unit: "connections", Min: 0, Max: 10_000, Default: "0", Live: true,
		Meaning: "connections kept open (at most DB_MAX_CONNS)"},
	{Name: "REQUEST_TIMEOUT", Kind: Duration, Min: ms, Max: 10 * 60 * s, Default: "30s", Live: true,
		Meaning: "every request's deadline, like HikariCP's connection-timeout; live up to the value at start (the servers' write timeout follows it)"},
	{Name: "HOLD_EARLY_RETRIES", Kind: Bool, Default: "true", Live: true,
		Meaning: "a request that comes back on its connection before the Retry-After of its last 429 is up, and is refused again, gets its 429 once that time is up (at most a second after it came, and within REQUEST_TIMEOUT): a client that resends at once waits, parked, about a second between refusals"},
	{Name: "STARTUP_TIMEOUT", Kind: Duration, Min: s, Max: 3600 * s, Default: "60s",
		Restart: "it bounds only the start, which is over by the time the knob API serves",
		Meaning: "how long start-up retries an unreachable database"},
	{Name: "SHUTDOWN_TIMEOUT", Kind: Duration, Min: s, Max: 3600 * s, Default: "30s", Live: true,
		Meaning: "how long SIGTERM/SIGINT may take to finish in-flight requests and drain queues (read when shutdown begins)"},
	{Name: "LOG_LEVEL", Kind: Enum, Values: []string{"debug", "info", "warn", "error"}, Default: "info", Live: true,
		Meaning: "level of the JSON logs on stdout"},

	// The experiments' defaults and the pitfalls.
	{Name: "DB_DELAY", Kind: Duration, Min: 0, Max: 10 * s, Default: "0s", Live: true,
		Meaning: "default db_delay of POST /orders: extra time each order holds its connection"},
	{Name: "WORK_DB_DELAY", Kind: Duration, Min: 0, Max: 10 * s, Default: "20ms", Live: true,
		Meaning: "default delay of /work/db"},
	{Name: "WORK_API_DELAY", Kind: Duration, Min: 0, Max: 10 * s, Default: "150ms", Live: true,
		Meaning: "default delay of /work/api"},
	{Name: "WORK_CPU_ROUNDS", Kind: Int, Unit: "SHA-256 rounds", Min: 1, Max: 1_000_000, Default: "5000", Live: true,
		Meaning: "default rounds of /work/cpu"},
	{Name: "AUDIT_DELAY", Kind: Duration, Min: 0, Max: 60 * s, Default: "0s", Live: true,
		Meaning: "backpressure-void: after each committed order an audit write takes this long (0: off)"},
	{Name: "REQUEST_BUFFER_BYTES", Kind: Int, Unit: "bytes", Min: 0, Max: 8 << 20, Default: "0", Live: true,
		Meaning: "per-request-memory: every request allocates, touches and holds a buffer this large (0: off)"},
	{Name: "REQUEST_BUFFER_POOL", Kind: Bool, Default: "false", Live: true,
		Meaning: "true: take that buffer from a sync.Pool"},
	{Name: "API_WAIT_MODE", Kind: Enum, Values: []string{"timer", "syscall"}, Default: "timer", Live: true,
		Meaning: "os-thread-pinning: syscall makes /work/api wait in a blocking nanosleep that holds its OS thread"},
	{Name: "LEAK_EVERY", Kind: Int, Unit: "calls", Min: 0, Max: 1_000_000, Default: "0", Live: true,
		Meaning: "connection-leak: every Nth database call keeps its connection (0: off); POST /knobs/release-leaked hands them back"},

	// Tracing, read by the OpenTelemetry exporter built at start.
	{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Kind: String,
		Restart: "the trace exporter is built at start", Meaning: "OTLP trace endpoint; unset: no exporter"},
	{Name: "OTEL_EXPORTER_OTLP_PROTOCOL", Kind: String, Default: "http/protobuf",
		Restart: "the trace exporter is built at start", Meaning: "http/protobuf or grpc"},
	{Name: "OTEL_SERVICE_NAME", Kind: String, DefaultText: "orderlab-<model>",
		Restart: "the service name is part of the tracer's resource, built at start", Meaning: "service name on spans"},

	// semaphore: the limit in front of the pool.
	{Name: "LIMIT", Kind: IntOr, Unit: "permits", Min: 1, Max: 100_000, Values: []string{"adaptive"}, DefaultFrom: "DB_MAX_CONNS",
		Models: semaphore, Live: true,
		Meaning: "permits, or adaptive: a limit that follows the database's latency"},
	{Name: "LIMIT_WAIT", Kind: Duration, Min: 0, Max: 60 * s, Default: "100ms", Models: semaphore, Live: true,
		Meaning: "longest wait for a permit before 429 (0: reject at once)"},
	{Name: "LIMIT_ORDER", Kind: Enum, Values: []string{"fifo", "lifo"}, Default: "fifo", Models: semaphore, Live: true,
		Meaning: "which waiter a freed permit goes to: the longest waiting (fifo) or the last to come (lifo: under a storm, the admitted have hardly waited)"},
	{Name: "LIMIT_MIN", Kind: Int, Unit: "permits", Min: 1, Max: 100_000, Default: "1", Models: semaphore, Live: true,
		Meaning: "LIMIT=adaptive: the lowest the limit goes (at most LIMIT_MAX)"},
	{Name: "LIMIT_MAX", Kind: Int, Unit: "permits", Min: 1, Max: 100_000, Default: "200", Models: semaphore, Live: true,
		Meaning: "LIMIT=adaptive: the highest the limit goes"},

	// pipeline: the stages and their queues.
	{Name: "WORKERS", Kind: Int, Unit: "goroutines", Min: 1, Max: 10_000, DefaultFrom: "DB_MAX_CONNS", Models: pipeline, Live: true,
		Meaning: "persist workers (at most DB_MAX_CONNS)"},
	{Name: "BATCH_MAX", Kind: Int, Unit: "orders", Min: 1, Max: 1_000, Default: "64", Models: pipeline, Live: true,
		Meaning: "orders per transaction at most"},
	{Name: "BATCH_WAIT", Kind: Duration, Min: 0, Max: s, Default: "2ms", Models: pipeline, Live: true,
		Meaning: "how long a worker waits to fill a batch"},
	{Name: "QUEUE_CAPACITY", Kind: Int, Unit: "orders", Min: 1, Max: 1_000_000, Default: "1024", Models: pipeline, Live: true,
		Meaning: "intake queue slots"},
	{Name: "ENQUEUE_WAIT", Kind: Duration, Min: 0, Max: 60 * s, Default: "0s", Models: pipeline, Live: true,
		Meaning: "longest wait for an intake slot before 429 (0: reject at once)"},
	{Name: "AUDIT_WORKERS", Kind: Int, Unit: "goroutines", Min: 1, Max: 10_000, Default: "4", Models: pipeline, Live: true,
		Meaning: "audit stage goroutines (with AUDIT_DELAY)"},
	{Name: "AUDIT_QUEUE", Kind: Int, Unit: "orders", Min: 1, Max: 1_000_000, Default: "256", Models: pipeline, Live: true,
		Meaning: "audit stage queue; an order is admitted only with a free audit slot, otherwise 429"},
}
