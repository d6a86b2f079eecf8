package e2e

// The checks TestCompose applies to every service of compose.yaml, and
// helpers to read a service.

import (
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
			if *arg == "lab" {
				pkg = filepath.Join(root, "lab")
			}
			if _, err := os.Stat(pkg); err != nil {
				t.Errorf("build arg SERVICE=%s: no such main package: %v", *arg, err)
			}
		}
		return
	}
	if strings.Contains(s.Image, "@sha256:") || s.PullPolicy == types.PullPolicyNever {
		return // pinned by digest, or built by another service (checkOneBuildPerImage)
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

// checkFront checks the front page's service: started by `docker compose
// up`, published on loopback at 8080, running scenarios by the services' names
// with their token, after the services and Prometheus are up; and the
// addresses `lab front` takes inside compose (lab/frontcmd.go)
// are compose's: prometheus:9090 and the background's -listen port.
func checkFront(t *testing.T, project *types.Project) {
	t.Helper()
	s, ok := project.Services["front"]
	if !ok {
		t.Fatal("no front service")
	}
	if len(s.Profiles) > 0 {
		t.Errorf("front: profiles %v; it must start with `docker compose up`", s.Profiles)
	}
	if cmd := strings.Join(s.Command, " "); cmd != "front -listen=:8080 -allow-remote" {
		t.Errorf("front: command %q, want front -listen=:8080 -allow-remote", cmd)
	}
	if !runsLabImage(project, s) {
		t.Errorf("front: want the lab's image (built with build arg SERVICE=lab)")
	}
	published := false
	for _, p := range s.Ports {
		published = published || (p.HostIP == "127.0.0.1" && p.Published == "8080" && p.Target == 8080)
	}
	if !published {
		t.Errorf("front: ports %+v, want 127.0.0.1:8080:8080 (the page's address in the docs)", s.Ports)
	}
	// The board links to the page where compose publishes it (and the
	// page links back to the board: lab/frontcmd.go's -grafana).
	for _, b := range loadBoards(t) {
		if !slices.ContainsFunc(b.Links, func(l struct {
			Title     string  `json:"title"`
			URL       string  `json:"url"`
			Placement *string `json:"placement"`
		}) bool {
			return l.URL == "http://127.0.0.1:8080/"
		}) {
			t.Errorf("board %s: no link to the front page at http://127.0.0.1:8080/", b.UID)
		}
	}
	if env(s, "ORDERLAB_LAB") != "compose" {
		t.Errorf("front: ORDERLAB_LAB=%q, want compose (the services by name)", env(s, "ORDERLAB_LAB"))
	}
	if tok, want := env(s, "ADMIN_TOKEN"), env(project.Services[modelServices[0]], "ADMIN_TOKEN"); tok == "" || tok != want {
		t.Errorf("front: ADMIN_TOKEN=%q, the services have %q: want the one token", tok, want)
	}
	if pw, want := env(s, "POSTGRES_PASSWORD"), env(project.Services["postgres"], "POSTGRES_PASSWORD"); pw == "" || pw != want {
		t.Errorf("front: POSTGRES_PASSWORD=%q, Postgres has %q: db-restart from the page reads the lab's orders table", pw, want)
	}
	// A run stopped by SIGTERM puts its knobs back, each waited for up to
	// 15 s a service (lab/scenario, knobWait): Docker's default 10 s is too short.
	if g := s.StopGracePeriod; g == nil || time.Duration(*g) < 45*time.Second {
		t.Errorf("front: stop_grace_period %v, want at least 45 s for a stopped run's restore", g)
	}
	if u, err := url.Parse(env(s, "GRAFANA_URL")); err != nil || u.Hostname() != "grafana" {
		t.Errorf("front: GRAFANA_URL=%q, want the grafana service (annotations)", env(s, "GRAFANA_URL"))
	}
	for _, dep := range append([]string{"prometheus"}, modelServices...) {
		if d, ok := s.DependsOn[dep]; !ok || d.Condition != types.ServiceConditionHealthy {
			t.Errorf("front: must depend on %s being healthy", dep)
		}
	}
	if !slices.ContainsFunc(project.Services["prometheus"].Ports, func(p types.ServicePortConfig) bool { return p.Target == 9090 }) {
		t.Errorf("prometheus: not on 9090, where the front page queries it (http://prometheus:9090)")
	}
	if bg := strings.Join(project.Services["background"].Command, " "); !strings.Contains(bg, "-listen=:9090") {
		t.Errorf("background: command %q, want -listen=:9090, where the front page changes its rate (http://background:9090)", bg)
	}
}

// checkOneBuildPerImage: each image compose builds has one build section.
// Two builds of one tag race (the last one wins the tag), so `up --build`
// with nothing changed recreates the services that run it. A service that
// runs a built image by tag never pulls it: it is in no registry.
func checkOneBuildPerImage(t *testing.T, project *types.Project) {
	t.Helper()
	builders := map[string][]string{}
	for _, name := range slices.Sorted(maps.Keys(project.Services)) {
		if s := project.Services[name]; s.Build != nil {
			builders[s.Image] = append(builders[s.Image], name)
		}
	}
	for image, names := range builders {
		if len(names) > 1 {
			t.Errorf("image %s is built by %d services (%s): build it in one, run it by tag in the others",
				image, len(names), strings.Join(names, ", "))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(project.Services)) {
		s := project.Services[name]
		if s.Build == nil && s.PullPolicy == types.PullPolicyNever && builders[s.Image] == nil {
			t.Errorf("%s: pull_policy never, but no service builds %s", name, s.Image)
		}
		if s.Build != nil || builders[s.Image] == nil {
			continue
		}
		if s.PullPolicy != types.PullPolicyNever {
			t.Errorf("%s: runs %s, which %s builds, with pull_policy %q: want never", name, s.Image, builders[s.Image][0], s.PullPolicy)
		}
	}
}

// runsLabImage says whether s runs the lab's image: it builds it (build
// arg SERVICE=lab), or runs by tag the image a service builds so.
func runsLabImage(project *types.Project, s types.ServiceConfig) bool {
	isLab := func(s types.ServiceConfig) bool {
		return s.Build != nil && s.Build.Args["SERVICE"] != nil && *s.Build.Args["SERVICE"] == "lab"
	}
	if isLab(s) {
		return true
	}
	for _, b := range project.Services {
		if isLab(b) && b.Image == s.Image {
			return true
		}
	}
	return false
}
