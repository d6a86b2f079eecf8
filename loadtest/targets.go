package main

import (
	"strings"

	"github.com/orderlab/orderlab/internal/cli"
	"github.com/orderlab/orderlab/loadtest/attack"
)

// target is one service to put under load.
type target struct {
	name    string
	url     string
	metrics string
}

// targets reads the positional arguments: one URL for burst, closed and
// open; name=URL pairs for compare (the three local services when none).
func (f *loadFlags) targets(pos []string) ([]target, error) {
	if !f.compare {
		if len(pos) != 1 {
			return nil, cli.Usagef("", "want exactly one URL, got %d arguments", len(pos))
		}
		u, err := attack.ParseURL(pos[0], f.allowRemote)
		if err != nil {
			return nil, cli.Usagef("", "URL: %v", err)
		}
		if f.metrics != "" {
			if _, err := attack.ParseURL(f.metrics, true); err != nil {
				return nil, cli.Usagef("metrics", "%v", err)
			}
		}
		name := f.name
		if name == "" {
			name = u.Host
		}
		return []target{{name: name, url: pos[0], metrics: f.metrics}}, nil
	}

	var ts []target
	if len(pos) == 0 {
		for _, s := range cli.LocalServices {
			ts = append(ts, target{name: s.Name, url: s.URL, metrics: s.Metrics})
		}
	}
	for _, p := range pos {
		name, u, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return nil, cli.Usagef("", "target %q: want name=URL", p)
		}
		ts = append(ts, target{name: name, url: u})
	}
	known := map[string]bool{}
	for i := range ts {
		t := &ts[i]
		if known[t.name] {
			return nil, cli.Usagef("", "target %q named twice", t.name)
		}
		known[t.name] = true
		if f.path != "" {
			t.url = strings.TrimRight(t.url, "/") + "/" + strings.TrimLeft(f.path, "/")
		}
		if _, err := attack.ParseURL(t.url, f.allowRemote); err != nil {
			return nil, cli.Usagef("", "target %s: %v", t.name, err)
		}
		if m, ok := f.metricsOf[t.name]; ok {
			t.metrics = m
		}
		if t.metrics != "" {
			if _, err := attack.ParseURL(t.metrics, true); err != nil {
				return nil, cli.Usagef("metrics", "%s: %v", t.name, err)
			}
		}
	}
	for name := range f.metricsOf {
		if !known[name] {
			return nil, cli.Usagef("metrics", "no target named %q", name)
		}
	}
	return ts, nil
}
