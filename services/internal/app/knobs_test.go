package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/poll"
	"github.com/orderlab/orderlab/services/internal/api"
	"github.com/orderlab/orderlab/services/internal/app"
	"github.com/orderlab/orderlab/services/internal/apptest"
	"github.com/orderlab/orderlab/services/internal/direct"
	"github.com/orderlab/orderlab/services/internal/knob"
	"github.com/orderlab/orderlab/services/internal/model"
)

const token = "t0ken-for-tests"

var unbounded = app.Service{Model: "unbounded", Start: func(d app.Deps) (app.Build, error) {
	return func(*knob.Set) (model.Model, error) { return direct.Unlimited(d.Store, d.Audit), nil }, nil
}}

func problem(t *testing.T, r apptest.Response, status int) api.Problem {
	t.Helper()
	if r.Status != status || r.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("answer %d %s %s, want a %d problem", r.Status, r.Header.Get("Content-Type"), r.Body, status)
	}
	var p api.Problem
	r.JSON(t, &p)
	return p
}

// rounds is the default of /work/cpu, which WORK_CPU_ROUNDS sets: what the
// API really uses.
func rounds(t *testing.T, inst *apptest.Instance) int {
	t.Helper()
	var w struct{ Rounds int }
	inst.MustDo(http.MethodGet, "/work/cpu", "", nil, nil).JSON(t, &w)
	return w.Rounds
}

func TestKnobsReadOnlyWithoutToken(t *testing.T) {
	inst := apptest.Start(t, unbounded, nil)
	ks := inst.Knobs()
	if k := ks["DB_MAX_CONNS"]; k.Value != "4" || k.Default != "20" || k.Source != "environment" || !k.Live || k.Range != "1..10000" {
		t.Errorf("DB_MAX_CONNS = %+v", k)
	}
	if k := ks["WORK_CPU_ROUNDS"]; k.Value != "5000" || k.Source != "default" {
		t.Errorf("WORK_CPU_ROUNDS = %+v", k)
	}
	if k := ks["HTTP_SERVER"]; k.Live || k.Restart == "" {
		t.Errorf("HTTP_SERVER = %+v, want restart-only with a reason", k)
	}
	if _, ok := ks["LIMIT"]; ok {
		t.Error("the unbounded service lists LIMIT, a semaphore knob")
	}
	if k := ks["DATABASE_URL"]; strings.Contains(k.Value, "postgres://") || !strings.Contains(k.Value, "host=") {
		t.Errorf("DATABASE_URL shown as %q, want pgdb.Describe's form", k.Value)
	}
	p := problem(t, inst.PatchKnobs(token, map[string]string{"WORK_CPU_ROUNDS": "7"}), http.StatusForbidden)
	if !strings.Contains(p.Detail, "ADMIN_TOKEN") || !strings.HasSuffix(p.Type, "#problem-read-only") {
		t.Errorf("403 = %+v, want it to say how to enable changes", p)
	}
	if rounds(t, inst) != 5000 {
		t.Error("a refused change applied")
	}
}

func TestKnobsPatch(t *testing.T) {
	inst := apptest.Start(t, unbounded, map[string]string{"ADMIN_TOKEN": token, "LOG_LEVEL": "info"})
	if v := inst.Knobs()["ADMIN_TOKEN"].Value; v != "set" {
		t.Errorf("ADMIN_TOKEN shown as %q", v)
	}

	t.Run("token", func(t *testing.T) {
		for _, tok := range []string{"", "wrong", token + "x"} {
			problem(t, inst.PatchKnobs(tok, map[string]string{"WORK_CPU_ROUNDS": "7"}), http.StatusUnauthorized)
		}
		problem(t, inst.Admin(http.MethodPost, "/knobs/release-leaked", "", ""), http.StatusUnauthorized)
	})
	t.Run("all or nothing", func(t *testing.T) {
		p := problem(t, inst.PatchKnobs(token, map[string]string{"WORK_CPU_ROUNDS": "7", "DB_DELAY": "forever"}), http.StatusBadRequest)
		if len(p.Errors) != 1 || p.Errors[0].Field != "DB_DELAY" || !strings.Contains(p.Errors[0].Detail, "want a duration from 0s to 10s") {
			t.Errorf("400 = %+v, want DB_DELAY named with its range", p)
		}
		if rounds(t, inst) != 5000 || inst.Knobs()["WORK_CPU_ROUNDS"].Source != "default" {
			t.Error("a valid knob of a refused change applied")
		}
	})
	t.Run("rule between knobs", func(t *testing.T) {
		p := problem(t, inst.PatchKnobs(token, map[string]string{"DB_MIN_CONNS": "9"}), http.StatusBadRequest)
		if len(p.Errors) != 1 || p.Errors[0].Field != "DB_MIN_CONNS" || !strings.Contains(p.Errors[0].Detail, "at most DB_MAX_CONNS (4)") {
			t.Errorf("400 = %+v", p)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		for _, name := range []string{"NOPE", "LIMIT"} { // LIMIT: not this model's
			p := problem(t, inst.PatchKnobs(token, map[string]string{name: "1"}), http.StatusBadRequest)
			if len(p.Errors) != 1 || p.Errors[0].Field != name {
				t.Errorf("400 = %+v, want %s named", p, name)
			}
		}
		problem(t, inst.Admin(http.MethodPatch, "/knobs", token, `["WORK_CPU_ROUNDS"]`), http.StatusBadRequest)
		problem(t, inst.Admin(http.MethodPatch, "/knobs", token, `{"WORK_CPU_ROUNDS": 7}`), http.StatusBadRequest)
	})
	t.Run("restart-only", func(t *testing.T) {
		p := problem(t, inst.PatchKnobs(token, map[string]string{"HTTP_SERVER": "nbio", "DATABASE_URL": "postgres://x@y/z"}), http.StatusConflict)
		if len(p.Errors) != 2 || !strings.Contains(p.Detail, "HTTP_SERVER") || !strings.Contains(p.Detail, "DATABASE_URL") {
			t.Errorf("409 = %+v, want both named", p)
		}
	})
	t.Run("applies", func(t *testing.T) {
		r := inst.PatchKnobs(token, map[string]string{"WORK_CPU_ROUNDS": " 7 ", "DB_DELAY": "0s"})
		if r.Status != http.StatusOK {
			t.Fatalf("PATCH = %d %s", r.Status, r.Body)
		}
		var out struct{ Changed []string }
		r.JSON(t, &out)
		if strings.Join(out.Changed, ",") != "WORK_CPU_ROUNDS" {
			t.Errorf("changed = %v, want only WORK_CPU_ROUNDS (DB_DELAY kept its value)", out.Changed)
		}
		if rounds(t, inst) != 7 {
			t.Error("WORK_CPU_ROUNDS did not reach the API")
		}
		if k := inst.Knobs()["WORK_CPU_ROUNDS"]; k.Value != "7" || k.Source != "runtime" {
			t.Errorf("WORK_CPU_ROUNDS = %+v", k)
		}
		fams := inst.Metrics()
		if v := fams.Value("orderlab_knob_value", map[string]string{"knob": "WORK_CPU_ROUNDS"}); v != 7 {
			t.Errorf("orderlab_knob_value{knob=WORK_CPU_ROUNDS} = %v", v)
		}
		if v := fams.Value("orderlab_knob_value", map[string]string{"knob": "REQUEST_TIMEOUT"}); v != 30 {
			t.Errorf("orderlab_knob_value{knob=REQUEST_TIMEOUT} = %v, want seconds", v)
		}
		if v := fams.Value("orderlab_knob_changes_total", map[string]string{"knob": "WORK_CPU_ROUNDS"}); v != 1 {
			t.Errorf("orderlab_knob_changes_total{knob=WORK_CPU_ROUNDS} = %v", v)
		}
		log := inst.Log.String()
		if !regexp.MustCompile(`"msg":"knob changed",("service":"[a-z-]+",)?"knob":"WORK_CPU_ROUNDS","old":"5000","new":"7","remote_addr":"127\.0\.0\.1:\d+"`).MatchString(log) {
			t.Errorf("no change log line:\n%s", log)
		}
		if strings.Contains(log, token) {
			t.Error("the token is in the log")
		}
	})
	t.Run("request timeout", func(t *testing.T) {
		p := problem(t, inst.PatchKnobs(token, map[string]string{"REQUEST_TIMEOUT": "31s"}), http.StatusBadRequest)
		if len(p.Errors) != 1 || p.Errors[0].Field != "REQUEST_TIMEOUT" || !strings.Contains(p.Errors[0].Detail, "at most 30s live") {
			t.Errorf("400 = %+v", p)
		}
		if r := inst.PatchKnobs(token, map[string]string{"REQUEST_TIMEOUT": "50ms"}); r.Status != http.StatusOK {
			t.Fatalf("PATCH = %d %s", r.Status, r.Body)
		}
		r := inst.MustDo(http.MethodGet, "/work/api?delay=2s", "", nil, nil)
		if r.Status != http.StatusServiceUnavailable && r.Status != http.StatusGatewayTimeout {
			t.Errorf("/work/api?delay=2s under a 50ms REQUEST_TIMEOUT = %d %s", r.Status, r.Body)
		}
	})
}

// Concurrent changes are serialised: in the log, every change starts from
// the value the one before it left.
func TestKnobsConcurrentPatches(t *testing.T) {
	inst := apptest.Start(t, unbounded, map[string]string{"ADMIN_TOKEN": token, "LOG_LEVEL": "info"})
	const n = 16
	var wg sync.WaitGroup
	status := make([]int, n)
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPatch, inst.AdminURL+"/knobs",
				strings.NewReader(`{"WORK_CPU_ROUNDS":"`+strconv.Itoa(100+i)+`"}`))
			req.Header.Set("Authorization", "Bearer "+token)
			if r, err := inst.Send(req); err == nil {
				status[i] = r.Status
			}
		})
	}
	wg.Wait()
	for i, s := range status {
		if s != http.StatusOK {
			t.Errorf("PATCH %d = %d", i, s)
		}
	}
	type line struct{ Msg, Knob, Old, New string }
	prev := "5000"
	changes := 0
	for _, l := range strings.Split(inst.Log.String(), "\n") {
		var ln line
		if json.Unmarshal([]byte(l), &ln) != nil || ln.Msg != "knob changed" {
			continue
		}
		if ln.Old != prev {
			t.Errorf("change %s -> %s after %s: not serialised", ln.Old, ln.New, prev)
		}
		prev = ln.New
		changes++
	}
	if changes != n || rounds(t, inst) != mustAtoi(t, prev) {
		t.Errorf("%d changes logged, last %s; /work/cpu uses %d", changes, prev, rounds(t, inst))
	}
	if v := inst.Metrics().Value("orderlab_knob_changes_total", map[string]string{"knob": "WORK_CPU_ROUNDS"}); v != n {
		t.Errorf("orderlab_knob_changes_total = %v, want %d", v, n)
	}
}

// Once shutdown begins, a change is refused with a 503, while the admin
// listener still answers (an in-flight request holds the shutdown open).
func TestKnobsRefusedDuringShutdown(t *testing.T) {
	inst := apptest.Start(t, unbounded, map[string]string{"ADMIN_TOKEN": token})
	held := make(chan apptest.Response, 1)
	go func() { held <- inst.MustDo(http.MethodGet, "/work/api?delay=2s", "", nil, nil) }()
	poll.Until(t, 5*time.Second, "the held request in flight", func() error {
		if n := inst.Metrics().Value("orderlab_http_requests_in_flight", nil); n < 1 {
			return fmt.Errorf("%v in flight", n)
		}
		return nil
	})
	stopped := make(chan error, 1)
	go func() { stopped <- inst.Stop() }()
	for i := 0; ; i++ {
		r := inst.PatchKnobs(token, map[string]string{"WORK_CPU_ROUNDS": strconv.Itoa(10 + i%2)})
		if r.Status == http.StatusServiceUnavailable {
			p := problem(t, r, http.StatusServiceUnavailable)
			if !strings.HasSuffix(p.Type, "#problem-shutting-down") {
				t.Errorf("503 = %+v", p)
			}
			break
		}
		if r.Status != http.StatusOK {
			t.Fatalf("PATCH during shutdown = %d %s, want 200 then 503", r.Status, r.Body)
		}
		select {
		case <-held:
			t.Fatal("the held request ended before a PATCH was refused")
		default:
		}
	}
	if r := <-held; r.Status != http.StatusOK {
		t.Errorf("the held request = %d, want it finished by the shutdown", r.Status)
	}
	if err := <-stopped; err != nil {
		t.Errorf("stop: %v", err)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
