package app

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orderlab/orderlab/services/internal/httpserver"
	"github.com/orderlab/orderlab/services/internal/knob"
)

func TestEnvReportsEveryBadVariable(t *testing.T) {
	vars := map[string]string{
		"DB_MAX_CONNS":      "lots",
		"REQUEST_TIMEOUT":   "-1s",
		"LOG_LEVEL":         "loud",
		"WORK_CPU_ROUNDS":   "0",
		"HTTP_SERVER":       "fasthttp",
		"HTTP_HANDLER_POOL": "64",
		"LEAK_EVERY":        "-1",
		// A protocol counts only with an endpoint to send to.
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "thrift",
	}
	_, _, err := readKnobs("unbounded", func(k string) string { return vars[k] })
	if err == nil {
		t.Fatal("no error for eight bad variables")
	}
	for _, want := range []string{
		`DB_MAX_CONNS="lots": want an integer from 1 to 10000`,
		`REQUEST_TIMEOUT="-1s": want a duration from 1ms to 10m0s`,
		`LOG_LEVEL="loud": want one of debug, info, warn, error`,
		`WORK_CPU_ROUNDS="0"`,
		`HTTP_SERVER="fasthttp": want one of net/http, nbio`,
		`HTTP_HANDLER_POOL="64": only HTTP_SERVER=nbio has a handler pool`,
		`LEAK_EVERY="-1": want an integer from 0 to 1000000`,
		`OTEL_EXPORTER_OTLP_PROTOCOL="thrift": want http/protobuf or grpc`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestEnvDefaultsAndMasking(t *testing.T) {
	vars := map[string]string{"DATABASE_URL": "postgres://app:s3cret@db:5432/orders", "DB_MAX_CONNS": " 7 "}
	knobs, cfg, err := readKnobs("semaphore", func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DBMaxConns != 7 || cfg.API.RequestTimeout != 30*time.Second || cfg.API.WorkDBDelay != 20*time.Millisecond || cfg.HTTPAddr != "127.0.0.1:8080" ||
		cfg.HTTPServer != "net/http" || cfg.LeakEvery != 0 {
		t.Errorf("config = %+v", cfg)
	}
	logged := ""
	attrs := knobs.LogAttrs()
	for i := 0; i < len(attrs); i += 2 {
		logged += attrs[i].(string) + "=" + attrs[i+1].(string) + " "
	}
	if strings.Contains(logged, "s3cret") || !strings.Contains(logged, "DATABASE_URL=host=db port=5432 database=orders user=app") {
		t.Errorf("secret not masked in the start-up log: %s", logged)
	}
}

// The start-up log shows where a keyword/value DATABASE_URL points, and no
// secret of it.
func TestEnvLogsNoSecretOfAKeywordValueDSN(t *testing.T) {
	for dsn, want := range map[string]string{
		"host=db user=app password=s3cret dbname=orders sslmode=disable sslpassword=s3cret": "DATABASE_URL=host=db port=5432 database=orders user=app tls=off",
		"host=db password='s3cret":     "DATABASE_URL=unparsable keyword/value connection string",
		"postgres://app:s3cret@db:x/y": "DATABASE_URL=unparsable URL connection string",
	} {
		knobs, _, err := readKnobs("unbounded", func(k string) string { return map[string]string{"DATABASE_URL": dsn}[k] })
		if err != nil {
			t.Fatal(err)
		}
		attrs := knobs.LogAttrs()
		logged := ""
		for i := 0; i < len(attrs); i += 2 {
			logged += attrs[i].(string) + "=" + attrs[i+1].(string) + " "
		}
		if strings.Contains(logged, "s3cret") || !strings.Contains(logged, want) {
			t.Errorf("DATABASE_URL %q logged as: %s", dsn, logged)
		}
	}
}

// Run checks every setting, the model's own and the tracer's, before it
// logs "starting" or opens anything.
func TestRunRefusesBadSettingsBeforeStarting(t *testing.T) {
	svc := Service{Model: "semaphore", Start: func(Deps) (Build, error) { panic("built with bad settings") }}
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"LIMIT": "100001"}, `LIMIT="100001": want an integer from 1 to 100000, or adaptive`},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"},
			`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="http/json": want http/protobuf or grpc`},
	} {
		tc.vars["DATABASE_URL"] = "postgres://nowhere.invalid/x"
		var out strings.Builder
		err := Run(t.Context(), svc, func(k string) string { return tc.vars[k] }, &out, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("Run = %v, want %s", err, tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("Run logged before rejecting its settings: %s", out.String())
		}
	}
}

// HTTP_SERVER's declared values are the servers httpserver has.
func TestHTTPServerKnobListsEveryServer(t *testing.T) {
	k, _ := knob.Lookup("HTTP_SERVER")
	var kinds []string
	for _, kind := range httpserver.Kinds {
		kinds = append(kinds, string(kind))
	}
	if !slices.Equal(k.Values, kinds) {
		t.Errorf("HTTP_SERVER accepts %v; httpserver.Kinds = %v", k.Values, kinds)
	}
}
