package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
	"github.com/goccy/go-yaml"

	"github.com/orderlab/orderlab/internal/proc"
)

// labJaeger is a real Jaeger v2 (JAEGER=path, `make e2e-jaeger`) running the
// config compose.yaml gives the jaeger service, with every endpoint moved to
// a free 127.0.0.1 port.
type labJaeger struct {
	otlpHTTP string // http://host:port, OTLP/HTTP receiver
	query    string // http://host:port, query API and UI (Grafana's datasource URL)
}

// startJaeger runs bin with the compose config, every endpoint moved to a
// free loopback address, and returns once it reports healthy.
func startJaeger(t *testing.T, ctx context.Context, project *types.Project, bin string) *labJaeger {
	t.Helper()
	svc := project.Services["jaeger"]
	if len(svc.Configs) != 1 {
		t.Fatal("compose.yaml: jaeger has no config")
	}
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(project.Configs[svc.Configs[0].Source].Content), &cfg); err != nil {
		t.Fatal(err)
	}
	addrs, err := proc.LoopbackAddrs(6)
	if err != nil {
		t.Fatal(err)
	}
	otlpHTTP, query, health := addrs[0], addrs[1], addrs[2]
	set := func(addr string, path ...string) {
		m := cfg
		for _, k := range path[:len(path)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[path[len(path)-1]] = addr
	}
	set(addrs[3], "receivers", "otlp", "protocols", "grpc", "endpoint")
	set(otlpHTTP, "receivers", "otlp", "protocols", "http", "endpoint")
	set(health, "extensions", "healthcheckv2", "http", "endpoint")
	set(addrs[4], "extensions", "healthcheckv2", "grpc", "endpoint")
	set(query, "extensions", "jaeger_query", "http", "endpoint")
	set(addrs[5], "extensions", "jaeger_query", "grpc", "endpoint")
	set("none", "service", "telemetry", "metrics", "level")
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := writeFile(t, t.TempDir(), "jaeger.yaml", data)
	bin, _ = filepath.Abs(bin)
	p := startProc(t, "jaeger", bin, []string{"--config=" + path}, proc.BaseEnv("GOMAXPROCS"))
	if err := p.WaitReady(ctx, "http://"+health+"/status", time.Minute); err != nil {
		t.Fatal(err)
	}
	return &labJaeger{otlpHTTP: "http://" + otlpHTTP, query: "http://" + query}
}

// trace fetches one trace the way Grafana's Jaeger datasource does
// (GET /api/traces/{id}) and returns its span names.
func (j *labJaeger) trace(ctx context.Context, id string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.query+"/api/traces/"+id, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /api/traces/%s: %s", id, resp.Status)
	}
	var body struct {
		Data []struct {
			Spans []struct {
				OperationName string `json:"operationName"`
			} `json:"spans"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	var names []string
	for _, tr := range body.Data {
		for _, s := range tr.Spans {
			names = append(names, s.OperationName)
		}
	}
	return names, nil
}

// forward sends an OTLP/HTTP request body on to Jaeger.
func (j *labJaeger) forward(body []byte) error {
	resp, err := http.Post(j.otlpHTTP+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("jaeger OTLP: %s", resp.Status)
	}
	return nil
}
