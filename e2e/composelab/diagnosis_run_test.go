//go:build composelab

package composelab

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/orderlab/orderlab/lab/scenario"
	"github.com/orderlab/orderlab/lab/scenario/result"
	"github.com/orderlab/orderlab/loadtest/report"
)

// runPitfall runs one pitfall on one model, as `docker compose run --rm lab
// scenario FILE` of its catalog phase alone (variantOf), and records the
// phase's start and length from the runner's report.
func (d *diagnosis) runPitfall(task runTask) {
	t := d.t
	affects := []string{task.model}
	if task.plan.proxy {
		affects = modelNames
	}
	d.rest(affects)
	s, says, err := variantOf(task.plan, task.model, time.Duration(d.set.PhaseSeconds*float64(time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	d.n++
	name := fmt.Sprintf("%02d-%s-%s", d.n, task.plan.pitfall, task.model)
	file, err := writeVariant(d.dir, name, s)
	if err != nil {
		t.Fatal(err)
	}
	before := allKnobs(t)
	from := time.Now().UTC()
	timeout := time.Duration(d.set.PhaseSeconds*float64(time.Second)) + 5*time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := []string{"run", "--rm", "-v", d.dir + ":/diag", "lab", "scenario", file, "-out", "/diag/" + name}
	out, err := d.l.run(ctx, nil, args...)
	st := pitfallRun{
		Pitfall: task.plan.pitfall, Model: task.model, Scenario: task.plan.pitfall, Phase: task.plan.phase,
		How: howOf(s), CatalogSays: says, From: from,
		PhaseStart: from, PhaseSeconds: d.set.PhaseSeconds,
	}
	if also := task.plan.also[task.model]; len(also) > 0 {
		st.AlsoRan, st.AlsoWhy = also, task.plan.alsoWhy
	}
	// Exit 1 is a missed expectation of the runner's (the variant has
	// none); anything else is a run that did not get to its end: the
	// test fails, and goes on, so that the report has the others.
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		st.Failed = fmt.Sprintf("docker compose %s: %v: %s", strings.Join(args, " "), err, lastLine(out))
		t.Errorf("%s\n%s%s", st.Failed, tail(out, 40), d.l.logs(append([]string{"lab"}, modelNames...)...))
	}
	knobsBack(t, d.l, before, "run "+name)
	if run, ok := readRun(filepath.Join(d.dir, name)); ok {
		st.PhaseStart, st.PhaseSeconds = run.StartedAt.UTC(), run.ElapsedSeconds
	} else if st.Failed == "" {
		st.Failed = "the runner wrote no report of the phase's run: " + lastLine(out)
		t.Errorf("%s: %s\n%s", name, st.Failed, tail(out, 40))
	}
	if task.plan.proxy {
		st.Affects = slices.DeleteFunc(slices.Clone(modelNames), func(m string) bool { return m == task.model })
	}
	d.add(st, affects)
	t.Logf("%s: phase from %s for %.0f s (%s)", name, st.PhaseStart.Format("15:04:05"), st.PhaseSeconds, time.Since(from).Round(time.Second))
}

// add closes st's window TailSeconds after its phase and records it.
func (d *diagnosis) add(st pitfallRun, services []string) {
	st.To = st.PhaseStart.Add(time.Duration((st.PhaseSeconds + d.set.TailSeconds) * float64(time.Second)))
	d.r.Runs = append(d.r.Runs, st)
	for _, s := range services {
		if st.To.After(d.lastEnd[s]) {
			d.lastEnd[s] = st.To
		}
	}
}

// readRun reads the run of the one scenario result the runner wrote
// under dir.
func readRun(dir string) (report.Run, bool) {
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if len(files) != 1 {
		return report.Run{}, false
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		return report.Run{}, false
	}
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil || len(r.Phases) != 1 || r.Phases[0].Loadtest == nil || len(r.Phases[0].Loadtest.Runs) != 1 {
		return report.Run{}, false
	}
	return r.Phases[0].Loadtest.Runs[0], true
}

// lastLine is the last line of a command's output that says something.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// loadtest runs `docker compose run --rm loadtest open` against model's
// POST /orders?db_delay=50ms for dur, with args, and returns its run.
func (d *diagnosis) loadtest(model, name string, dur time.Duration, args ...string) (report.Run, error) {
	ctx, cancel := context.WithTimeout(context.Background(), dur+5*time.Minute)
	defer cancel()
	full := append([]string{"run", "--rm", "-v", d.dir + ":/diag", "loadtest", "open", "-allow-remote"}, args...)
	full = append(full, "-d", dur.String(), "-method", "POST", "-json", "/diag/"+name+".json", "http://"+model+":8080/orders?db_delay=50ms")
	if out, err := d.l.run(ctx, nil, full...); err != nil {
		return report.Run{}, fmt.Errorf("docker compose %s: %v\n%s", strings.Join(full, " "), err, tail(out, 30))
	}
	data, err := os.ReadFile(filepath.Join(d.dir, name+".json"))
	if err != nil {
		return report.Run{}, err
	}
	var r report.Report
	if err := json.Unmarshal(data, &r); err != nil || len(r.Runs) != 1 {
		return report.Run{}, fmt.Errorf("%s.json: %v, %d runs", name, err, len(r.Runs))
	}
	return r.Runs[0], nil
}

// The too-many-clients recipe of docs/lab.md, as written there.
const (
	tmcUp   = "POSTGRES_MAX_CONNECTIONS=50 docker compose up -d"
	tmcLoad = `docker compose run --rm -d loadtest open -allow-remote -rate 300 -c 300 -d 60s -method POST "http://$s:8080/orders?db_delay=50ms"`
)

// tooManyClients runs too-many-clients as docs/lab.md does: Postgres
// started with room for 50 connections, the three services loaded at
// once (each run in the foreground here, so that its report can be read).
// It follows the runs behind the database proxy, and its up also takes the
// lab off the proxy.
func (d *diagnosis) tooManyClients() {
	t := d.t
	data, err := os.ReadFile(filepath.Join(root, "docs", "lab.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{tmcUp, tmcLoad} {
		if !strings.Contains(string(data), want) {
			t.Fatalf("docs/lab.md no longer gives %q, which this test runs", want)
		}
	}
	// From the dbproxy recipe's lab: the same up puts the services back
	// on postgres:5432 (LAB_DATABASE_URL unset), and the proxy goes.
	d.settle(tmcUp+", the lab back on postgres:5432", func() {
		d.l.must(t, 10*time.Minute, []string{"POSTGRES_MAX_CONNECTIONS=50"}, nil, "up", "-d", "--wait")
		d.l.must(t, 10*time.Minute, nil, nil, "--profile", "dbproxy", "rm", "--stop", "--force", "dbproxy")
	})
	d.rest(modelNames)
	from := time.Now().UTC()
	runs := make([]report.Run, len(modelNames))
	errs := make([]error, len(modelNames))
	var wg sync.WaitGroup
	for i, m := range modelNames {
		wg.Go(func() {
			runs[i], errs[i] = d.loadtest(m, "too-many-clients-"+m, time.Minute, "-rate", "300", "-c", "300")
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i, m := range modelNames {
		st := pitfallRun{
			Pitfall: "too-many-clients", Model: m, Scenario: "too-many-clients", Phase: "docs/lab.md's recipe",
			How:         "`" + tmcUp + "`, then on the three services at once `" + tmcLoad + "` (in the foreground, with -json).",
			CatalogSays: "connections beyond the limit are refused (FATAL 53300); the requests that needed one are answered 503 database-unavailable (docs/lab.md: `unavailable` climbs in whichever services asked for a connection after the server was full)",
			From:        from, PhaseStart: runs[i].StartedAt.UTC(), PhaseSeconds: runs[i].ElapsedSeconds,
		}
		// Which services Postgres refuses is a race (docs/lab.md): one whose
		// load saw no 503 had its pool before the server was full, and the
		// pitfall did not reach it.
		if runs[i].Status["503"] == 0 {
			st.Unproven = fmt.Sprintf("not reached: none of its %d answers was a 503, so Postgres refused none of its connections: "+
				"it had its pool before the server was full (docs/lab.md, Too many clients)", runs[i].Answered)
		}
		d.add(st, []string{m})
	}
}

// attribute puts every alert in the pitfall run whose window it became active
// in (on its model first, else on a service it affects), or else in the
// window of its service it fell in; and fills each service's time outside
// every window, from calmFrom to end, with calm windows.
func (d *diagnosis) attribute(alerts []alertSeen, end time.Time) {
	// A pitfall run's window ends where the lab is recreated after it: what
	// fires then is the recreation's.
	for i, s := range d.r.Runs {
		for _, w := range d.r.Windows {
			if w.Kind == "settle" && w.Service == s.Model && w.From.After(s.From) && w.From.Before(s.To) {
				d.r.Runs[i].To = w.From
				s.To = w.From
			}
		}
	}
	for _, m := range modelNames {
		var taken [][2]time.Time
		for _, s := range d.r.Runs {
			if s.Model == m || slices.Contains(s.Affects, m) {
				taken = append(taken, [2]time.Time{s.From, s.To})
			}
		}
		for _, w := range d.r.Windows {
			if w.Service == m {
				taken = append(taken, [2]time.Time{w.From, w.To})
			}
		}
		slices.SortFunc(taken, func(a, b [2]time.Time) int { return a[0].Compare(b[0]) })
		at := d.calmFrom.UTC()
		for _, w := range taken {
			if w[0].After(at) {
				d.r.Windows = append(d.r.Windows, window{Kind: "calm", Service: m, From: at, To: w[0]})
			}
			if w[1].After(at) {
				at = w[1]
			}
		}
		if end.After(at) {
			d.r.Windows = append(d.r.Windows, window{Kind: "calm", Service: m, From: at, To: end})
		}
	}
	slices.SortStableFunc(d.r.Windows, func(a, b window) int { return a.From.Compare(b.From) })
	in := func(a alertSeen, from, to time.Time) bool { return !a.ActiveAt.Before(from) && !a.ActiveAt.After(to) }
	for _, a := range alerts {
		i := slices.IndexFunc(d.r.Runs, func(s pitfallRun) bool { return s.Model == a.Service && in(a, s.From, s.To) })
		if i < 0 {
			i = slices.IndexFunc(d.r.Runs, func(s pitfallRun) bool { return slices.Contains(s.Affects, a.Service) && in(a, s.From, s.To) })
		}
		if i >= 0 {
			d.r.Runs[i].Alerts = append(d.r.Runs[i].Alerts, a)
			continue
		}
		a.During = "none"
		if j := slices.IndexFunc(d.r.Windows, func(w window) bool { return w.Service == a.Service && in(a, w.From, w.To) }); j >= 0 {
			a.During = d.r.Windows[j].Kind
		}
		d.r.Alerts = append(d.r.Alerts, a)
	}
}

// howOf says what a variant runs, in words, for the report.
func howOf(s scenario.Scenario) string {
	ph := s.Phases[0]
	l := ph.Load
	var what []string
	switch l.Mode {
	case "open":
		what = append(what, fmt.Sprintf("%s %s at %g/s (at most %d connections) for %s", cmp.Or(ph.Request.Method, "GET"), ph.Request.Path, l.Rate, l.Concurrency, l.Duration.D()))
	default:
		what = append(what, fmt.Sprintf("%d %s clients sending %s %s for %s", l.Concurrency, l.Mode, cmp.Or(ph.Request.Method, "GET"), ph.Request.Path, l.Duration.D()))
	}
	if l.Retry != "" {
		what = append(what, "retry "+l.Retry)
	}
	env := maps.Clone(s.Env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, ph.Env)
	var knobs []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		knobs = append(knobs, k+"="+env[k])
	}
	if len(knobs) > 0 {
		what = append(what, strings.Join(knobs, " "))
	}
	if ph.DBLatency != nil {
		what = append(what, "the database proxy adding "+ph.DBLatency.D().String()+" per round trip")
	}
	if ph.DBStop != nil {
		what = append(what, fmt.Sprintf("the database proxy down %s after %s", ph.DBStop.For.D(), ph.DBStop.After.D()))
	}
	return "`lab scenario` of a file: " + strings.Join(what, "; ") + "."
}
