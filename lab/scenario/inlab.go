package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// InLab says whether s can run against running services (the compose
// lab, lab scenario -lab) and, when it cannot, what is missing there.
// The runner refuses such a scenario rather than measure something else.
// A scenario that sets db_latency or db_stop needs the lab's database proxy
// too (setup.Lab.DBProxy), which the runner checks when it starts: why says so.
func InLab(s Scenario) (ok bool, why string) {
	var missing []string
	// A cluster of its own is for db_stop, which the lab's proxy makes,
	// and for replicas, a role and PgBouncer, which the lab cannot change
	// while it runs.
	if c := s.Cluster; c != nil {
		if c.Role != nil {
			missing = append(missing, fmt.Sprintf("a connection limit of %d set while the lab runs: the lab's services log in as orderlab, "+
				"the superuser compose creates, whom no role CONNECTION LIMIT binds, and Postgres takes max_connections "+
				"(POSTGRES_MAX_CONNECTIONS, 200) only at its start", c.Role.ConnectionLimit))
		}
		if c.Replicas > 1 {
			missing = append(missing, fmt.Sprintf("%d replicas of each model sharing its load (the lab runs one of each)", c.Replicas))
		}
		if slices.ContainsFunc(s.Phases, func(p Phase) bool { return p.PgBouncer }) {
			missing = append(missing, "a phase through PgBouncer after phases straight to Postgres (the lab's services reach "+
				"PgBouncer only when recreated with LAB_DATABASE_URL through it, for the whole run)")
		}
	}
	restart := map[string]bool{}
	for _, p := range s.Phases {
		for name := range Merged(s.Env, p.Env) {
			if kn, ok := KnobNamed(name); ok && kn.Restart != "" {
				restart[name] = true
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(restart)) {
		kn, _ := KnobNamed(name)
		missing = append(missing, fmt.Sprintf("%s changed live (%s)", name, kn.Restart))
	}
	switch {
	case len(missing) > 0:
		return false, "needs " + strings.Join(slices.Compact(missing), "; ")
	case slices.ContainsFunc(s.Phases, Stops):
		return true, "with the lab's database proxy (compose profile dbproxy), whose outage stands for the stop: " +
			"every connection cut, new ones refused, Postgres itself not restarted"
	case NeedsProxy(s):
		return true, "with the lab's database proxy (compose profile dbproxy)"
	}
	return true, ""
}

// NeedsProxy reports whether some phase of s sets db_latency or db_stop,
// which the lab makes with its database proxy.
func NeedsProxy(s Scenario) bool {
	return slices.ContainsFunc(s.Phases, func(p Phase) bool { return p.DBLatency != nil || Stops(p) })
}

// Stops reports whether phase p stops the database (db_stop).
func Stops(p Phase) bool { return p.DBStop != nil }
