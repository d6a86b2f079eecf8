package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/loadtest/attack"
)

// retried is an open run of 100 requests under cfg.Retry, 40 of them sent
// again (60 retries in all): 160 attempts, an amplification of 1.6.
func retried(t *testing.T, policy attack.RetryPolicy, retries int64) Run {
	t.Helper()
	res := attack.NewResult()
	res.Mode, res.Started, res.Elapsed = attack.ModeOpen, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), 10*time.Second
	res.Sent, res.Retries, res.Status[201], res.Status[429] = 100, retries, 90, 10
	cfg := sampleConfig()
	cfg.Retry, cfg.Retries = policy, 5
	run, err := FromResult("semaphore", cfg.Target.URL, cfg, res, nil)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// The retry amplification is attempts over first attempts: in the JSON,
// in the table beside attempts/ok, and a term of -slo.
func TestRetryAmplificationIsReported(t *testing.T) {
	run := retried(t, attack.RetryImmediate, 60)
	if run.Attempts != 160 || run.Amplification != 1.6 {
		t.Fatalf("attempts %d, amplification %v; want 160 and 1.6", run.Attempts, run.Amplification)
	}
	rep := New("open", nil)
	rep.Runs = append(rep.Runs, run)
	var buf bytes.Buffer
	if err := Write(&buf, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"retry_amplification": 1.6`) {
		t.Errorf("the JSON lacks \"retry_amplification\": 1.6:\n%s", buf.String())
	}
	head, rows := Table([]Run{run})
	i := slices.Index(head, "amplification")
	if i < 0 || rows[0][i] != "1.60" {
		t.Errorf("table %v %v: want an amplification column of 1.60", head, rows)
	}
	slo, err := ParseSLO("amplification<=1.2")
	if err != nil {
		t.Fatal(err)
	}
	if ev := slo.Evaluate(run); ev[0].Met || ev[0].Actual != "1.60" {
		t.Errorf("amplification<=1.2 against 1.6: %+v, want missed at 1.60", ev[0])
	}
	if ev := slo.Evaluate(retried(t, attack.RetryTokenBucket, 10)); !ev[0].Met || ev[0].Actual != "1.10" {
		t.Errorf("amplification<=1.2 against 1.1: %+v, want met at 1.10", ev[0])
	}
}

// A budget that bound from the first rejection resent nothing: its
// amplification of 1.00 is still shown, since the policy is the point;
// a run without a policy that resent nothing has no such column.
func TestAmplificationColumnFollowsThePolicy(t *testing.T) {
	if head, rows := Table([]Run{retried(t, attack.RetryTokenBucket, 0)}); !slices.Contains(head, "amplification") || !slices.Contains(rows[0], "1.00") {
		t.Errorf("token-bucket that resent nothing: %v %v, want an amplification of 1.00", head, rows)
	}
	if head, _ := Table([]Run{retried(t, attack.RetryNone, 0)}); slices.Contains(head, "amplification") {
		t.Errorf("no policy, no retry: %v has an amplification column", head)
	}
}

// server_rejections is the rate of the rejections the server counted over
// the run, read from its metrics; a run without them misses the term.
func TestServerRejectionsReadTheServersCount(t *testing.T) {
	run := retried(t, attack.RetryImmediate, 60)
	slo, err := ParseSLO("server_rejections<50")
	if err != nil {
		t.Fatal(err)
	}
	if ev := slo.Evaluate(run); ev[0].Met || ev[0].Actual != "no server metrics" {
		t.Errorf("without metrics: %+v, want missed for want of server metrics", ev[0])
	}
	run.Server = &Server{}
	run.Server.Scrapes, run.Server.Rejections = 11, 600 // over the run's 10 s
	if ev := slo.Evaluate(run); ev[0].Met || ev[0].Actual != "60.0" {
		t.Errorf("600 rejections in 10 s against <50/s: %+v, want missed at 60.0", ev[0])
	}
	if v, _, ok := Figure("server_rejections", run); !ok || v != 60 {
		t.Errorf("Figure(server_rejections) = %v, %v; want 60 a second", v, ok)
	}
}
