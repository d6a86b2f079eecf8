package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/internal/dbfault"
	"github.com/orderlab/orderlab/internal/ledger"
	"github.com/orderlab/orderlab/lab/faults"
)

// The faults subcommand parses into its plan: every fault by default, a
// subset in the order given, the request deadline passed to the services.
func TestFaultsCommandParses(t *testing.T) {
	p, err := parseFaultsCmd(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.cfg.Faults) != len(dbfault.Catalog) || len(p.cfg.Services) != 3 || p.cfg.Rate != 100 || p.cfg.Env["REQUEST_TIMEOUT"] != "5s" {
		t.Errorf("defaults: %d faults, services %v, rate %d, env %v", len(p.cfg.Faults), p.cfg.Services, p.cfg.Rate, p.cfg.Env)
	}
	p, err = parseFaultsCmd([]string{"-faults", "blackhole,restart", "-services", "pipeline", "-request-timeout", "2s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.cfg.Faults) != 2 || p.cfg.Faults[0].Name != "blackhole" || p.cfg.Faults[1].Name != "restart" ||
		len(p.cfg.Services) != 1 || p.cfg.Env["REQUEST_TIMEOUT"] != (2*time.Second).String() {
		t.Errorf("subset: %+v", p.cfg)
	}
	code, _, stderr := runCLI(t, "faults", "-faults", "meteor")
	if code != cli.ExitUsage || !strings.Contains(stderr, `unknown fault "meteor"`) {
		t.Errorf("unknown fault: exit %d, %q", code, stderr)
	}
}

// The report is one table per fault, a row per service, with the columns
// the reliability tables of docs/reference/database-failures.md have.
func TestFaultsReport(t *testing.T) {
	rs := []faults.Result{
		{Fault: "restart", Service: "unbounded", Summary: dbfault.Summary{Sent: 800, Answers: ledger.Tally{"201": 700, "503 database-unavailable": 100},
			Failed: 100, Recovery: 230 * time.Millisecond}},
		{Fault: "restart", Service: "pipeline", Summary: dbfault.Summary{Sent: 800, Answers: ledger.Tally{"201": 800}}},
	}
	var b strings.Builder
	if err := faults.WriteMarkdown(&b, rs, []dbfault.Fault{dbfault.Restart}, faults.Config{Rate: 100, Before: 3 * time.Second, After: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"#### restart",
		"| unbounded | 800 | 201: 700; 503 database-unavailable: 100 | 230ms | 0 | 0 | 0 |",
		"| pipeline | 800 | 201: 800 | no failed answer | 0 | 0 | 0 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
