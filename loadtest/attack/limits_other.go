//go:build !unix

package attack

// EnsureOpenFiles does nothing where there is no open-files limit to check.
func EnsureOpenFiles(int) error { return nil }
