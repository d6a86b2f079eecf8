package app

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/services/internal/api"
	"github.com/orderlab/orderlab/services/internal/httpserver"
)

// The README's Limits table (README, "HTTP servers", Limits) quotes the
// values of the code: each row named after a limit must give the value the
// service really uses, with its defaults.
func TestREADMELimitsTableMatchesTheCode(t *testing.T) {
	_, cfg, err := readKnobs("unbounded", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	lim := apiLimits(cfg)
	want := map[string]string{
		"ReadHeaderTimeout": duration(lim.ReadHeaderTimeout),
		"ReadTimeout":       duration(lim.ReadTimeout),
		"WriteTimeout":      "`REQUEST_TIMEOUT` + " + duration(lim.WriteTimeout-cfg.API.RequestTimeout),
		"IdleTimeout":       duration(lim.IdleTimeout),
		"MaxHeaderBytes":    size(lim.MaxHeaderBytes),
		"api.MaxBodyBytes":  size(api.MaxBodyBytes),
		"MaxBufferedBody":   size(lim.MaxBufferedBody),
		"LingerBytes":       size(httpserver.LingerBytes),
		"LingerTimeout":     duration(httpserver.LingerTimeout),
		"MaxUnsentBytes":    size(lim.MaxUnsentBytes),
		"MaxPipelined":      strconv.Itoa(httpserver.MaxPipelined),
		"REQUEST_TIMEOUT":   duration(cfg.API.RequestTimeout),
		"SHUTDOWN_TIMEOUT":  duration(cfg.ShutdownTimeout),
	}
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n### Limits\n")
	if !ok {
		t.Fatal("README.md has no Limits section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	// A row's limit is the name in backticks its first cell ends with.
	named := regexp.MustCompile("`([A-Za-z_.]+)`\\)?$")
	got := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) != 4 {
			continue
		}
		if m := named.FindStringSubmatch(strings.TrimSpace(cells[0])); m != nil {
			got[m[1]] = strings.TrimSpace(cells[1])
		}
	}
	for name, value := range want {
		switch g, ok := got[name]; {
		case !ok:
			t.Errorf("the Limits table has no row for %s (%s)", name, value)
		case g != value:
			t.Errorf("the Limits table gives %s as %q; the code: %q", name, g, value)
		}
	}
}

// duration writes d as the README does: 10 s, 2 min.
func duration(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return strconv.Itoa(int(d/time.Minute)) + " min"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// size writes n bytes as the README does: 16 KiB, 8 MiB.
func size(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.Itoa(n>>20) + " MiB"
	}
	return strconv.Itoa(n>>10) + " KiB"
}
