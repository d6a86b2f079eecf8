package api

import (
	"fmt"
	"maps"
	"strings"

	"github.com/orderlab/orderlab/lab/scenario"
)

// Entry is one scenario as the catalog shows it.
type Entry struct {
	Number     int      `json:"number"`
	Name       string   `json:"name"`
	Title      string   `json:"title"`
	Kind       string   `json:"kind"`
	Reproduces string   `json:"reproduces"`
	Question   string   `json:"question"`
	Targets    []string `json:"targets"`
	// Changes is what it changes: the knobs, the load of each phase, the
	// database side.
	Changes Changes                `json:"changes"`
	Phases  []PhaseEntry           `json:"phases"`
	Expect  []scenario.Expectation `json:"expect"`
	Panels  []string               `json:"panels"`
	Fix     string                 `json:"fix"`
	// InLab says whether the running lab can run it; Why says what is
	// missing, or what it needs besides (the database proxy).
	InLab bool   `json:"in_lab"`
	Why   string `json:"why,omitempty"`
	// Seconds and QuickSeconds are the planned load, at full size and
	// -quick (knob changes and start-up on top; 0: only the load decides).
	Seconds      float64 `json:"seconds"`
	QuickSeconds float64 `json:"quick_seconds"`
	Page         string  `json:"page"` // the scenario's page in the repository
}

// Changes is what a scenario changes in the lab.
type Changes struct {
	Knobs map[string]string `json:"knobs"` // the scenario's env, before its phases add to it
	Load  []string          `json:"load"`  // one line per phase
	DB    []string          `json:"db"`    // database faults and set-ups, in words
}

// PhaseEntry is one phase of a scenario.
type PhaseEntry struct {
	Name    string            `json:"name"`
	Knobs   map[string]string `json:"knobs,omitempty"`
	Load    string            `json:"load"`
	Note    string            `json:"note,omitempty"`
	Seconds float64           `json:"seconds"`
}

// EntryOf is s as the catalog shows it.
func EntryOf(s scenario.Scenario) Entry {
	ok, why := scenario.InLab(s)
	e := Entry{Number: s.Number, Name: s.Name, Title: s.Title, Kind: s.Kind, Reproduces: s.Reproduces,
		Question: strings.TrimSpace(s.Question), Targets: s.Targets, Expect: s.Expect, Panels: s.Panels, Fix: s.Fix,
		InLab: ok, Why: why, Page: "docs/scenarios/" + s.Name + ".md",
		Seconds: s.Planned(false).Seconds(), QuickSeconds: scenario.Quick(s).Planned(true).Seconds()}
	e.Changes.Knobs = maps.Clone(s.Env)
	if e.Changes.Knobs == nil {
		e.Changes.Knobs = map[string]string{}
	}
	for _, p := range s.Phases {
		pe := PhaseEntry{Name: p.Name, Knobs: p.Env, Load: scenario.Describe(p), Note: strings.TrimSpace(p.Note),
			Seconds: p.Planned(len(s.Targets), scenario.PauseOf(false)).Seconds()}
		e.Phases = append(e.Phases, pe)
		e.Changes.Load = append(e.Changes.Load, p.Name+": "+pe.Load)
		if p.DBLatency != nil {
			e.Changes.DB = append(e.Changes.DB, fmt.Sprintf("%s: %s more per round trip to Postgres", p.Name, p.DBLatency.D()))
		}
		if d := p.DBStop; d != nil {
			e.Changes.DB = append(e.Changes.DB, fmt.Sprintf("%s: Postgres stopped %s in, for %s", p.Name, d.After.D(), d.For.D()))
		}
		if p.PgBouncer {
			e.Changes.DB = append(e.Changes.DB, p.Name+": the services through PgBouncer")
		}
	}
	if c := s.Cluster; c != nil {
		switch {
		case c.Role != nil:
			e.Changes.DB = append(e.Changes.DB, fmt.Sprintf("a login role with CONNECTION LIMIT %d", c.Role.ConnectionLimit))
		case c.Owned:
			e.Changes.DB = append(e.Changes.DB, "a Postgres cluster of its own")
		}
		if c.Replicas > 1 {
			e.Changes.DB = append(e.Changes.DB, fmt.Sprintf("%d replicas of each service", c.Replicas))
		}
	}
	// null is no list for the page: every list is one, empty or not.
	for _, l := range []*[]string{&e.Changes.DB, &e.Changes.Load, &e.Panels, &e.Targets} {
		if *l == nil {
			*l = []string{}
		}
	}
	if e.Expect == nil {
		e.Expect = []scenario.Expectation{}
	}
	return e
}
