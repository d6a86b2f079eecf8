package e2e

import (
	"context"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/goccy/go-yaml"
)

// The lab must fit on a 4 GB machine.
const memoryBudget = 4 << 30

// tools are compose's one-shot services (profile loadtest), run by
// `docker compose run --rm`.
var tools = []string{"lab", "loadtest"}

// modelServices are the three concurrency models, one compose service and
// one Prometheus job each.
var modelServices = []string{"unbounded", "semaphore", "pipeline"}

// loadCompose loads compose.yaml as `docker compose --profile loadtest
// --profile pgbouncer --profile dbproxy` would, with no environment: the lab defaults must be
// enough.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions(
		[]string{filepath.Join(root, "compose.yaml")},
		cli.WithWorkingDirectory(root),
		cli.WithEnv(nil),
		cli.WithProfiles([]string{"loadtest", "pgbouncer", "dbproxy"}),
		cli.WithInterpolation(true),
		cli.WithNormalization(true),
		cli.WithConsistency(true),
		cli.WithResolvedPaths(true),
	)
	if err != nil {
		t.Fatal(err)
	}
	project, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("compose.yaml does not load: %v", err)
	}
	return project
}

func TestCompose(t *testing.T) {
	project := loadCompose(t)

	want := append([]string{"postgres", "prometheus", "grafana", "jaeger", "lab", "loadtest", "background", "dbproxy", "front"}, modelServices...)
	for _, name := range want {
		if _, ok := project.Services[name]; !ok {
			t.Errorf("service %q missing", name)
		}
	}

	// The one-shot tools run one at a time (two loads at once measure each
	// other): the largest of their limits counts.
	var memory, toolMemory int64
	t.Run("services", func(t *testing.T) {
		for name, s := range project.Services {
			t.Run(name, func(t *testing.T) {
				checkImage(t, s)
				checkHealthcheck(t, s)
				checkDependsOn(t, project, s)
				checkPorts(t, s)
				checkMounts(t, project, s)
				checkStopGrace(t, s)
				if s.Deploy == nil || s.Deploy.Resources.Limits == nil || s.Deploy.Resources.Limits.MemoryBytes <= 0 {
					t.Errorf("no memory limit (deploy.resources.limits.memory)")
				} else if slices.Contains(tools, name) {
					toolMemory = max(toolMemory, int64(s.Deploy.Resources.Limits.MemoryBytes))
				} else {
					memory += int64(s.Deploy.Resources.Limits.MemoryBytes)
				}
			})
		}
	})
	memory += toolMemory
	if memory > memoryBudget {
		t.Errorf("memory limits add up to %d MiB, more than the 4 GiB budget", memory>>20)
	}
	t.Logf("memory limits: %d MiB of %d MiB", memory>>20, memoryBudget>>20)

	t.Run("models", func(t *testing.T) {
		for _, name := range modelServices {
			s := project.Services[name]
			if dep, ok := s.DependsOn["postgres"]; !ok || dep.Condition != types.ServiceConditionHealthy {
				t.Errorf("%s: must depend on postgres with condition service_healthy", name)
			}
			if got := env(s, "ADMIN_ADDR"); got != ":9090" {
				t.Errorf("%s: ADMIN_ADDR=%q, Prometheus scrapes %s:9090", name, got, name)
			}
			if got := env(s, "HTTP_ADDR"); got != ":8080" {
				t.Errorf("%s: HTTP_ADDR=%q, the healthcheck probes :8080", name, got)
			}
			if got := env(s, "OTEL_EXPORTER_OTLP_ENDPOINT"); !strings.Contains(got, "//jaeger:") {
				t.Errorf("%s: OTEL_EXPORTER_OTLP_ENDPOINT=%q, want the jaeger service", name, got)
			}
			if s.Build == nil || s.Build.Args["SERVICE"] == nil || *s.Build.Args["SERVICE"] != name {
				t.Errorf("%s: build arg SERVICE must be %q", name, name)
			}
		}
		// The three models face the same pool and deadline.
		for _, key := range []string{"DB_MAX_CONNS", "REQUEST_TIMEOUT", "DATABASE_URL"} {
			first := env(project.Services[modelServices[0]], key)
			for _, name := range modelServices[1:] {
				if got := env(project.Services[name], key); got != first {
					t.Errorf("%s=%q in %s but %q in %s", key, got, name, first, modelServices[0])
				}
			}
		}
	})

	t.Run("postgres max_connections", func(t *testing.T) {
		m := regexp.MustCompile(`max_connections=(\d+)`).FindStringSubmatch(strings.Join(project.Services["postgres"].Command, " "))
		if m == nil {
			t.Fatal("postgres: max_connections not set explicitly")
		}
		maxConns, _ := strconv.Atoi(m[1])
		pools := 0
		for _, name := range modelServices {
			n, err := strconv.Atoi(env(project.Services[name], "DB_MAX_CONNS"))
			if err != nil {
				t.Fatalf("%s: DB_MAX_CONNS: %v", name, err)
			}
			pools += n
		}
		if pools+10 > maxConns {
			t.Errorf("postgres max_connections=%d leaves no room beside the pools' %d connections", maxConns, pools)
		}
	})

	t.Run("dockerfile go version", func(t *testing.T) {
		dockerfile, err := os.ReadFile(filepath.Join(root, "services", "Dockerfile"))
		if err != nil {
			t.Fatal(err)
		}
		gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		arg := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)`).FindSubmatch(dockerfile)
		want := regexp.MustCompile(`(?m)^toolchain go(\S+)`).FindSubmatch(gomod)
		if want == nil {
			want = regexp.MustCompile(`(?m)^go (\S+)`).FindSubmatch(gomod)
		}
		if arg == nil || want == nil {
			t.Fatal("no ARG GO_VERSION in services/Dockerfile, or no go version in go.mod")
		}
		if string(arg[1]) != string(want[1]) {
			t.Errorf("services/Dockerfile builds with Go %s, go.mod asks for %s", arg[1], want[1])
		}
	})

	// The one-shot tools, lab (the scenarios) and loadtest (the load
	// generator, which still runs lab's modes through the lab beside it).
	for _, tool := range tools {
		t.Run(tool+" profile", func(t *testing.T) {
			s := project.Services[tool]
			if !slices.Contains(s.Profiles, "loadtest") {
				t.Errorf("%s must sit under the loadtest profile, so that `docker compose up` does not start it", tool)
			}
			if !runsLabImage(project, s) {
				t.Errorf("%s: want the lab's image (build arg SERVICE=lab), which holds lab and loadtest", tool)
			}
			if !strings.Contains(env(s, "GRAFANA_URL"), "grafana:3000") {
				t.Errorf("%s: GRAFANA_URL=%q, want the grafana service (annotations)", tool, env(s, "GRAFANA_URL"))
			}
			// lab scenario runs against the lab by the services' names
			// there (lab/running.go), and changes their knobs with their token.
			if env(s, "ORDERLAB_LAB") != "compose" {
				t.Errorf("%s: ORDERLAB_LAB=%q, want compose (scenario -lab inside compose)", tool, env(s, "ORDERLAB_LAB"))
			}
			for _, name := range modelServices {
				if tok := env(project.Services[name], "ADMIN_TOKEN"); tok != "" && tok != env(s, "ADMIN_TOKEN") {
					t.Errorf("%s: ADMIN_TOKEN=%q, %s has %q: want the one token", tool, env(s, "ADMIN_TOKEN"), name, tok)
				}
			}
			if env(s, "ADMIN_TOKEN") == "" {
				t.Errorf("%s: no ADMIN_TOKEN: scenario -lab cannot change the services' knobs", tool)
			}
			// `docker compose run` starts a service's dependencies, and
			// recreates those whose configuration differs from the running
			// ones: a lab started with LAB_DATABASE_URL (the dbproxy and
			// pgbouncer profiles) would be put back on postgres:5432.
			if len(s.DependsOn) > 0 {
				t.Errorf("%s: depends_on %v: `docker compose run --rm %s` would recreate them", tool, slices.Sorted(maps.Keys(s.DependsOn)), tool)
			}
		})
	}
	if ep := strings.Join(project.Services["loadtest"].Entrypoint, " "); ep != "/usr/local/bin/loadtest" {
		t.Errorf("loadtest: entrypoint %q, want /usr/local/bin/loadtest (the lab's image runs lab by default)", ep)
	}

	t.Run("one build per image", func(t *testing.T) { checkOneBuildPerImage(t, project) })

	t.Run("front", func(t *testing.T) { checkFront(t, project) })

	t.Run("background", func(t *testing.T) {
		s := project.Services["background"]
		if tok, want := env(s, "ADMIN_TOKEN"), env(project.Services[modelServices[0]], "ADMIN_TOKEN"); tok == "" || tok != want {
			t.Errorf("background: ADMIN_TOKEN=%q, the services have %q: the front page changes its rate with the one token", tok, want)
		}
		if len(s.Profiles) > 0 {
			t.Errorf("background: profiles %v; it must start with `docker compose up`", s.Profiles)
		}
		if s.Restart != types.RestartPolicyOnFailure {
			t.Errorf("background: restart %q, want on-failure: with BACKGROUND_RATE=0 it exits 0 and must stay off", s.Restart)
		}
		cmd := strings.Join(s.Command, " ")
		rate := regexp.MustCompile(`-rate=(\S+)`).FindStringSubmatch(cmd)
		if rate == nil || rate[1] == "0" {
			t.Errorf("background: command %q: want -rate=${BACKGROUND_RATE:-<a few>}, on by default", cmd)
		}
		listen := regexp.MustCompile(`-listen=\S*:(\d+)`).FindStringSubmatch(cmd)
		if listen == nil {
			t.Fatalf("background: command %q: no -listen for Prometheus", cmd)
		}
		// Prometheus scrapes it with honor_labels, so that its series keep
		// the job of the service they counted.
		var cfg struct {
			ScrapeConfigs []struct {
				JobName       string `yaml:"job_name"`
				HonorLabels   bool   `yaml:"honor_labels"`
				StaticConfigs []struct {
					Targets []string `yaml:"targets"`
				} `yaml:"static_configs"`
			} `yaml:"scrape_configs"`
		}
		decodeFile(t, filepath.Join(root, "prometheus", "prometheus.yml"), yamlUnmarshal, &cfg)
		scraped := false
		for _, j := range cfg.ScrapeConfigs {
			for _, sc := range j.StaticConfigs {
				if slices.Contains(sc.Targets, "background:"+listen[1]) {
					scraped = true
					if !j.HonorLabels {
						t.Errorf("prometheus.yml: job %s scrapes the background without honor_labels: its series would all be job=%q", j.JobName, j.JobName)
					}
				}
			}
		}
		if !scraped {
			t.Errorf("prometheus.yml: no job scrapes background:%s", listen[1])
		}
	})

	t.Run("prometheus", func(t *testing.T) {
		s := project.Services["prometheus"]
		cmd := strings.Join(s.Command, " ")
		if !strings.Contains(cmd, "exemplar-storage") {
			t.Errorf("prometheus: exemplar storage not enabled (--enable-feature=exemplar-storage): %s", cmd)
		}
		// Same major and minor as the Prometheus the e2e builds from the
		// module proxy (Makefile PROMETHEUS_VERSION, v0.3MM.P = v3.MM.P).
		wantTag := prometheusImageTag(t)
		if tag := imageTag(s.Image); tag != wantTag {
			t.Errorf("prometheus image %s, want tag %s to match PROMETHEUS_VERSION in the Makefile", s.Image, wantTag)
		}
		mounts := bindMounts(s)
		if mounts["/etc/prometheus/prometheus.yml"] != abs(t, "prometheus/prometheus.yml") {
			t.Errorf("prometheus: prometheus/prometheus.yml not mounted at /etc/prometheus/prometheus.yml")
		}
		if mounts["/etc/prometheus/rules"] != abs(t, "prometheus/rules") {
			t.Errorf("prometheus: prometheus/rules not mounted beside the config (rule_files: rules/*.yml)")
		}
	})

	t.Run("grafana", func(t *testing.T) {
		s := project.Services["grafana"]
		if env(s, "GF_SECURITY_ADMIN_PASSWORD") == "" {
			t.Errorf("grafana: GF_SECURITY_ADMIN_PASSWORD needs a lab default")
		}
		if env(s, "GF_AUTH_ANONYMOUS_ENABLED") != "true" || env(s, "GF_AUTH_ANONYMOUS_ORG_ROLE") != "Viewer" {
			t.Errorf("grafana: anonymous access must be on, as Viewer")
		}
		mounts := bindMounts(s)
		if mounts["/etc/grafana/provisioning"] != abs(t, "grafana/provisioning") {
			t.Errorf("grafana: grafana/provisioning not mounted at /etc/grafana/provisioning")
		}
		dashboards := dashboardProviderPath(t)
		if mounts[dashboards] != abs(t, "grafana/dashboards") {
			t.Errorf("grafana: grafana/dashboards must be mounted at the provider path %s", dashboards)
		}
		// The provisioned datasources reach compose services by name.
		for uid, u := range provisionedURLs(t) {
			host, err := url.Parse(u)
			if err != nil {
				t.Errorf("datasource %s: %v", uid, err)
				continue
			}
			if _, ok := project.Services[host.Hostname()]; !ok {
				t.Errorf("datasource %s: %s is no compose service", uid, u)
			}
		}
		// The home page is the provisioned board itself: a home dashboard
		// read from a file path would be a second copy of it, with its own
		// edits and annotations.
		if p := env(s, "GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"); p != "" {
			t.Errorf("grafana: GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH=%s makes \"/\" a copy of the board; set GF_USERS_HOME_PAGE=/d/<uid>", p)
		}
		uids := map[string]bool{}
		for _, b := range loadBoards(t) {
			uids["/d/"+b.UID] = true
		}
		if home := env(s, "GF_USERS_HOME_PAGE"); !uids[home] {
			t.Errorf("grafana: GF_USERS_HOME_PAGE=%q, want /d/<uid> of a provisioned board (%v)", home, slices.Sorted(maps.Keys(uids)))
		}
	})

	t.Run("jaeger", func(t *testing.T) {
		s := project.Services["jaeger"]
		if len(s.Configs) != 1 {
			t.Fatalf("jaeger: want its config from the top-level configs")
		}
		content := project.Configs[s.Configs[0].Source].Content
		var cfg struct {
			Extensions struct {
				Query struct {
					HTTP struct {
						Endpoint string `yaml:"endpoint"`
					} `yaml:"http"`
				} `yaml:"jaeger_query"`
				Storage struct {
					Backends map[string]struct {
						Memory struct {
							MaxTraces int `yaml:"max_traces"`
						} `yaml:"memory"`
					} `yaml:"backends"`
				} `yaml:"jaeger_storage"`
			} `yaml:"extensions"`
			Receivers struct {
				OTLP struct {
					Protocols map[string]any `yaml:"protocols"`
				} `yaml:"otlp"`
			} `yaml:"receivers"`
		}
		if err := yaml.Unmarshal([]byte(content), &cfg); err != nil {
			t.Fatalf("jaeger config: %v", err)
		}
		for name, b := range cfg.Extensions.Storage.Backends {
			if b.Memory.MaxTraces < 10000 {
				t.Errorf("jaeger: backend %s keeps %d traces, too few for exemplar links over the board's range", name, b.Memory.MaxTraces)
			}
		}
		if _, ok := cfg.Receivers.OTLP.Protocols["http"]; !ok {
			t.Errorf("jaeger: no OTLP/HTTP receiver (the services export http/protobuf)")
		}
		// The exemplar links open the Jaeger UI in the user's browser: at a
		// port compose publishes on 127.0.0.1 for the query extension.
		_, queryPort, err := net.SplitHostPort(cfg.Extensions.Query.HTTP.Endpoint)
		if err != nil {
			t.Fatalf("jaeger: jaeger_query http endpoint: %v", err)
		}
		for _, tmpl := range exemplarURLTemplates(t) {
			u, err := url.Parse(strings.ReplaceAll(tmpl, traceIDVar, "0af7651916cd43dd8448eb211c80319c"))
			if err != nil {
				t.Errorf("exemplar link %q: %v", tmpl, err)
				continue
			}
			published := false
			for _, p := range s.Ports {
				if p.HostIP == u.Hostname() && p.Published == u.Port() && strconv.Itoa(int(p.Target)) == queryPort {
					published = true
				}
			}
			if !published {
				t.Errorf("exemplar link %q: %s is not the Jaeger UI that compose publishes (query port %s)", tmpl, u.Host, queryPort)
			}
		}
	})
}
