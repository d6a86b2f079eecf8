// Package e2e verifies the one-command lab (compose.yaml, prometheus/,
// grafana/) without Docker.
//
// The static tests always run with `go test ./...`: compose.yaml loads with
// compose-go and follows the lab's rules (pinned images, healthchecks,
// depends_on conditions, loopback ports, existing mounts, a 4 GB memory
// budget), and the board, rules and provisioning agree with the metrics
// contract in docs/metrics.md.
//
// TestLab is the end-to-end run (`make e2e`, ORDERLAB_E2E=1): the machine's
// Postgres, the three services built from source, a real Prometheus with the
// lab's own config and rules, overload against every service, then every
// PromQL expression of every panel, the starvation signal, the alerts and the
// traces. Asked to run but unable to (no Prometheus, no Postgres), it fails
// rather than skips.
package e2e
