//go:build labcheck

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
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

// openTraceLink follows an exemplar link to the Jaeger UI as a browser
// would, on this Jaeger instead of the port compose publishes: the link must
// be the UI's page of trace id, and the page must answer. It then fetches
// the trace the way that page does (GET /api/traces/{id}, also what
// Grafana's Jaeger datasource asks for) and returns its span names.
func (j *labJaeger) openTraceLink(ctx context.Context, link, id string) ([]string, error) {
	u, err := url.Parse(link)
	if err != nil {
		return nil, err
	}
	if u.Path != "/trace/"+id {
		return nil, fmt.Errorf("path %q: not the Jaeger UI's page of trace %s", u.Path, id)
	}
	local, err := url.Parse(j.query)
	if err != nil {
		return nil, err
	}
	u.Scheme, u.Host = local.Scheme, local.Host
	if err := j.get(ctx, u.String(), nil); err != nil {
		return nil, err
	}
	var body struct {
		Data []struct {
			Spans []struct {
				OperationName string `json:"operationName"`
			} `json:"spans"`
		} `json:"data"`
	}
	if err := j.get(ctx, j.query+"/api/traces/"+id, &body); err != nil {
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

// get fetches rawURL, fails on any status but 200, and decodes a JSON body
// into out (nil: the body is read and dropped).
func (j *labJaeger) get(ctx context.Context, rawURL string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", rawURL, resp.Status)
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
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
