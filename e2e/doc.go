// Package e2e verifies the one-command lab (compose.yaml, prometheus/,
// grafana/) without Docker.
//
// The static tests run in the fast tier (`make test`, `go test ./...`):
// compose.yaml loads with compose-go and follows the lab's rules (pinned
// images, healthchecks, depends_on conditions, loopback ports, existing
// mounts, a 4 GB memory budget), and the board, rules and provisioning
// agree with the metrics contract in docs/metrics.md.
//
// The lab runs are behind the build tag labcheck (`make lab-check`, `make
// e2e`), which the fast tier does not set. TestLab is the end-to-end run:
// the machine's Postgres behind the database proxy (compose's profile
// dbproxy), the three services built from source, the background load as
// compose runs it, a real Prometheus with the lab's own config and rules;
// every panel's data with the background load alone; then overload against
// every service, every PromQL expression of every panel, the starvation
// signal, the alerts and the traces; last, `lab scenario -lab` runs
// pool-starvation and db-latency, and what they changed is checked in
// Prometheus, in the annotations and in the knobs put back. TestLocalLab
// runs make local-lab's script: the page's URL printed, the page driving
// the services and the background load with one token, Prometheus scraping
// every target, and Ctrl-C leaving no process behind. Unable to run (no
// Prometheus, no Postgres), they fail rather than skip.
//
// The files:
//   - compose_test.go: TestCompose, with the checks of every service in
//     compose_checks_test.go; releases_test.go: the Prometheus release that
//     compose.yaml pins.
//   - board_test.go: the dashboards' JSON and TestBoard; contract_test.go:
//     TestMetricsContractCovered; pitfall_rules_test.go: the pitfall
//     alerts' contract, and that they read only what a service and its
//     database expose; provisioning_test.go: Grafana's
//     provisioned datasources (and how Grafana reads a provisioning value)
//     and dashboard provider.
//   - lab_test.go: TestLab's setup and its order of checks, one file per
//     concern: lab_background_test.go (the background load, and the board
//     with it alone), lab_panels_test.go (the board's panel and annotation
//     queries),
//     lab_rules_test.go (recording rules, the starvation signal, alerts),
//     lab_traces_test.go (spans, and the provisioned exemplar link into
//     Jaeger), lab_scenario_test.go (the database proxy, scenario -lab).
//   - What TestLab runs: the services through lab/local, as a scenario
//     does; prometheus_test.go (its config) and prometheus_run_test.go (its
//     binary and release, flags, a client of its API, the waits on its
//     scrapes and rule evaluations);
//     jaeger_test.go (JAEGER set); overload_test.go (the loadtest binary);
//     fakegrafana_test.go (the annotation API loadtest writes to);
//     process_test.go (child processes of the test, on internal/proc).
//   - locallab_run_test.go: TestLocalLab; locallab_test.go:
//     TestLocalLabConfig (the local
//     Prometheus config is the compose one with local targets).
//   - files_test.go: reading the repository's files.
//
// The database is internal/pgtest's, the trace receiver internal/otlptest's.
package e2e
