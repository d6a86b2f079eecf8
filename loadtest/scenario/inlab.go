package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// InLab says whether s can be staged against running services (the compose
// lab, loadtest scenario -lab) and, when it cannot, what is missing there.
// The runner refuses such a scenario rather than measure something else.
// A scenario that sets db_latency or db_stop needs the lab's database proxy
// too (Runner.DBProxy), which the runner checks when it starts: why says so.
func InLab(s Scenario) (ok bool, why string) {
	var missing []string
	// A cluster of its own is for db_stop, which the lab's proxy stages,
	// and for replicas, a role and PgBouncer, which the lab cannot give.
	if c := s.Cluster; c != nil && (c.Replicas > 1 || c.PgBouncer != nil || c.Role != nil) {
		missing = append(missing, "replicas, a login role with a connection limit and PgBouncer of the runner's own (the lab runs one replica per service)")
	}
	restart := map[string]bool{}
	for _, p := range s.Phases {
		for name := range merged(s.Env, p.Env) {
			if kn, ok := knob(name); ok && kn.Restart != "" {
				restart[name] = true
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(restart)) {
		kn, _ := knob(name)
		missing = append(missing, fmt.Sprintf("%s changed live (%s)", name, kn.Restart))
	}
	switch {
	case len(missing) > 0:
		return false, "needs " + strings.Join(slices.Compact(missing), "; ")
	case slices.ContainsFunc(s.Phases, stops):
		return true, "with the lab's database proxy (compose profile dbproxy), whose outage stands for the stop: " +
			"every connection cut, new ones refused, Postgres itself not restarted"
	case needsProxy(s):
		return true, "with the lab's database proxy (compose profile dbproxy)"
	}
	return true, ""
}
