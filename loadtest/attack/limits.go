//go:build unix

package attack

import (
	"fmt"
	"syscall"
)

// EnsureOpenFiles makes sure this process may hold need open files, raising
// its soft limit toward the hard limit when that is enough. Otherwise it
// returns an error that gives the limit and the need.
func EnsureOpenFiles(need int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("reading the open-files limit: %w", err)
	}
	if lim.Cur >= uint64(need) {
		return nil
	}
	if lim.Max >= uint64(need) {
		raised := lim
		raised.Cur = uint64(need)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			return nil
		}
	}
	return fmt.Errorf("the open-files limit is %d (hard limit %d) but this run needs about %d (one per connection plus %d spare); lower the concurrency or raise the limit (ulimit -n)",
		lim.Cur, lim.Max, need, SpareFiles)
}
