package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/internal/standin"
)

// TestShardedOpenRunsMerge runs one open schedule (POST /orders, 300/s for
// 500 ms: 150 requests) from three generators at once, each with its shard,
// and merges their reports: the server sees each request of the schedule
// once, and the merged report holds them all under the whole schedule's
// settings. (That the merged latencies equal one generator's is checked
// exactly, in virtual time, by attack's TestShardsShareOneSchedule.)
func TestShardedOpenRunsMerge(t *testing.T) {
	s := standin.New(t, false)
	dir := t.TempDir()
	var files []string
	var wg sync.WaitGroup
	for i := range 3 {
		out := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		files = append(files, out)
		wg.Go(func() {
			code, _, stderr := runCLI(t, "open", "-shard", fmt.Sprintf("%d/3", i), "-rate", "300", "-d", "500ms",
				"-method", "POST", "-name", "orders", "-json", out, s.API.URL+"/orders")
			if code != cli.ExitOK {
				t.Errorf("shard %d: exit %d: %s", i, code, stderr)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, f := range files {
		if r := readReport(t, f).Runs[0]; r.Settings.Shard != fmt.Sprintf("%d/3", i) || r.Sent+r.Unsent != 50 {
			t.Errorf("%s: shard %q sent %d + unsent %d, want its 50 requests", f, r.Settings.Shard, r.Sent, r.Unsent)
		}
	}

	out := filepath.Join(dir, "merged.json")
	code, stdout, stderr := runCLI(t, append([]string{"merge", "-json", out}, files...)...)
	if code != cli.ExitOK || stderr != "" {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	rep := readReport(t, out)
	r := rep.Runs[0]
	if r.Sent+r.Unsent != 150 || r.Sent != s.Orders.Load() || r.Status["201"] != r.Sent {
		t.Errorf("merged: sent %d + unsent %d (status %v), server saw %d; want the schedule's 150", r.Sent, r.Unsent, r.Status, s.Orders.Load())
	}
	if r.Settings.Shard != "" || r.Settings.Rate != 300 || len(rep.MergedFrom) != 3 || rep.Args[0] != "merge" {
		t.Errorf("merged settings %+v, from %d reports, args %q", r.Settings, len(rep.MergedFrom), rep.Args)
	}
	if !strings.Contains(stdout, "open POST "+s.API.URL+"/orders  [orders]") {
		t.Errorf("human output:\n%s", stdout)
	}

	code, stdout, stderr = runCLI(t, "merge", "-md", files[0], files[2])
	if code != cli.ExitOK || !strings.Contains(stdout, "| orders |") || !strings.Contains(stderr, "shards 1/3 missing") {
		t.Errorf("two of three shards: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestMergeRefusesDifferentLoads(t *testing.T) {
	s := standin.New(t, false)
	dir := t.TempDir()
	open, closed := filepath.Join(dir, "open.json"), filepath.Join(dir, "closed.json")
	for _, args := range [][]string{
		{"open", "-rate", "100", "-n", "5", "-name", "db", "-json", open, s.API.URL + "/work/db?delay=1ms"},
		{"closed", "-c", "1", "-n", "5", "-name", "db", "-json", closed, s.API.URL + "/work/db?delay=1ms"},
	} {
		if code, _, stderr := runCLI(t, args...); code != cli.ExitOK {
			t.Fatalf("%s: exit %d: %s", args[0], code, stderr)
		}
	}
	code, stdout, stderr := runCLI(t, "merge", "-json", filepath.Join(dir, "merged.json"), open, closed)
	if code != cli.ExitUsage || stdout != "" || !strings.Contains(stderr, "cannot merge: "+open+" and "+closed+": different modes: open and closed") {
		t.Errorf("exit %d, stderr %q; want 2 and the modes named", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "merged.json")); err == nil {
		t.Error("a refused merge wrote its output")
	}
	if code, _, stderr := runCLI(t, "merge", filepath.Join(dir, "missing.json")); code != cli.ExitUsage || !strings.Contains(stderr, "missing.json") {
		t.Errorf("missing input: exit %d, stderr %q", code, stderr)
	}
}
