package report

import (
	"fmt"
	"strconv"
)

// FormatSeconds writes a latency with three significant digits in a unit
// that suits it: 850µs, 23.4ms, 1.25s.
func FormatSeconds(s float64) string {
	switch {
	case s == 0:
		return "0"
	case s < 1e-3:
		return sig3(s*1e6) + "µs"
	case s < 1:
		return sig3(s*1e3) + "ms"
	default:
		return sig3(s) + "s"
	}
}

func sig3(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// FormatMicros writes a CPU time in microseconds, "-" for none.
func FormatMicros(us float64) string {
	if us == 0 {
		return "-"
	}
	return FormatSeconds(us / 1e6)
}

// FormatPercent writes a fraction as a percentage.
func FormatPercent(f float64) string {
	if f == 0 {
		return "0%"
	}
	if f < 0.001 {
		return strconv.FormatFloat(f*100, 'f', 3, 64) + "%"
	}
	return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
}

// FormatBytes writes a byte count in binary units.
func FormatBytes(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", b)
	}
}
