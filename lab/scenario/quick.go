package scenario

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// quickPool is the largest database pool of a quick run, so that a smoke
// run fits beside other users of a shared Postgres.
const quickPool = 5

// defaultPool is DB_MAX_CONNS when nobody sets it.
const defaultPool = 20

// quickDuration is a quick phase's longest load, unless the scenario's
// quick_duration says otherwise.
const quickDuration = 2 * time.Second

// scaledKnobs are the knobs sized against the pool or the load: Quick
// divides them by its factor with the pool, so that every ratio between
// them (WORKERS to DB_MAX_CONNS, a queue to the bound) stays as it was.
var scaledKnobs = []string{"DB_MAX_CONNS", "DB_MIN_CONNS", "LIMIT", "LIMIT_MIN", "LIMIT_MAX", "WORKERS",
	"QUEUE_CAPACITY", "AUDIT_WORKERS", "AUDIT_QUEUE", "HTTP_HANDLER_POOL"}

// QuickFactor is how much Quick shrinks s: its largest pool (DB_MAX_CONNS
// of any HTTP phase, default 20) over a quick pool of 5, at least 1.
func QuickFactor(s Scenario) float64 {
	largest := 0
	for _, p := range s.Phases {
		if p.Tasks != nil {
			continue
		}
		n := defaultPool
		if v, err := strconv.Atoi(Merged(s.Env, p.Env)["DB_MAX_CONNS"]); err == nil {
			n = v
		}
		largest = max(largest, n)
	}
	return max(1, float64(largest)/quickPool)
}

// Quick returns s shrunk by one factor (QuickFactor: the largest pool
// becomes 5) and shortened to a few seconds a phase, for tests and smoke
// runs. Every pool-sized knob (scaledKnobs), every client count, rate and
// request count, every bound and the texts that quote them are divided
// by the factor together, so that the ratios that make the lesson (clients
// per connection, offered load to the bound) and the times that follow
// from them (the queue's wait) stay as at full size. A phase's load lasts
// at most 2 s (the scenario's quick_duration, when set; a db_stop phase:
// Postgres down 0.5 s in for 1 s, then 1.5 s more), and task pools are fed
// at most 16 jobs a worker. Per-request delays are kept.
func Quick(s Scenario) Scenario {
	f := s.QuickFactor
	if f <= 0 {
		f = QuickFactor(s)
	}
	s.QuickFactor = f
	longest := quickDuration
	if s.QuickDuration > 0 {
		longest = s.QuickDuration.D()
	}
	s.Env = scaleEnv(s.Env, f)
	if _, ok := s.Env["DB_MAX_CONNS"]; !ok && f > 1 {
		s.Env["DB_MAX_CONNS"] = strconv.Itoa(scaleCount(defaultPool, f))
	}
	s.Title, s.Question = scaleText(s.Title, f), scaleText(s.Question, f)
	phases := make([]Phase, len(s.Phases))
	for i, p := range s.Phases {
		if p.Load != nil {
			p.Load = quickLoad(*p.Load, f, longest)
			if p.DBStop != nil {
				// Down 0.5 s in, for 1 s, with 1.5 s of load after.
				d := *p.DBStop
				d.After, d.For = min(d.After, Duration(500*time.Millisecond)), min(d.For, Duration(time.Second))
				p.DBStop = &d
				p.Load.Duration = d.After + d.For + Duration(1500*time.Millisecond)
			}
		}
		p.Env = scaleEnv(p.Env, f)
		if p.Bound != nil {
			b := *p.Bound
			b.What = scaleFirst(b.What, b.Concurrency, f)
			b.Concurrency = scaleCount(b.Concurrency, f)
			p.Bound = &b
		}
		p.Note = scaleText(p.Note, f)
		if p.Tasks != nil {
			t := *p.Tasks
			if t.Workers > 0 {
				t.Jobs = min(t.Jobs, 16*t.Workers)
			} else {
				t.Jobs = min(t.Jobs, 1000)
			}
			p.Tasks = &t
		}
		phases[i] = p
	}
	s.Phases = phases
	expect := make([]Expectation, len(s.Expect))
	for i, e := range s.Expect {
		e.Says = scaleText(e.Says, f)
		expect[i] = e
	}
	s.Expect = expect
	return s
}

// quickLoad is l shrunk by f, its duration at most longest.
func quickLoad(l Load, f float64, longest time.Duration) *Load {
	l.Concurrency = scaleCount(l.Concurrency, f)
	if l.Duration > 0 {
		l.Duration = min(l.Duration, Duration(longest))
	}
	if l.Requests > 0 {
		l.Requests = int64(scaleCount(int(l.Requests), f))
	}
	l.Rate /= f
	l.RampFrom /= f
	l.Ramp = min(l.Ramp, Duration(time.Second))
	return &l
}

// scaleCount is n/f rounded, at least 1 (0 stays 0).
func scaleCount(n int, f float64) int {
	if n == 0 {
		return 0
	}
	return max(1, int(math.Round(float64(n)/f)))
}

// scaleEnv copies env with the numeric scaledKnobs divided by f.
func scaleEnv(env map[string]string, f float64) map[string]string {
	env = Merged(env, nil)
	for _, k := range scaledKnobs {
		if n, err := strconv.Atoi(env[k]); err == nil {
			env[k] = strconv.Itoa(scaleCount(n, f))
		}
	}
	return env
}

// number is a figure in a text: 2,000, 20, 12.5.
var number = regexp.MustCompile(`\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?`)

var (
	// A rate: "400/s", "1,500 orders/s", "400 per s".
	rateAfter = regexp.MustCompile(`^(?:\s+(?:orders|requests|connections))?(?:/s\b|\s+per\s+s\b)`)
	// A count of what the load or the pool is made of.
	countAfter = regexp.MustCompile(`^(?:\s+to\s+[\d,]+)?\s+(?:(?:concurrent|simultaneous|keep-alive|closed-loop|idle|busy|open)\s+)?(?:clients|connections|requests|orders|workers|permits|threads|goroutines)\b`)
	// A pool-sized knob or pool by name just before the figure.
	poolBefore = regexp.MustCompile(`(?:\bpool(?: of)?|\bLIMIT(?: of)?|\bWORKERS|\bDB_MAX_CONNS)(?:\s+|=)$`)
)

// scaleText divides by f the figures of text that the factor scales:
// counts of clients, connections, requests, workers (rounded as the knobs
// are), pools (pool 20, LIMIT=20) and rates (400/s). Other figures (times,
// shares, ratios) stay.
func scaleText(text string, f float64) string {
	if f == 1 || text == "" {
		return text
	}
	var b strings.Builder
	last := 0
	for _, m := range number.FindAllStringIndex(text, -1) {
		b.WriteString(text[last:m[0]])
		last = m[1]
		tok := text[m[0]:m[1]]
		v, err := strconv.ParseFloat(strings.ReplaceAll(tok, ",", ""), 64)
		if err != nil || (m[0] > 0 && (text[m[0]-1] == '.' || text[m[0]-1] == '-')) {
			b.WriteString(tok)
			continue
		}
		after, before := text[m[1]:], text[:m[0]]
		switch {
		case rateAfter.MatchString(after):
			b.WriteString(FormatFigure(v / f))
		case countAfter.MatchString(after) || poolBefore.MatchString(before):
			b.WriteString(FormatFigure(float64(scaleCount(int(v), f))))
		default:
			b.WriteString(tok)
		}
	}
	b.WriteString(text[last:])
	return b.String()
}

// scaleFirst replaces the first figure n in text (a bound's what) by n
// scaled by f.
func scaleFirst(text string, n int, f float64) string {
	for _, m := range number.FindAllStringIndex(text, -1) {
		if v, err := strconv.Atoi(strings.ReplaceAll(text[m[0]:m[1]], ",", "")); err == nil && v == n {
			return text[:m[0]] + FormatFigure(float64(scaleCount(n, f))) + text[m[1]:]
		}
	}
	return text
}

// FormatFigure writes v as the catalog does: 2,000; 12.5; 5.
func FormatFigure(v float64) string {
	if v != math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	s := strconv.FormatFloat(v, 'f', 0, 64)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
