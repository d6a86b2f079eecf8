package setup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/orderlab/orderlab/lab/knobs"
	"github.com/orderlab/orderlab/lab/scenario"
)

// knobWait is how long a change may take to show in GET /knobs and in the
// knob gauges.
const knobWait = 15 * time.Second

// liveKnobs applies each phase's env to running services through their knob
// API and puts back every knob it changed (docs/lab-scenarios.md). Where a
// local run starts a service with the phase's env, a run against running
// services changes their knobs to it: a knob the phase does not set goes
// back to the value found before the run, as a fresh service would have its
// default.
type liveKnobs struct {
	clients map[string]*knobs.Client // by target; nil: no admin listener known
	found   map[string]map[string]knobs.Knob
	log     io.Writer
}

func newLiveKnobs(eps map[string]Endpoint, token string, log io.Writer) *liveKnobs {
	k := &liveKnobs{clients: map[string]*knobs.Client{}, found: map[string]map[string]knobs.Knob{}, log: log}
	for name, ep := range eps {
		if ep.AdminURL != "" {
			k.clients[name] = &knobs.Client{Admin: ep.AdminURL, Token: token}
		}
	}
	return k
}

// putBack is what a PATCH sends to return a knob to how it was found: its
// value when it had been changed at runtime before the run; otherwise ""
// (back as the service started), which keeps a knob that follows
// DB_MAX_CONNS following it, instead of pinning it to the value it had.
func putBack(found knobs.Knob) string {
	if found.Source == "runtime" {
		return found.Value
	}
	return ""
}

// apply sets env on every target (the knobs that exist there) and waits
// until each change shows.
func (k *liveKnobs) apply(ctx context.Context, targets []string, env map[string]string) error {
	for _, t := range targets {
		want := map[string]string{}
		for name, f := range k.found[t] {
			want[name] = putBack(f)
		}
		for name, v := range env {
			if scenario.AppliesTo(name, t) {
				want[name] = v
			}
		}
		if len(want) == 0 {
			continue
		}
		c := k.clients[t]
		if c == nil {
			return fmt.Errorf("%s: the phase sets %s, and the admin listener of %s is not known "+
				"(-metrics %s=URL, or -lab)", t, scenario.EnvString(want), t, t)
		}
		have, err := c.Knobs(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		diff := map[string]string{}
		for name, v := range want {
			cur, ok := have[name]
			switch {
			case !ok:
				return fmt.Errorf("%s: GET /knobs has no knob %s", t, name)
			case v == "" && cur.Source == "runtime", v != "" && !knobs.Same(cur.Value, v):
				diff[name] = v
			}
		}
		if len(diff) == 0 {
			continue
		}
		// What was found is recorded before the PATCH: a PATCH that a
		// Stop or Ctrl-C interrupts may still have been applied, and the
		// restore must then put it back (a knob already as found is left).
		if k.found[t] == nil {
			k.found[t] = map[string]knobs.Knob{}
		}
		for name := range diff {
			if _, ok := k.found[t][name]; !ok {
				k.found[t][name] = have[name]
			}
		}
		after, err := c.Patch(ctx, diff)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		fmt.Fprintf(k.log, "   %s: %s\n", t, changes(have, after, diff))
		if err := c.Wait(ctx, resolved(after, diff), knobWait); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
	}
	return nil
}

// resolved is the value each knob of sent took, as the PATCH answered: a
// knob sent as "" shows the value it went back to.
func resolved(after map[string]knobs.Knob, sent map[string]string) map[string]string {
	out := map[string]string{}
	for name := range sent {
		out[name] = after[name].Value
	}
	return out
}

// changes describes a PATCH: each knob sent, and each that moved with it
// (WORKERS and LIMIT follow DB_MAX_CONNS while nobody sets them).
func changes(before, after map[string]knobs.Knob, sent map[string]string) string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(after)) {
		_, was := sent[name]
		if b := before[name]; was || b.Value != after[name].Value {
			s := fmt.Sprintf("%s %s -> %s", name, shown(b.Value), shown(after[name].Value))
			if !was {
				s += " (follows)"
			}
			out = append(out, s)
		}
	}
	return strings.Join(out, ", ")
}

// restore puts every knob changed back as it was found, on every target
// (one PATCH each), and waits until it shows. It works on ctx even when
// ctx's parent was canceled (Ctrl-C): the caller passes one without cancel.
func (k *liveKnobs) restore(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*knobWait)
	defer cancel()
	var errs []error
	for _, t := range slices.Sorted(maps.Keys(k.found)) {
		if len(k.found[t]) == 0 {
			continue
		}
		back := map[string]string{}
		for name, f := range k.found[t] {
			back[name] = putBack(f)
		}
		c := k.clients[t]
		after, err := c.Patch(ctx, back)
		if err == nil {
			back = resolved(after, back)
			err = c.Wait(ctx, back, knobWait)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("restoring the knobs of %s (%s): %w", t, scenario.EnvString(back), err))
			fmt.Fprintf(k.log, "   %s: NOT restored: %v\n", t, err)
			continue
		}
		fmt.Fprintf(k.log, "   %s: restored %s\n", t, scenario.EnvString(back))
		if _, leaked := back["LEAK_EVERY"]; leaked {
			// Restoring LEAK_EVERY stops new leaks; the ones made stay held.
			n, err := c.ReleaseLeaked(ctx)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: handing back leaked connections: %w", t, err))
			} else {
				fmt.Fprintf(k.log, "   %s: %d leaked connections handed back\n", t, n)
			}
		}
		delete(k.found, t)
	}
	return errors.Join(errs...)
}

func shown(v string) string {
	if v == "" {
		return `""`
	}
	return v
}
