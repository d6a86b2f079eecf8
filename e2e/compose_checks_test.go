package e2e

// The checks TestCompose applies to every service of compose.yaml, and
// helpers to read a service.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
)

var pinnedTag = regexp.MustCompile(`^v?\d+(\.\d+)+`)

func checkImage(t *testing.T, s types.ServiceConfig) {
	t.Helper()
	if s.Build != nil {
		dockerfile := s.Build.Dockerfile
		if !filepath.IsAbs(dockerfile) {
			dockerfile = filepath.Join(s.Build.Context, dockerfile)
		}
		if _, err := os.Stat(dockerfile); err != nil {
			t.Errorf("build: %v", err)
		}
		if arg := s.Build.Args["SERVICE"]; arg != nil {
			pkg := filepath.Join(root, "services", *arg)
			if *arg == "loadtest" {
				pkg = filepath.Join(root, "loadtest")
			}
			if _, err := os.Stat(pkg); err != nil {
				t.Errorf("build arg SERVICE=%s: no such main package: %v", *arg, err)
			}
		}
		return
	}
	if strings.Contains(s.Image, "@sha256:") {
		return
	}
	if tag := imageTag(s.Image); !pinnedTag.MatchString(tag) {
		t.Errorf("image %q is not pinned to a version", s.Image)
	}
}

func checkHealthcheck(t *testing.T, s types.ServiceConfig) {
	t.Helper()
	if len(s.Profiles) > 0 {
		return // one-shot tools such as loadtest
	}
	if s.HealthCheck == nil || s.HealthCheck.Disable || len(s.HealthCheck.Test) == 0 {
		t.Errorf("no healthcheck")
	}
}

func checkDependsOn(t *testing.T, project *types.Project, s types.ServiceConfig) {
	t.Helper()
	for dep, cfg := range s.DependsOn {
		if _, ok := project.Services[dep]; !ok {
			t.Errorf("depends_on %s: no such service", dep)
		}
		switch cfg.Condition {
		case types.ServiceConditionHealthy, types.ServiceConditionStarted, types.ServiceConditionCompletedSuccessfully:
		default:
			t.Errorf("depends_on %s: condition %q", dep, cfg.Condition)
		}
		if cfg.Condition == types.ServiceConditionHealthy {
			if d := project.Services[dep]; d.HealthCheck == nil {
				t.Errorf("depends_on %s: service_healthy but %s has no healthcheck", dep, dep)
			}
		}
	}
}

func checkPorts(t *testing.T, s types.ServiceConfig) {
	t.Helper()
	for _, p := range s.Ports {
		if p.Published != "" && p.HostIP != "127.0.0.1" {
			t.Errorf("port %s:%d published on %q, want 127.0.0.1", p.Published, p.Target, p.HostIP)
		}
	}
}

func checkMounts(t *testing.T, project *types.Project, s types.ServiceConfig) {
	t.Helper()
	for _, v := range s.Volumes {
		switch v.Type {
		case types.VolumeTypeBind:
			if _, err := os.Stat(v.Source); err != nil {
				t.Errorf("bind mount %s: %v", v.Target, err)
			}
		case types.VolumeTypeVolume:
			if _, ok := project.Volumes[v.Source]; !ok {
				t.Errorf("volume %s: not declared", v.Source)
			}
		}
	}
	for _, c := range s.Configs {
		cfg, ok := project.Configs[c.Source]
		if !ok {
			t.Errorf("config %s: not declared", c.Source)
			continue
		}
		if cfg.File != "" {
			if _, err := os.Stat(cfg.File); err != nil {
				t.Errorf("config %s: %v", c.Source, err)
			}
		} else if strings.TrimSpace(cfg.Content) == "" {
			t.Errorf("config %s: empty", c.Source)
		}
	}
}

// checkStopGrace: a service that drains on SIGTERM for SHUTDOWN_TIMEOUT
// is given longer than that before compose kills it (stop_grace_period;
// Docker's default of 10 s would cut the lab's drain short at its end).
func checkStopGrace(t *testing.T, s types.ServiceConfig) {
	t.Helper()
	v := env(s, "SHUTDOWN_TIMEOUT")
	if v == "" {
		return
	}
	drain, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("SHUTDOWN_TIMEOUT %q: %v", v, err)
	}
	grace := 10 * time.Second // Docker's default
	if s.StopGracePeriod != nil {
		grace = time.Duration(*s.StopGracePeriod)
	}
	if grace <= drain {
		t.Errorf("stop_grace_period %v is not longer than SHUTDOWN_TIMEOUT %v: docker compose stop would kill the service while it drains", grace, drain)
	}
}

func env(s types.ServiceConfig, key string) string {
	if v := s.Environment[key]; v != nil {
		return *v
	}
	return ""
}

func bindMounts(s types.ServiceConfig) map[string]string {
	m := map[string]string{}
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind {
			m[v.Target] = v.Source
		}
	}
	return m
}
