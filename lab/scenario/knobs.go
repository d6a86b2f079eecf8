package scenario

// Knob is a documented service setting (docs/reference/knobs.md) that a scenario
// may set. Addresses and DATABASE_URL are the runner's, not the scenario's.
// The services declare their knobs in services/internal/knob, which the
// load generator may not import (it knows the services only through HTTP
// and /metrics): a test holds these to the table of docs/reference/knobs.md,
// which the services' own test holds to the declarations.
type Knob struct {
	Name     string
	Services []string // nil: all three
	// Restart, when set, says why the knob cannot change while the service
	// runs (the declaration's words): a run against running services cannot
	// set it.
	Restart string
}

// Knobs are the settings a scenario may set.
var Knobs = []Knob{
	{Name: "DB_MAX_CONNS"}, {Name: "DB_MIN_CONNS"}, {Name: "REQUEST_TIMEOUT"},
	{Name: "SHUTDOWN_TIMEOUT"}, {Name: "DB_DELAY"}, {Name: "WORK_DB_DELAY"},
	{Name: "WORK_API_DELAY"}, {Name: "WORK_CPU_ROUNDS"}, {Name: "LOG_LEVEL"},
	{Name: "AUDIT_DELAY"}, {Name: "REQUEST_BUFFER_BYTES"}, {Name: "REQUEST_BUFFER_POOL"},
	{Name: "API_WAIT_MODE"},
	{Name: "HTTP_SERVER", Restart: "the API listener's server is built at start, and open connections belong to it"},
	{Name: "HTTP_HANDLER_POOL", Restart: "nbio sizes its handler pool when the server is built"},
	{Name: "LEAK_EVERY"},
	{Name: "LIMIT", Services: []string{"semaphore"}},
	{Name: "LIMIT_WAIT", Services: []string{"semaphore"}},
	{Name: "LIMIT_ORDER", Services: []string{"semaphore"}},
	{Name: "LIMIT_MIN", Services: []string{"semaphore"}},
	{Name: "LIMIT_MAX", Services: []string{"semaphore"}},
	{Name: "WORKERS", Services: []string{"pipeline"}},
	{Name: "BATCH_MAX", Services: []string{"pipeline"}},
	{Name: "BATCH_WAIT", Services: []string{"pipeline"}},
	{Name: "QUEUE_CAPACITY", Services: []string{"pipeline"}},
	{Name: "ENQUEUE_WAIT", Services: []string{"pipeline"}},
	{Name: "AUDIT_WORKERS", Services: []string{"pipeline"}},
	{Name: "AUDIT_QUEUE", Services: []string{"pipeline"}},
}

// Services are the targets a scenario may name.
var Services = []string{"unbounded", "semaphore", "pipeline"}

// QueryParams are the query parameters the services read (docs/reference/api.md).
var QueryParams = map[string][]string{
	"/orders":   {"db_delay", "api_delay", "api_call"},
	"/work/db":  {"delay", "conns"},
	"/work/api": {"delay"},
	"/work/cpu": {"rounds"},
}

func knob(name string) (Knob, bool) {
	for _, k := range Knobs {
		if k.Name == name {
			return k, true
		}
	}
	return Knob{}, false
}
