//go:build !unix

package measure

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
