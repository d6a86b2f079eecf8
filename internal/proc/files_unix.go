//go:build unix

package proc

import "syscall"

// RaiseOpenFiles raises this process's soft open-files limit to its hard
// limit, as far as the system lets it, and returns the soft limit then.
// The lab's many-connection runs and tests need it: one descriptor a
// connection (two when client and server share the process).
func RaiseOpenFiles() (int, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) == nil {
			lim = raised
		}
	}
	return int(min(lim.Cur, 1<<30)), nil
}

// OpenFiles is this process's soft open-files limit, unchanged.
func OpenFiles() (int, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	return int(min(lim.Cur, 1<<30)), nil
}
