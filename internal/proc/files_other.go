//go:build !unix

package proc

// RaiseOpenFiles returns no limit (1<<30) where there is no open-files
// limit to raise (Windows).
func RaiseOpenFiles() (int, error) { return 1 << 30, nil }

// OpenFiles returns no limit (1<<30) where there is no open-files limit.
func OpenFiles() (int, error) { return 1 << 30, nil }
