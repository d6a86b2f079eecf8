package knob_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"

	"github.com/orderlab/orderlab/services/internal/knob"
)

// composeWired are the knobs compose.yaml sets itself, for the lab's own
// wiring: a .env cannot move them without breaking the lab (ports the
// healthchecks and Prometheus use, Jaeger's address, the service's name),
// and DATABASE_URL is overridden as LAB_DATABASE_URL (docs/lab.md).
var composeWired = map[string]bool{
	"HTTP_ADDR": true, "ADMIN_ADDR": true, "DATABASE_URL": true,
	"OTEL_EXPORTER_OTLP_ENDPOINT": true, "OTEL_SERVICE_NAME": true,
}

// root is the repository's top directory.
var root = filepath.Join("..", "..", "..")

// Every declared knob reaches the services of the models it applies to:
// set in the environment compose runs in, it arrives in the service's
// environment unchanged, so that a .env line never silently does nothing.
// ADMIN_TOKEN reaches loadtest too. (e2e's TestCompose checks the rest of
// compose.yaml; this test sits beside the declarations it reads.)
func TestComposePassesEveryKnobThrough(t *testing.T) {
	var env []string
	probe := func(name string) string { return "probe-" + name }
	for _, k := range knob.All {
		env = append(env, k.Name+"="+probe(k.Name))
	}
	opts, err := cli.NewProjectOptions([]string{filepath.Join(root, "compose.yaml")},
		cli.WithWorkingDirectory(root), cli.WithEnv(env), cli.WithProfiles([]string{"loadtest", "pgbouncer"}),
		cli.WithInterpolation(true), cli.WithNormalization(true))
	if err != nil {
		t.Fatal(err)
	}
	project, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("compose.yaml does not load: %v", err)
	}
	for _, model := range knob.Models {
		s, ok := project.Services[model]
		if !ok {
			t.Fatalf("no service %s", model)
		}
		for _, k := range knob.All {
			v, set := s.Environment[k.Name]
			switch {
			case !k.AppliesTo(model):
				if set {
					t.Errorf("%s: sets %s, a knob of %v only", model, k.Name, k.Models)
				}
			case !set || v == nil:
				t.Errorf("%s: %s is not passed through (add %s: ${%s:-} to compose.yaml)", model, k.Name, k.Name, k.Name)
			case !composeWired[k.Name] && *v != probe(k.Name):
				t.Errorf("%s: %s=%q with %s set in the environment: want it passed through as ${%s:-...}", model, k.Name, *v, k.Name, k.Name)
			}
		}
	}
	if v := project.Services["loadtest"].Environment["ADMIN_TOKEN"]; v == nil || *v != probe("ADMIN_TOKEN") {
		t.Errorf("loadtest: ADMIN_TOKEN is not the services' token")
	}
}
