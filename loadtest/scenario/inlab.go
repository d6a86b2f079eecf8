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
// A scenario that sets db_latency needs the lab's database proxy too
// (Runner.DBProxy), which the runner checks when it starts: why says so.
func InLab(s Scenario) (ok bool, why string) {
	var missing []string
	if c := s.Cluster; c != nil {
		switch {
		case c.Replicas > 1 || c.PgBouncer != nil || c.Role != nil:
			missing = append(missing, "replicas, a login role with a connection limit and PgBouncer of the runner's own (the lab runs one replica per service)")
		case c.Owned:
			missing = append(missing, "a Postgres it may stop (the lab's is shared by the three services)")
		}
	}
	restart := map[string]bool{}
	for _, p := range s.Phases {
		if p.DBStop != nil && (s.Cluster == nil || !s.Cluster.Owned) {
			missing = append(missing, "a Postgres it may stop (db_stop)")
		}
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
	if len(missing) == 0 && needsProxy(s) {
		return true, "with the lab's database proxy (compose profile dbproxy)"
	}
	if len(missing) == 0 {
		return true, ""
	}
	return false, "needs " + strings.Join(slices.Compact(missing), "; ")
}
