// Package catalog holds the scenarios the lab command runs: one YAML file per
// scenario (the four published experiments and the pitfalls of README.md,
// Pitfalls and experiments), embedded so that the lab binary carries
// them. Package scenario defines the format and runs them.
package catalog

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/orderlab/orderlab/lab/scenario"
)

//go:embed *.yaml
var files embed.FS

// Order is the catalog's order: the experiments first, then the pitfalls.
// A scenario's number is its place in it, from 1 (Scenario.Number).
var Order = []string{
	"burst-1000", "wrk-500", "rising-concurrency", "hundred-thousand-tasks", "pool-starvation",
	"backpressure-void", "per-request-memory", "os-thread-pinning", "blocked-event-loop", "cpu-bound-parity",
	"retry-storm", "adaptive-limit", "connection-memory",
	"connection-leak", "nested-acquire", "tx-across-downstream",
	"too-many-clients", "db-latency", "db-restart", "storm-settings",
}

// All parses every scenario, in Order.
func All() ([]scenario.Scenario, error) {
	names, err := fs.Glob(files, "*.yaml")
	if err != nil {
		return nil, err
	}
	var out []scenario.Scenario
	for _, n := range names {
		s, err := load(n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b scenario.Scenario) int { return rank(a.Name) - rank(b.Name) })
	return out, nil
}

// Get parses the scenario called name.
func Get(name string) (scenario.Scenario, error) {
	if _, err := fs.Stat(files, name+".yaml"); err != nil {
		return scenario.Scenario{}, fmt.Errorf("no scenario %q (have %s)", name, strings.Join(Order, ", "))
	}
	return load(name + ".yaml")
}

func load(file string) (scenario.Scenario, error) {
	data, err := files.ReadFile(file)
	if err != nil {
		return scenario.Scenario{}, err
	}
	s, err := scenario.Parse(data)
	if err != nil {
		return s, fmt.Errorf("%s: %w", file, err)
	}
	if want := strings.TrimSuffix(path.Base(file), ".yaml"); s.Name != want {
		return s, fmt.Errorf("%s: name %q: want the file's name %q", file, s.Name, want)
	}
	if i := slices.Index(Order, s.Name); i >= 0 {
		s.Number = i + 1
	}
	return s, nil
}

func rank(name string) int {
	if i := slices.Index(Order, name); i >= 0 {
		return i
	}
	return len(Order)
}
