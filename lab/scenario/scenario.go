package scenario

import (
	"fmt"
	"time"
)

// Scenario is one file of the catalog.
type Scenario struct {
	// Number is the scenario's place in the catalog (catalog.Order), from
	// 1: one numbering for the CLI, the reports and the board's annotations.
	Number     int    `yaml:"-" json:"number,omitempty"`
	Name       string `yaml:"name" json:"name"`             // the file's base name, e.g. burst-1000
	Title      string `yaml:"title" json:"title"`           // one line
	Reproduces string `yaml:"reproduces" json:"reproduces"` // the experiment or pitfall of README.md, Pitfalls and experiments
	// Kind is what the scenario is about, one of Kinds: the front page
	// filters the catalog by it. Every catalog scenario has one.
	Kind     string `yaml:"kind,omitempty" json:"kind,omitempty"`
	Question string `yaml:"question" json:"question"` // what the scenario answers
	// Fix is the remedy in a sentence, as the first sentence of the
	// scenario's page says it (docs/scenarios/<name>.md, The fix).
	Fix string `yaml:"fix,omitempty" json:"fix,omitempty"`
	// Published holds the Java figures the scenario is compared with.
	Published []string `yaml:"published" json:"published"`
	// Targets are services by name: unbounded, semaphore, pipeline.
	Targets []string `yaml:"targets" json:"targets"`
	// Env is set on every service at start; a phase may add to it.
	Env    map[string]string `yaml:"env" json:"env"`
	Phases []Phase           `yaml:"phases" json:"phases"`
	Expect []Expectation     `yaml:"expect" json:"expect"`
	// Panels are titles of panels on the Grafana board to look at.
	Panels []string `yaml:"panels" json:"panels"`
	// Benchmark names the Go benchmark that measures the same thing.
	Benchmark string `yaml:"benchmark,omitempty" json:"benchmark,omitempty"`
	// Cluster, when set, is a Postgres the runner owns for the scenario
	// (docs/scenarios: too-many-clients, db-latency, db-restart), instead of a database on the shared
	// server.
	Cluster *Cluster `yaml:"cluster,omitempty" json:"cluster,omitempty"`
	// ServerSignal is what a database owner sees of the pitfall in
	// pg_stat_activity and the server log, in a sentence, as the
	// scenario's page says it (What the database sees).
	ServerSignal string `yaml:"server_signal,omitempty" json:"server_signal,omitempty"`
	// SchedulerSignal is what Go's scheduler shows of the lesson (the
	// go_sched_* series), in a sentence, as the scenario's page says it;
	// set, each phase's report has the table "What Go's scheduler saw".
	SchedulerSignal string `yaml:"scheduler_signal,omitempty" json:"scheduler_signal,omitempty"`
	// QuickDuration is the longest load of a phase in quick mode (default
	// 2 s), for a scenario whose lesson takes longer to show: a queue that
	// reaches its deadline, a pool that leaks dry.
	QuickDuration Duration `yaml:"quick_duration,omitempty" json:"quick_duration,omitempty"`
	// QuickFactor is what Quick divides the pools, the load and the bounds
	// by: in a file, for a scenario whose ratios do not survive the
	// computed one (QuickFactor); in a result, the factor a quick run used.
	QuickFactor float64 `yaml:"quick_factor,omitempty" json:"quick_factor,omitempty"`
}

// Kinds are the values of Scenario.Kind: a published experiment, a
// pitfall of the connection pool, one of overload (memory, threads, CPU,
// rejections, limits), one of the database.
var Kinds = []string{"experiment", "pool", "overload", "database"}

// Cluster is what the runner sets up around the database and the services.
type Cluster struct {
	// Owned: the runner starts a throwaway cluster of its own
	// (internal/pgcluster) and destroys it after the run. Stopping the
	// database (db_stop), a role and PgBouncer need it.
	Owned bool `yaml:"owned" json:"owned"`
	// Role: the services log in as a role of their own with this CONNECTION
	// LIMIT, owner of the scenario's database; beyond it Postgres refuses
	// a connection with FATAL 53300.
	Role *Role `yaml:"role,omitempty" json:"role,omitempty"`
	// Replicas of each target run at once (default 1), each with the
	// phase's env; the load is spread over them connection by connection
	// (a round-robin TCP front), and their metrics are summed.
	Replicas int `yaml:"replicas,omitempty" json:"replicas,omitempty"`
	// PgBouncer runs Debian's pgbouncer in front of the cluster; a phase
	// with pgbouncer: true sends the services through it.
	PgBouncer *PgBouncer `yaml:"pgbouncer,omitempty" json:"pgbouncer,omitempty"`
}

// Role is the services' login role.
type Role struct {
	ConnectionLimit int `yaml:"connection_limit" json:"connection_limit"`
}

// PgBouncer is a pooler between the services and Postgres.
type PgBouncer struct {
	Mode string `yaml:"mode" json:"mode"` // transaction or session
	Pool int    `yaml:"pool" json:"pool"` // server connections per database and user
}

// DBStop stops the owned cluster during a phase: After into the load,
// for For, then starts it again. Ledger keyed orders a second go to each
// target besides the phase's load, and are held to the table afterwards.
type DBStop struct {
	After  Duration `yaml:"after" json:"after"`
	For    Duration `yaml:"for" json:"for"`
	Ledger int      `yaml:"ledger" json:"ledger"`
}

// Phase is one load shape, run against every target in turn (HTTP), or one
// in-process run of background jobs (Tasks).
type Phase struct {
	Name string `yaml:"name" json:"name"`
	// Env is added to the scenario's env. Locally each target runs in a
	// service started for the run alone, with this env.
	Env map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	// Continue runs the phase on the services of the phase before it, still
	// running, instead of fresh ones: a change of load (a slower query, say)
	// that the same processes see live, as an adaptive limit must. A
	// continuing phase's env changes those services' knobs live (PATCH
	// /knobs), on top of the env of the phase before; only knobs that can
	// change live.
	Continue bool     `yaml:"continue,omitempty" json:"continue,omitempty"`
	Request  *Request `yaml:"request,omitempty" json:"request,omitempty"`
	Load     *Load    `yaml:"load,omitempty" json:"load,omitempty"`
	Tasks    *Tasks   `yaml:"tasks,omitempty" json:"tasks,omitempty"`
	Bound    *Bound   `yaml:"bound,omitempty" json:"bound,omitempty"`
	Note     string   `yaml:"note,omitempty" json:"note,omitempty"`
	// PgBouncer: the services of this phase reach Postgres through the
	// scenario's PgBouncer, with default_query_exec_mode=exec in their
	// DATABASE_URL (a transaction-mode pooler keeps no prepared statements).
	PgBouncer bool `yaml:"pgbouncer,omitempty" json:"pgbouncer,omitempty"`
	// DBLatency, when set (0 included), puts a TCP proxy between every
	// service and Postgres for the whole scenario (internal/faultproxy),
	// and adds this much to each round trip for the phase: half each way.
	DBLatency *Duration `yaml:"db_latency,omitempty" json:"db_latency,omitempty"`
	// DBStop stops the owned cluster for a while during the phase.
	DBStop *DBStop `yaml:"db_stop,omitempty" json:"db_stop,omitempty"`
}

// Request is what each request of a phase asks for.
type Request struct {
	Method string `yaml:"method" json:"method"` // GET (default) or POST (a generated order)
	Path   string `yaml:"path" json:"path"`     // with query parameters, e.g. /work/db?delay=20ms
}

// Load is the shape of an HTTP phase (see loadtest's modes).
type Load struct {
	Mode        string   `yaml:"mode" json:"mode"`               // burst, closed, open, idle
	Concurrency int      `yaml:"concurrency" json:"concurrency"` // burst: requests; closed: workers; open: most connections; idle: connections
	Requests    int64    `yaml:"requests,omitempty" json:"requests,omitempty"`
	Duration    Duration `yaml:"duration,omitempty" json:"duration,omitempty"`   // idle: how long the connections stay open after one request each
	Rate        float64  `yaml:"rate,omitempty" json:"rate,omitempty"`           // open: requests per second
	RampFrom    float64  `yaml:"ramp_from,omitempty" json:"ramp_from,omitempty"` // open: start of a linear ramp to Rate
	Ramp        Duration `yaml:"ramp,omitempty" json:"ramp,omitempty"`
	Timeout     Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"` // per request; default 30 s
	Warmup      *bool    `yaml:"warmup,omitempty" json:"warmup,omitempty"`   // burst; default true
	// Retries is the most resends of one request (refused connections, and
	// 429/503 answers under Retry); default 5.
	Retries int `yaml:"retries,omitempty" json:"retries,omitempty"`
	// Retry is what a client does with a 429 or 503: one of
	// attack.RetryPolicies, none by default.
	Retry        string   `yaml:"retry,omitempty" json:"retry,omitempty"`
	RetryMaxWait Duration `yaml:"retry_max_wait,omitempty" json:"retry_max_wait,omitempty"` // honor: longest wait; default 10 s
	// Scrape is the interval between scrapes of the service's metrics
	// during the phase (default DefaultScrape). A phase shorter than a few
	// intervals needs a shorter one: a 230 ms burst is otherwise seen only
	// before its release and after its last answer, never at its peak.
	Scrape Duration `yaml:"scrape,omitempty" json:"scrape,omitempty"`
}

// DefaultScrape is the interval between scrapes of a service's metrics
// when neither the phase (load.scrape) nor the Runner sets one.
const DefaultScrape = 250 * time.Millisecond

// Tasks is an in-process phase: Jobs background jobs on a goroutine each
// (Workers 0) or on a fixed pool (Workers > 0; -1 means GOMAXPROCS).
type Tasks struct {
	Workers int      `yaml:"workers" json:"workers"`
	Jobs    int      `yaml:"jobs" json:"jobs"`
	Sleep   Duration `yaml:"sleep,omitempty" json:"sleep,omitempty"`   // each job waits this long, or
	Rounds  int      `yaml:"rounds,omitempty" json:"rounds,omitempty"` // chains this many SHA-256 hashes
	// ScaleTo reports the time scaled to this many jobs, for a pool whose
	// full run would take too long (exact: a fixed pool is linear).
	ScaleTo int `yaml:"scale_to,omitempty" json:"scale_to,omitempty"`
}

// Bound is the Little's-law bound of a phase: Concurrency / Hold requests
// per second (a pool of 20 held 20 ms each: 1000/s).
type Bound struct {
	Concurrency int      `yaml:"concurrency" json:"concurrency"`
	Hold        Duration `yaml:"hold" json:"hold"`
	What        string   `yaml:"what" json:"what"` // e.g. "pool 20 / 20 ms"
}

// RPS is the bound in requests per second.
func (b Bound) RPS() float64 {
	if b.Hold <= 0 {
		return 0
	}
	return float64(b.Concurrency) / time.Duration(b.Hold).Seconds()
}

// Expectation is what a target should show, in words and, where a number
// is claimed, as loadtest SLO terms (p99<250ms, errors<1%, rps>=950, ...).
type Expectation struct {
	Target string `yaml:"target" json:"target"`                   // a service, or "" for all
	Phase  string `yaml:"phase,omitempty" json:"phase,omitempty"` // "" for every HTTP phase
	Says   string `yaml:"says" json:"says"`
	// SLO may state rps and goodput against the phase's bound
	// (goodput>=5xbound): the bound of the knobs that ran. Its terms
	// count what Says names: commits are goodput, never rps, which counts
	// every answer (docs/reference/scenario-format.md, How a verdict
	// counts).
	SLO string `yaml:"slo,omitempty" json:"slo,omitempty"`
	// NotQuick: a quick run cannot show it (a lesson that takes longer
	// than a quick phase); a quick run says so instead of judging it.
	NotQuick bool `yaml:"not_quick,omitempty" json:"not_quick,omitempty"`
}

// Duration is a time.Duration written as "20ms" in the files.
type Duration time.Duration

// UnmarshalText reads a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: %w", b, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration as "20ms".
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// D is the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Label is how the scenario is named to people: "5 pool-starvation", with
// its catalog number when it has one.
func Label(s Scenario) string {
	if s.Number > 0 {
		return fmt.Sprintf("%d %s", s.Number, s.Name)
	}
	return s.Name
}
