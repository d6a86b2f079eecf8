package scenario

import (
	"context"
	"fmt"

	"github.com/orderlab/orderlab/loadtest/knobs"
	"github.com/orderlab/orderlab/loadtest/lab"
)

// localToken is the ADMIN_TOKEN of the services a local run starts: a
// continuing phase changes their knobs with it (setKnobs).
const localToken = "orderlab-scenario"

// setKnobs changes the knobs of env that exist on target on every process
// of running, and waits until each change shows.
func (r *Runner) setKnobs(ctx context.Context, target string, running *lab.Lab, env map[string]string) error {
	set := map[string]string{}
	for name, v := range env {
		if appliesTo(name, target) {
			set[name] = v
		}
	}
	if len(set) == 0 {
		return nil
	}
	for _, svc := range running.Services {
		c := &knobs.Client{Admin: svc.AdminURL, Token: localToken}
		if _, err := c.Patch(ctx, set); err != nil {
			return fmt.Errorf("%s: %w", svc.Name, err)
		}
		if err := c.Wait(ctx, set, knobWait); err != nil {
			return fmt.Errorf("%s: %w", svc.Name, err)
		}
	}
	fmt.Fprintf(r.Log, "   %s: live %s\n", target, envString(set))
	return nil
}

func (r *Runner) stop(name string, running *lab.Lab) {
	if err := running.Stop(); err != nil {
		fmt.Fprintf(r.Log, "   stopping %s: %v\n", name, err)
	}
}
