package report

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orderlab/orderlab/loadtest/attack"
)

// Source is one of the reports a merged report was made from.
type Source struct {
	File      string    `json:"file"`
	Args      []string  `json:"args"`
	StartedAt time.Time `json:"started_at"`
	Host      Host      `json:"host"`
}

// MergeReports merges reports that several generators wrote of the same
// load: each target's runs, matched by name, are merged with [Merge]. files
// names the reports, for messages and the merged report's MergedFrom. The
// merged report starts when the earliest input did; its Host is this machine.
func MergeReports(reps []*Report, files []string) (merged *Report, notes []string, err error) {
	if len(reps) == 0 || len(reps) != len(files) {
		return nil, nil, errors.New("no reports to merge")
	}
	names := func(rep *Report) []string {
		var ns []string
		for _, r := range rep.Runs {
			ns = append(ns, r.Name)
		}
		return ns
	}
	first := reps[0]
	merged = New(first.Mode, append([]string{"merge"}, files...))
	merged.StartedAt = first.StartedAt
	for i, rep := range reps {
		if !slices.Equal(slices.Sorted(slices.Values(names(rep))), slices.Sorted(slices.Values(names(first)))) {
			return nil, nil, fmt.Errorf("%s has the targets %v, %s %v: merge reports of the same targets (named with -name)",
				files[i], names(rep), files[0], names(first))
		}
		if i > 0 && rep.Mode != first.Mode {
			return nil, nil, fmt.Errorf("%s and %s: different modes: %s and %s", files[0], files[i], first.Mode, rep.Mode)
		}
		if rep.StartedAt.Before(merged.StartedAt) {
			merged.StartedAt = rep.StartedAt
		}
		merged.MergedFrom = append(merged.MergedFrom, Source{File: files[i], Args: rep.Args, StartedAt: rep.StartedAt, Host: rep.Host})
	}
	for _, r := range first.Runs {
		var group []Run
		for i, rep := range reps {
			j := slices.IndexFunc(rep.Runs, func(o Run) bool { return o.Name == r.Name })
			if err := Compatible(r, rep.Runs[j]); err != nil {
				return nil, nil, fmt.Errorf("%s and %s: %w", files[0], files[i], err)
			}
			group = append(group, rep.Runs[j])
		}
		run, n, err := Merge(group)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", r.Name, err)
		}
		merged.Runs = append(merged.Runs, run)
		for _, note := range n {
			notes = append(notes, r.Name+": "+note)
		}
	}
	return merged, notes, nil
}

// mergeKeys are the settings runs must share to be merged: what decides
// what a latency or an error is (the load's shape, the schedule the
// corrected latencies are measured from, the timeout, the retry policy,
// the client). The connections and the shard index may differ.
var mergeKeys = []struct {
	name string
	get  func(Settings) string
}{
	{"modes", func(s Settings) string { return s.Mode }},
	{"methods", func(s Settings) string { return s.Method }},
	{"rates", func(s Settings) string { return num(s.Rate) }},
	{"ramps", func(s Settings) string { return num(s.RampFrom) + "/s over " + num(s.RampSeconds) + "s" }},
	{"shard counts", func(s Settings) string { return shardCount(s.Shard) }},
	{"durations", func(s Settings) string { return num(s.DurationSeconds) + "s" }},
	{"request bounds", func(s Settings) string { return strconv.FormatInt(s.Requests, 10) }},
	{"timeouts", func(s Settings) string { return num(s.TimeoutSeconds) + "s" }},
	{"retry policies", func(s Settings) string { return s.Retry }},
	{"retry bounds", func(s Settings) string { return strconv.Itoa(s.Retries) }},
	{"retry waits", func(s Settings) string { return num(s.RetryMaxWait) + "s" }},
	{"warm-ups", func(s Settings) string { return strconv.FormatBool(s.Warmup) }},
	{"clients", func(s Settings) string { return s.Client }},
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// shardCount is "whole schedule" or "n shards".
func shardCount(shard string) string {
	s, err := attack.ParseShard(shard)
	if err != nil || s.Whole() {
		return "whole schedule"
	}
	return strconv.Itoa(s.Count) + " shards"
}

// Compatible reports why b cannot be merged with a, or nil: they must be
// runs of the same target (name, path and query) under the same settings
// (see [Merge]).
func Compatible(a, b Run) error {
	if a.Name != b.Name {
		return fmt.Errorf("different targets: %s and %s", a.Name, b.Name)
	}
	pa, pb := requestURI(a.URL), requestURI(b.URL)
	if pa != pb {
		return fmt.Errorf("different paths: %s and %s", pa, pb)
	}
	for _, k := range mergeKeys {
		if va, vb := k.get(a.Settings), k.get(b.Settings); va != vb {
			return fmt.Errorf("different %s: %s and %s", k.name, va, vb)
		}
	}
	return nil
}

func requestURI(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.RequestURI()
}

// Merge combines runs of one target from several generators into one run,
// exactly: the histograms are merged bucket by bucket (the HDR encoding
// keeps every bucket), the counts summed, and the time window is the union
// of theirs. The runs must be [Compatible]; shards of one schedule must be
// distinct. The merged settings count the connections of all runs, and the
// rate and request bound of the share of the schedule they sent together.
//
// The client CPU is summed. A server section is kept when exactly one run
// has one (one generator scraped the target; its CPU per success is then
// over the merged successes); several are left out, since each generator
// scraped the same server on its own. notes says what the merged run lacks.
func Merge(runs []Run) (merged Run, notes []string, err error) {
	if len(runs) == 0 {
		return Run{}, nil, errors.New("no runs to merge")
	}
	first := runs[0]
	res := attack.NewResult()
	settings := first.Settings
	settings.Concurrency, settings.Shard = 0, ""
	var share float64 // of the schedule, in generators' worth
	var cpu float64
	shards := map[int]bool{}
	var servers []*Server
	for i, r := range runs {
		if err := Compatible(first, r); err != nil {
			return Run{}, nil, fmt.Errorf("run %d: %w", i+1, err)
		}
		s, err := attack.ParseShard(r.Settings.Shard)
		if err != nil {
			return Run{}, nil, fmt.Errorf("run %d: %w", i+1, err)
		}
		if s.Whole() {
			share++
		} else {
			if shards[s.Index] {
				return Run{}, nil, fmt.Errorf("shard %s twice: its requests would count twice", s)
			}
			shards[s.Index] = true
			share += 1 / float64(s.Count)
		}
		rr, err := r.Result()
		if err != nil {
			return Run{}, nil, fmt.Errorf("run %d: %w", i+1, err)
		}
		res.Merge(rr)
		settings.Concurrency += r.Settings.Concurrency
		cpu += r.ClientCPUSeconds
		if r.Server != nil {
			servers = append(servers, r.Server)
		}
	}
	if s, _ := attack.ParseShard(first.Settings.Shard); !s.Whole() && len(shards) < s.Count {
		var missing []string
		for i := range s.Count {
			if !shards[i] {
				missing = append(missing, attack.Shard{Index: i, Count: s.Count}.String())
			}
		}
		notes = append(notes, fmt.Sprintf("shards %s missing: the merged run holds %d of the %d shares of the schedule",
			strings.Join(missing, ", "), len(shards), s.Count))
	}
	settings.Rate *= share
	settings.RampFrom *= share
	settings.Requests = int64(math.Round(float64(settings.Requests) * share))

	merged, err = FromResult(first.Name, first.URL, attack.Config{Mode: attack.Mode(first.Settings.Mode)}, res, nil)
	if err != nil {
		return Run{}, nil, err
	}
	merged.Settings = settings
	merged.Warnings = nil // made for the merged settings (-c), not FromResult's
	if w := lagWarning(merged); w != "" {
		merged.Warnings = []string{w}
	}
	merged.ClientCPUSeconds = cpu
	switch len(servers) {
	case 0:
	case 1:
		sv := *servers[0]
		sv.CPUPerSuccessUS = 0
		if merged.Succeeded > 0 {
			sv.CPUPerSuccessUS = sv.CPUSeconds / float64(merged.Succeeded) * 1e6
		}
		merged.Server = &sv
	default:
		notes = append(notes, fmt.Sprintf("the server metrics of %d runs are left out: each generator scraped the same server on its own", len(servers)))
	}
	return merged, notes, nil
}
