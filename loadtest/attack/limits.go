package attack

import (
	"fmt"

	"github.com/orderlab/orderlab/internal/proc"
)

// EnsureOpenFiles makes sure this process may hold need open files, raising
// its soft limit to the hard limit (proc.RaiseOpenFiles). Otherwise it
// returns an error that gives the limit and the need.
func EnsureOpenFiles(need int) error {
	limit, err := proc.RaiseOpenFiles()
	if err != nil {
		return fmt.Errorf("reading the open-files limit: %w", err)
	}
	if limit >= need {
		return nil
	}
	return fmt.Errorf("the open-files limit is %d, raised as far as the hard limit allows, but this run needs about %d (one per connection plus %d spare); lower the concurrency or raise the limit (ulimit -n)",
		limit, need, SpareFiles)
}
