package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"time"

	"github.com/orderlab/orderlab/loadtest/attack"
	"github.com/orderlab/orderlab/loadtest/scrape"
)

// Schema names the JSON layout. It changes when a field changes meaning or
// goes away; new fields may appear without a change.
const Schema = "orderlab.loadtest/v1"

// Report is the document loadtest -json writes: one Run per target.
type Report struct {
	Schema    string    `json:"schema"`
	Mode      string    `json:"mode"`
	Args      []string  `json:"args"`
	StartedAt time.Time `json:"started_at"`
	Host      Host      `json:"host"`
	Runs      []Run     `json:"runs"`
	// MergedFrom lists the reports `loadtest merge` combined into this one.
	MergedFrom []Source `json:"merged_from,omitempty"`
}

// Host describes the machine the client ran on.
type Host struct {
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
}

// New returns an empty report for mode, started now.
func New(mode string, args []string) *Report {
	return &Report{
		Schema:    Schema,
		Mode:      mode,
		Args:      args,
		StartedAt: time.Now().UTC(),
		Host: Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(),
			GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version()},
	}
}

// Settings is what a run was asked to do.
type Settings struct {
	Mode            string  `json:"mode"`
	Method          string  `json:"method"`
	Concurrency     int     `json:"concurrency"`
	Requests        int64   `json:"requests,omitempty"`
	DurationSeconds float64 `json:"duration_seconds,omitempty"`
	Rate            float64 `json:"rate,omitempty"`      // open: requests per second
	RampFrom        float64 `json:"ramp_from,omitempty"` // open: rate at the start of the ramp
	RampSeconds     float64 `json:"ramp_seconds,omitempty"`
	Shard           string  `json:"shard,omitempty"` // open: "i/n", generator i's share of the schedule; Rate, RampFrom and Requests are the whole schedule's
	TimeoutSeconds  float64 `json:"timeout_seconds"`
	Retries         int     `json:"retries,omitempty"`
	Retry           string  `json:"retry,omitempty"` // what a client did with a 429/503: none, immediate, honor, budget, throttle, token-bucket
	RetryMaxWait    float64 `json:"retry_max_wait_seconds,omitempty"`
	Warmup          bool    `json:"warmup,omitempty"`
	Client          string  `json:"client"`
}

// SettingsOf describes cfg.
func SettingsOf(cfg attack.Config) Settings {
	s := Settings{
		Mode:            string(cfg.Mode),
		Method:          cmp.Or(cfg.Target.Method, "GET"),
		Concurrency:     cfg.Concurrency,
		Requests:        cfg.Requests,
		DurationSeconds: cfg.Duration.Seconds(),
		TimeoutSeconds:  cfg.Timeout.Seconds(),
		Retries:         cfg.Retries,
		Retry:           string(cmp.Or(cfg.Retry, attack.RetryNone)),
		Warmup:          cfg.Warmup,
		Client:          string(cmp.Or(cfg.Client, attack.ClientFast)),
	}
	if cfg.Retry == attack.RetryHonor {
		s.RetryMaxWait = cfg.RetryMaxWait.Seconds()
	}
	s.Shard = cfg.Shard.String()
	switch p := cfg.Pacer.(type) {
	case attack.ConstantPacer:
		s.Rate = p.Rate
	case attack.RampPacer:
		s.Rate, s.RampFrom, s.RampSeconds = p.To, p.From, p.Ramp.Seconds()
	}
	return s
}

// Run is one run against one target.
type Run struct {
	Name     string   `json:"name"`
	URL      string   `json:"url"`
	Settings Settings `json:"settings"`

	StartedAt time.Time `json:"started_at"`
	// ElapsedSeconds runs from the first intended send time to the last
	// answer; in a burst it is the time until the last answer.
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	Sent           int64   `json:"sent"`
	Answered       int64   `json:"answered"`
	Succeeded      int64   `json:"succeeded"` // 1xx-3xx
	Rejected       int64   `json:"rejected"`  // 429, 503
	Errors         int64   `json:"errors"`    // no HTTP answer
	Throughput     float64 `json:"throughput_rps"`
	// Goodput is successful answers per second; Attempts counts every
	// request sent, retries included, and AttemptsPerSuccess divides them.
	Goodput            float64 `json:"goodput_rps"`
	Attempts           int64   `json:"attempts"`
	AttemptsPerSuccess float64 `json:"attempts_per_success,omitempty"`
	// Amplification is the retry amplification: attempts over first
	// attempts, one per request (attack.Result.Amplification): what the
	// client's retries multiply its own arrivals by.
	Amplification float64          `json:"retry_amplification,omitempty"`
	Status        map[string]int64 `json:"status"`
	ErrorClasses  map[string]int64 `json:"error_classes"`
	ErrorRate     float64          `json:"error_rate"`     // (errors + other 4xx/5xx + unsent) / (sent + unsent)
	RejectionRate float64          `json:"rejection_rate"` // rejected / (sent + unsent)
	Late          int64            `json:"late"`           // open: due while every connection was busy, unsent included
	Unsent        int64            `json:"unsent"`         // open: due within the run, still unsent -timeout after it
	Retries       int64            `json:"retries"`
	Throttled     int64            `json:"throttled,omitempty"`   // attempts the client's throttler refused, never sent (-retry throttle)
	OverBudget    int64            `json:"over_budget,omitempty"` // rejections not retried: the retry budget was spent (-retry budget)
	Canceled      int64            `json:"canceled"`
	WarmupErrors  int64            `json:"warmup_errors"`
	Latency       Latencies        `json:"latency"`

	// Warnings say when the figures measure the generator as much as the
	// service (see LagShare).
	Warnings []string `json:"warnings,omitempty"`

	ClientCPUSeconds float64      `json:"client_cpu_seconds"`
	Server           *Server      `json:"server,omitempty"`
	SLO              []Evaluation `json:"slo,omitempty"`
}

// Latencies holds the run's histograms. Corrected latencies start at the
// intended send time; the uncorrected ones (open runs only) at the actual.
type Latencies struct {
	Success             *Latency `json:"success"`
	SuccessUncorrected  *Latency `json:"success_uncorrected,omitempty"`
	Rejected            *Latency `json:"rejected"`
	RejectedUncorrected *Latency `json:"rejected_uncorrected,omitempty"`
	Failed              *Latency `json:"failed"`
	// SchedulerLag is the generator's own lateness: in open runs the
	// actual minus the intended send time, in closed runs the time from an
	// answer to the next request on the same connection.
	SchedulerLag *Latency `json:"scheduler_lag,omitempty"`
}

// Server is what the target's metrics said during the run.
type Server struct {
	scrape.Summary
	// Server CPU (process_cpu_seconds_total, user and system) over the
	// run: cores used on average, microseconds per answer of any status
	// (as the server counted them), and microseconds per success (as the
	// client counted them): the whole CPU a success cost, the rejections
	// around it included. Where nearly every answer is a rejection, the
	// CPU per answer is what a rejection costs.
	Cores           float64         `json:"cores,omitempty"`
	CPUPerAnswerUS  float64         `json:"cpu_us_per_answer,omitempty"`
	CPUPerSuccessUS float64         `json:"cpu_us_per_success,omitempty"`
	MetricsURL      string          `json:"metrics_url"`
	Samples         []scrape.Sample `json:"samples"`
	LastError       string          `json:"last_error,omitempty"`
}

// newServer adds the CPU figures to a run's scraped summary, and puts the
// pool's use over the load's own time, elapsed seconds: every hold falls
// within it, while the scrapes' window begins before the first request
// and ends after the last answer (on a busy machine a few hundred
// milliseconds of idle pool, several per cent of a quick run).
func newServer(series *scrape.Series, succeeded int64, elapsed float64) *Server {
	s := &Server{Summary: series.Summary(), MetricsURL: series.URL, Samples: series.Samples, LastError: series.LastError}
	if elapsed > 0 && elapsed < s.Window {
		s.OKHoldsPerSecond *= s.Window / elapsed
		s.PoolUse *= s.Window / elapsed
	}
	if s.Window > 0 {
		s.Cores = s.CPUSeconds / s.Window
	}
	if s.Answers > 0 {
		s.CPUPerAnswerUS = s.CPUSeconds / s.Answers * 1e6
	}
	if succeeded > 0 {
		s.CPUPerSuccessUS = s.CPUSeconds / float64(succeeded) * 1e6
	}
	return s
}

// FromResult builds a Run from an attack result and, when the target's
// metrics were scraped, their series.
func FromResult(name, url string, cfg attack.Config, res *attack.Result, series *scrape.Series) (Run, error) {
	r := Run{
		Name:           name,
		URL:            url,
		Settings:       SettingsOf(cfg),
		StartedAt:      res.Started.UTC(),
		ElapsedSeconds: res.Elapsed.Seconds(),
		Sent:           res.Sent,
		Answered:       res.Answered(),
		Errors:         res.ErrorCount(),
		Throughput:     res.Throughput(),
		Status:         make(map[string]int64, len(res.Status)),
		ErrorClasses:   make(map[string]int64, len(attack.ErrClasses)),
		Late:           res.Late,
		Unsent:         res.Unsent,
		Retries:        res.Retries,
		Throttled:      res.Throttled,
		OverBudget:     res.OverBudget,
		Canceled:       res.Canceled,
		WarmupErrors:   res.WarmupErrors,
	}
	var failed int64
	for code, n := range res.Status {
		r.Status[strconv.Itoa(code)] = n
		switch {
		case attack.IsRejection(code):
			r.Rejected += n
		case code < 400:
			r.Succeeded += n
		default:
			failed += n
		}
	}
	for _, c := range attack.ErrClasses {
		r.ErrorClasses[c.String()] = res.Errors[c.String()]
	}
	// An open run's unsent requests waited longer than the timeout for a
	// connection (see attack.Attack.Run): they count as failed, out of
	// every request that fell due.
	if due := r.Sent + r.Unsent; due > 0 {
		r.ErrorRate = float64(r.Errors+failed+r.Unsent) / float64(due)
		r.RejectionRate = float64(r.Rejected) / float64(due)
	}
	var err error
	l := &r.Latency
	for _, x := range []struct {
		dst **Latency
		h   hist
		on  bool
	}{
		{&l.Success, res.Success, true},
		{&l.SuccessUncorrected, res.SuccessUncorrected, res.Mode == attack.ModeOpen},
		{&l.Rejected, res.Rejected, true},
		{&l.RejectedUncorrected, res.RejectedUncorrected, res.Mode == attack.ModeOpen},
		{&l.Failed, res.Failed, true},
		{&l.SchedulerLag, res.SchedulerLag, res.Mode == attack.ModeOpen || res.Mode == attack.ModeClosed},
	} {
		if x.on && err == nil {
			*x.dst, err = latencyOf(x.h)
		}
	}
	r.Attempts, r.Amplification = res.Attempts(), res.Amplification()
	if r.ElapsedSeconds > 0 {
		r.Goodput = float64(r.Succeeded) / r.ElapsedSeconds
	}
	if r.Succeeded > 0 {
		r.AttemptsPerSuccess = float64(r.Attempts) / float64(r.Succeeded)
	}
	if series != nil {
		r.Server = newServer(series, r.Succeeded, r.ElapsedSeconds)
	}
	if w := lagWarning(r); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	return r, err
}

// Result rebuilds the attack result a Run was made from, histograms
// included, so that runs from several clients can be merged with
// [attack.Result.Merge] and turned back into a Run with [FromResult].
func (r Run) Result() (*attack.Result, error) {
	res := attack.NewResult()
	res.Mode = attack.Mode(r.Settings.Mode)
	res.Started = r.StartedAt
	res.Elapsed = time.Duration(r.ElapsedSeconds * float64(time.Second))
	res.Sent, res.Late, res.Unsent, res.Retries, res.Canceled, res.WarmupErrors = r.Sent, r.Late, r.Unsent, r.Retries, r.Canceled, r.WarmupErrors
	res.Throttled, res.OverBudget = r.Throttled, r.OverBudget
	for k, v := range r.Status {
		code, err := strconv.Atoi(k)
		if err != nil {
			return nil, fmt.Errorf("status %q: %w", k, err)
		}
		res.Status[code] = v
	}
	for k, v := range r.ErrorClasses {
		if v != 0 {
			res.Errors[k] = v
		}
	}
	l := r.Latency
	for _, x := range []struct {
		src *Latency
		dst hist
	}{
		{l.Success, res.Success}, {l.SuccessUncorrected, res.SuccessUncorrected},
		{l.Rejected, res.Rejected}, {l.RejectedUncorrected, res.RejectedUncorrected},
		{l.Failed, res.Failed}, {l.SchedulerLag, res.SchedulerLag},
	} {
		if x.src == nil {
			continue
		}
		h, err := x.src.Histogram()
		if err != nil {
			return nil, err
		}
		if !sameGeometry(h, x.dst) {
			return nil, fmt.Errorf("a histogram of %d significant digits over %d..%d µs, not loadtest's %d over %d..%d: merging it would not be exact",
				h.SignificantFigures(), h.LowestTrackableValue(), h.HighestTrackableValue(),
				x.dst.SignificantFigures(), x.dst.LowestTrackableValue(), x.dst.HighestTrackableValue())
		}
		x.dst.Merge(h)
	}
	if res.Mode != attack.ModeOpen { // only open runs tell the two apart
		res.SuccessUncorrected.Merge(res.Success)
		res.RejectedUncorrected.Merge(res.Rejected)
	}
	return res, nil
}

// Write encodes rep as indented JSON.
func Write(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// Read decodes a report and checks its schema.
func Read(r io.Reader) (*Report, error) {
	var rep Report
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return nil, err
	}
	if rep.Schema != Schema {
		return nil, fmt.Errorf("schema %q: want %q", rep.Schema, Schema)
	}
	return &rep, nil
}
