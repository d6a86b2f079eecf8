package scenario

import "slices"

// Knob is a documented service setting (docs/reference/knobs.md) that a scenario
// may set. Addresses and DATABASE_URL are the runner's, not the scenario's.
// The services declare their knobs in services/internal/knob, which the lab
// may not import (it knows the services only through HTTP, /metrics and
// their knob API): Knobs and Services (knobs_gen.go) are generated from the
// declarations by go generate ./services/internal/knob.
type Knob struct {
	Name     string
	Services []string // nil: all three
	// Restart, when set, says why the knob cannot change while the service
	// runs (the declaration's words): a run against running services cannot
	// set it.
	Restart string
}

// QueryParams are the query parameters the services read (docs/reference/api.md).
var QueryParams = map[string][]string{
	"/orders":   {"db_delay", "api_delay", "api_call"},
	"/work/db":  {"delay", "conns"},
	"/work/api": {"delay"},
	"/work/cpu": {"rounds"},
}

// KnobNamed is the knob called name, if a scenario may set it.
func KnobNamed(name string) (Knob, bool) {
	for _, k := range Knobs {
		if k.Name == name {
			return k, true
		}
	}
	return Knob{}, false
}

// AppliesTo reports whether the knob name exists on the target.
func AppliesTo(name, target string) bool {
	kn, ok := KnobNamed(name)
	return ok && (kn.Services == nil || slices.Contains(kn.Services, target))
}
