# orderlab: make targets. `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO        ?= go
# go.mod names the patched toolchain (go1.26.10: stdlib fixes that
# govulncheck reports for 1.26.8); auto lets an older local Go fetch it from
# the module proxy, and a newer one win.
export GOTOOLCHAIN ?= auto
BIN       := $(CURDIR)/bin
export GOBIN := $(BIN)
export PATH  := $(BIN):$(PATH)

PROMETHEUS_VERSION ?= v0.316.0
# postgres_exporter: compose pins the image at v0.20.1 (its fixes); the Go
# module proxy refuses v0.20.1, so the tool (and the lab's stand-in image,
# .ci/labimages) is v0.19.1, the newest it serves. The series the board and
# the rules read have the same names in both.
POSTGRES_EXPORTER_VERSION ?= v0.19.1
# pgbouncer_exporter: the same version as compose's prometheuscommunity/pgbouncer-exporter image.
PGBOUNCER_EXPORTER_VERSION ?= v0.12.1
STATICCHECK_VERSION ?= v0.8.2
GOVULNCHECK_VERSION ?= v1.9.0
VEGETA_VERSION ?= v12.13.0

# Postgres: TEST_DATABASE_URL for the tests, DATABASE_URL for make run and the
# scenarios. Unset, each uses the local server as internal/pgdb.DefaultURL
# names it (127.0.0.1:5432, user postgres, trust auth).
export TEST_DATABASE_URL

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-16s %s\n",$$1,$$2}'

## ---- tools (installed into ./bin from the Go module proxy) ----
# promtool and prometheus: one `go install` of both, so that the packages
# they share compile once. The tags leave out the service-discovery plugins
# (and their cloud SDKs) that no config here uses: the compose config has
# static_configs only, the Kubernetes lab's (checked by promtool in
# rules-test) kubernetes_sd_configs; file and http discovery are always in.
# -s -w: no symbol table or DWARF, which the tests never read (the module
# version, which the e2e checks, stays in the build info).
PROMETHEUS_TAGS ?= remove_all_sd,enable_kubernetes_sd
$(BIN)/promtool $(BIN)/prometheus &:
	$(GO) install -tags '$(PROMETHEUS_TAGS)' -ldflags='-s -w' \
		github.com/prometheus/prometheus/cmd/promtool@$(PROMETHEUS_VERSION) \
		github.com/prometheus/prometheus/cmd/prometheus@$(PROMETHEUS_VERSION)
# postgres_exporter (the database's own view: the board's "Postgres server"
# row). `go install mod@version` is refused for it (the proxy does not list
# the module's versions), so it builds from the downloaded module, in a
# writable copy under .cache; -trimpath keeps the build cache valid for
# every clone.
PGEXP_SRC := $(CURDIR)/.cache/src/postgres_exporter@$(POSTGRES_EXPORTER_VERSION)
$(BIN)/postgres_exporter:
	@set -e; src=$$($(GO) mod download -json github.com/prometheus-community/postgres_exporter@$(POSTGRES_EXPORTER_VERSION) | sed -n 's/.*"Dir": "\(.*\)",/\1/p'); \
	rm -rf $(PGEXP_SRC); mkdir -p $(dir $(PGEXP_SRC)); cp -r "$$src" $(PGEXP_SRC); chmod -R u+w $(PGEXP_SRC); \
	cd $(PGEXP_SRC) && $(GO) build -trimpath -ldflags='-s -w -X github.com/prometheus/common/version.Version=$(POSTGRES_EXPORTER_VERSION:v%=%)' -o $@ ./cmd/postgres_exporter
# pgbouncer_exporter (PgBouncer's own view: the board's "PgBouncer" row, the
# pgbouncer profile), built the same way from the downloaded module.
PGBEXP_SRC := $(CURDIR)/.cache/src/pgbouncer_exporter@$(PGBOUNCER_EXPORTER_VERSION)
$(BIN)/pgbouncer_exporter:
	@set -e; src=$$($(GO) mod download -json github.com/prometheus-community/pgbouncer_exporter@$(PGBOUNCER_EXPORTER_VERSION) | sed -n 's/.*"Dir": "\(.*\)",/\1/p'); \
	rm -rf $(PGBEXP_SRC); mkdir -p $(dir $(PGBEXP_SRC)); cp -r "$$src" $(PGBEXP_SRC); chmod -R u+w $(PGBEXP_SRC); \
	cd $(PGBEXP_SRC) && $(GO) build -trimpath -ldflags='-s -w -X github.com/prometheus/common/version.Version=$(PGBOUNCER_EXPORTER_VERSION:v%=%)' -o $@ .
$(BIN)/staticcheck:
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
$(BIN)/govulncheck:
	$(GO) install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION)
# vegeta: bench-loadtest's rate-matched open-loop reference (not in go.mod).
$(BIN)/vegeta:
	$(GO) install github.com/tsenart/vegeta/v12@$(VEGETA_VERSION)

# govulncheck reads vuln.go.dev; where that is out of reach (offline CI), it
# reads a database built from the golang.org/x/vulndb module at VULNDB_VERSION.
VULNDB_VERSION ?= v0.0.0-20261105234957-e22db6528018
VULNDB_DIR     := $(CURDIR)/.cache/vulndb-$(VULNDB_VERSION)
$(VULNDB_DIR)/index/db.json:
	@set -e; src=$$($(GO) mod download -json golang.org/x/vulndb@$(VULNDB_VERSION) | sed -n 's/.*"Dir": "\(.*\)",/\1/p'); \
	tmp=$$(mktemp -d); cp -r "$$src"/. "$$tmp"; chmod -R u+w "$$tmp"; \
	(cd "$$tmp" && $(GO) run ./cmd/indexdb -vulns data/osv -out $(VULNDB_DIR)); rm -rf "$$tmp"

.PHONY: vulncheck
vulncheck: $(BIN)/govulncheck ## govulncheck (online DB, or an offline snapshot when vuln.go.dev is unreachable)
	@if curl -sfm 5 -o /dev/null https://vuln.go.dev/index/db.json; then \
		$(BIN)/govulncheck ./...; \
	else \
		$(MAKE) --no-print-directory $(VULNDB_DIR)/index/db.json && \
		echo "vuln.go.dev unreachable: using the golang.org/x/vulndb snapshot $(VULNDB_VERSION)" && \
		$(BIN)/govulncheck -db file://$(VULNDB_DIR) ./...; \
	fi

.PHONY: tools
tools: $(BIN)/promtool $(BIN)/prometheus $(BIN)/postgres_exporter ## install promtool, prometheus and postgres_exporter into ./bin

# The scenario report test renders its HTML in headless Chromium (Debian's
# chromium package). As root, install it; otherwise say how.
.PHONY: chromium
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || [ -n "$$CHROMIUM" ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's chromium for the report test"; \
	    ./.ci/apt-install chromium chromium-driver; \
	  else echo "make test needs Chromium: 'sudo apt-get install -y chromium chromium-driver', or set CHROMIUM to a Chrome/Chromium binary"; exit 1; fi; }

# The database pitfalls' tests and the too-many-clients scenario run Debian's
# PgBouncer in front of a throwaway cluster (docs/scenarios/too-many-clients.md). As
# root, install it; otherwise say how.
.PHONY: pgbouncer
pgbouncer: ## install PgBouncer (Debian's pgbouncer package) when it is missing
	@command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian's pgbouncer for the database pitfalls"; \
	    ./.ci/apt-install pgbouncer; \
	  else echo "make test needs PgBouncer: 'sudo apt-get install -y pgbouncer' (Debian), or put pgbouncer on PATH"; exit 1; fi; }

## ---- build, run, test ----
.PHONY: build
build: ## build the three services, loadtest and lab into ./bin
	$(GO) build -o $(BIN)/ ./services/unbounded ./services/semaphore ./services/pipeline ./loadtest ./lab

.PHONY: pgcheck
pgcheck:
	@$(GO) run ./internal/pgtest/pgcheck

# Two tiers (docs/development.md#two-tiers). `make test` is the fast one:
# vet, the rule tests, and every test that is not behind the build tag
# labcheck. On a fresh machine most of it is compiling: promtool from
# source, the race build of every test, and vet's build. They run side by
# side (test-build compiles the test binaries and runs none: -exec true),
# then the tests run on the warm cache. With promtool there already,
# test-build would only link every test binary once more than go test does.
.PHONY: test
test: pgbouncer pgcheck ## the fast tier: vet, rule tests, go test -race -shuffle=on against a real Postgres (no lab end to end, browser or scenario at size: make lab-check)
	@$(MAKE) --no-print-directory -j3 $(BIN)/promtool $(if $(wildcard $(BIN)/promtool),,test-build) vet
	@$(MAKE) --no-print-directory rules-test
	$(GO) test -race -shuffle=on -count=1 -timeout 15m ./...

.PHONY: vet test-build
vet:
	$(GO) vet ./...
test-build:
	$(GO) test -race -count=1 -run '^$$' -exec true ./... >/dev/null

# The slow tier: the tests of the _test.go files behind the build tag
# labcheck (the lab end to end, the browser tests, every scenario from the
# page at full size, every pitfall a mystery runs, the tests that measure
# the machine), and only those: their packages' other tests ran in make
# test. The files are found by their //go:build line, the tests by their
# func lines. -p 1: the tests that measure the machine run one package at
# a time, so that no other package's load is in their figures.
LABCHECK_FILES = $(shell grep -rlE --include='*_test.go' --exclude-dir=.cache '^//go:build .*\blabcheck\b' .)
LABCHECK_PKGS  = $(sort $(patsubst %/,%,$(dir $(LABCHECK_FILES))))
LABCHECK_TESTS = $(shell sed -nE 's/^func (Test[A-Za-z0-9_]+)\(t \*testing\.T\).*/\1/p' $(LABCHECK_FILES) | sort -u | paste -sd'|')

.PHONY: lab-check lab-check-vet
lab-check: chromium pgbouncer pgcheck ## the slow tier (build tag labcheck): the lab end to end, the browser tests, every scenario from the page at full size, every pitfall a mystery runs, the tests that measure the machine
	@$(MAKE) --no-print-directory -j3 $(BIN)/prometheus $(BIN)/postgres_exporter lab-check-vet
	PROMETHEUS=$(BIN)/prometheus POSTGRES_EXPORTER=$(BIN)/postgres_exporter $(GO) test -tags labcheck -race -shuffle=on -count=1 -p 1 -timeout 60m -run '^($(LABCHECK_TESTS))$$' $(LABCHECK_PKGS)
lab-check-vet:
	$(GO) vet -tags labcheck ./...

# Fuzz targets, one `go test -fuzz` run each (a run takes one target), for
# FUZZTIME each. Their seeds are in each package's testdata/fuzz/<Target>/;
# a crasher lands there too, and stays as a regression seed.
FUZZTIME ?= 30s
FUZZ_TARGETS := \
	./services/internal/api:FuzzDecode \
	./services/internal/api:FuzzQueryParams \
	./services/internal/api:FuzzWriteProblem \
	./services/internal/order:FuzzFingerprint \
	./services/unbounded:FuzzPlaceOrder \
	./lab/diagnose:FuzzParseEvidence

.PHONY: fuzz
fuzz: pgcheck ## each fuzz target for FUZZTIME (default 30s): make fuzz FUZZTIME=5s
	@set -e; log=$$(mktemp); trap 'rm -f "$$log"' EXIT; for t in $(FUZZ_TARGETS); do \
	  echo "== $${t#*:} ($${t%%:*}, $(FUZZTIME))"; \
	  for try in 1 2; do \
	    if $(GO) test -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) -parallel 1 "$${t%%:*}" 2>&1 | tee "$$log"; [ "$${PIPESTATUS[0]}" = 0 ]; then break; fi; \
	    if [ "$$try" = 1 ] && grep -qx '    context deadline exceeded' "$$log" && ! grep -q 'Failing input written' "$$log"; then \
	      echo "== $${t#*:}: Go's fuzz coordinator failed at the -fuzztime deadline with no failing input (go.dev/issue/75804, fixed in Go 1.27): once more"; \
	      continue; fi; \
	    exit 1; \
	  done; \
	done

# Every target the docs promise to build on (docs/development.md, macOS and Windows):
# go build for each. Build only: the tests run on Linux. `make cross-vet`
# also vets the test files once per OS (slower: it compiles every test
# dependency again for each).
CROSS_TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
.PHONY: cross cross-vet
cross: ## go build ./... for linux, darwin and windows on amd64 and arm64
	@set -e; for t in $(CROSS_TARGETS); do \
	  echo "GOOS=$${t%/*} GOARCH=$${t#*/} go build ./..."; \
	  GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) build ./...; \
	done

cross-vet: ## go vet ./... (test files included) for darwin and windows
	@set -e; for os in darwin windows; do \
	  echo "GOOS=$$os go vet ./..."; GOOS=$$os GOARCH=amd64 $(GO) vet ./...; \
	done

.PHONY: fmt-check
fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: check
check: fmt-check $(BIN)/staticcheck ## gofmt, vet, staticcheck (with and without the labcheck tag), govulncheck, then test
	$(GO) vet ./...
	$(BIN)/staticcheck ./...
	$(BIN)/staticcheck -tags labcheck ./...
	$(MAKE) --no-print-directory vulncheck
	$(MAKE) --no-print-directory test

.PHONY: run
run: build ## the three services on 127.0.0.1:8081-8083 (admin 9091-9093) against DATABASE_URL
	@trap 'kill $$(jobs -p) 2>/dev/null; wait' INT TERM; \
	DATABASE_URL='$(DATABASE_URL)' HTTP_ADDR=127.0.0.1:8081 ADMIN_ADDR=127.0.0.1:9091 $(BIN)/unbounded & \
	DATABASE_URL='$(DATABASE_URL)' HTTP_ADDR=127.0.0.1:8082 ADMIN_ADDR=127.0.0.1:9092 $(BIN)/semaphore & \
	DATABASE_URL='$(DATABASE_URL)' HTTP_ADDR=127.0.0.1:8083 ADMIN_ADDR=127.0.0.1:9093 $(BIN)/pipeline & \
	wait

# The lab without Docker, in one command: deploy/local/lab.sh (the script
# says what it starts, on which ports, and what it reads from the environment).
.PHONY: local-lab
local-lab: build $(BIN)/prometheus ## the lab without Docker: the services behind the database proxy, Prometheus, the background load and the front page on http://127.0.0.1:8080, one ADMIN_TOKEN; Ctrl-C stops all
	BIN=$(BIN) ./deploy/local/lab.sh

## ---- loadtest ----
.PHONY: loadtest
loadtest: ## run the load generator: make loadtest ARGS='open -rate 2000 -d 30s http://127.0.0.1:8081/work/db?delay=20ms'
	$(GO) run ./loadtest $(ARGS)

# N open-loop generators, one process each, share one arrival schedule
# (loadtest -shard i/N); their reports are merged exactly (loadtest merge).
N ?= 3
SHARDED_OUT ?= results/sharded
.PHONY: loadtest-sharded
loadtest-sharded: ## N generators share one open schedule, then merge: make loadtest-sharded N=3 ARGS='-rate 3000 -d 30s URL'
	@test -n "$(ARGS)" || { echo "loadtest-sharded: set ARGS to the open run's flags and URL, e.g. ARGS='-rate 3000 -d 30s http://127.0.0.1:8081/work/db?delay=20ms'"; exit 2; }
	$(GO) build -o $(BIN)/loadtest ./loadtest
	@set -u; mkdir -p $(SHARDED_OUT); rm -f $(SHARDED_OUT)/shard-*; pids=(); \
	for i in $$(seq 0 $$(($(N) - 1))); do \
	  $(BIN)/loadtest open -shard $$i/$(N) -json $(SHARDED_OUT)/shard-$$i.json $(ARGS) >$(SHARDED_OUT)/shard-$$i.log 2>&1 & pids+=($$!); \
	done; \
	code=0; for i in "$${!pids[@]}"; do \
	  wait "$${pids[$$i]}" || { code=1; echo "shard $$i/$(N) failed:"; cat $(SHARDED_OUT)/shard-$$i.log; }; \
	done; \
	$(BIN)/loadtest merge -json $(SHARDED_OUT)/merged.json $(SHARDED_OUT)/shard-*.json || exit $$?; \
	echo "reports: $(SHARDED_OUT)/shard-*.json, merged: $(SHARDED_OUT)/merged.json"; exit $$code

BENCH_ARGS ?= -c 50 -d 5s -rounds 5

.PHONY: bench-loadtest
bench-loadtest: $(BIN)/vegeta ## loadtest vs wrk (closed) and vs vegeta at the same rate (open): requests per client CPU-second and open-run lateness at 2,000/s and 20,000/s (installs wrk when root, vegeta into ./bin)
	@command -v wrk >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then ./.ci/apt-install wrk; \
	  else echo "bench-loadtest needs wrk: run 'sudo apt-get install -y wrk' (Debian package wrk), then retry"; exit 1; fi; }
	$(GO) build -o $(BIN)/loadtest ./loadtest
	$(GO) build -o $(BIN)/benchwrk ./loadtest/internal/benchwrk
	@if command -v taskset >/dev/null && [ "$$(nproc)" -ge 2 ]; then \
	  taskset -c 0 $(BIN)/benchwrk -loadtest $(BIN)/loadtest -vegeta $(BIN)/vegeta -cpu 1 $(BENCH_ARGS); \
	else $(BIN)/benchwrk -loadtest $(BIN)/loadtest -vegeta $(BIN)/vegeta -cpu '' $(BENCH_ARGS); fi

BENCH_ADMISSION_ARGS ?=
.PHONY: bench-admission
bench-admission: build ## server CPU per 429 against per GET /livez and per bare net/http answer, on a saturated semaphore service (target: at most 1.5x bare)
	$(GO) build -o $(BIN)/benchadmission ./lab/internal/benchadmission
	@if command -v taskset >/dev/null && [ "$$(nproc)" -ge 2 ]; then \
	  taskset -c 0 $(BIN)/benchadmission -bin $(BIN) -server-cpu 1 $(BENCH_ADMISSION_ARGS); \
	else $(BIN)/benchadmission -bin $(BIN) $(BENCH_ADMISSION_ARGS); fi

## ---- lab, e2e ----
.PHONY: lab
lab: ## the lab: docker compose up --build, then Grafana on http://127.0.0.1:3000 (docs/lab.md)
	@command -v docker >/dev/null 2>&1 || { echo "lab: docker not found. The lab needs Docker with Compose v2; without Docker, 'make e2e' runs the same config, rules and board against local processes."; exit 1; }
	docker compose up --build

.PHONY: lab-down
lab-down: ## stop the lab and delete its volumes (Postgres, Prometheus and Grafana data)
	docker compose down --volumes

# The compose lab as a user starts it, run for real (e2e/composelab): the
# pinned images, pulled or built locally where there is no registry
# (.ci/labimages), then docker compose up --build and every check of
# docs/lab.md, "What was verified". Needs Docker and Compose 2.23.1 or later
# (.ci/docker gets both on a Debian machine).
.PHONY: lab-test
lab-test: ## the compose lab for real (Docker): up --build, every in-the-lab scenario quick, rebuild, restart, down -v
	./.ci/labimages
	$(GO) test -tags composelab -count=1 -v -timeout 120m -run '^TestComposeLab$$' ./e2e/composelab/

# Which pitfall the alerts name, in the compose lab (e2e/composelab,
# TestDiagnosis): every pitfall run on one model where the catalog says it
# shows (DIAGNOSIS_MODELS=showing: on every such model), after background
# load alone, and a busy healthy load on each model; the report written to
# DIAGNOSIS_OUT (docs/results/diagnosis, a relative path from here; empty:
# the test's log only). .ci/run runs it at its defaults, which take about
# 29 min (docs/development.md#what-ci-takes); DIAGNOSIS_CALM=23m gives each
# service 30 calm minutes (58 min), DIAGNOSIS_MODELS=showing with the rest as
# they are 50 min (both measured with 90 s windows, before they were 45).
DIAGNOSIS_MODELS ?= one
DIAGNOSIS_CALM   ?= 2m
DIAGNOSIS_PHASE  ?= 60s
DIAGNOSIS_BUSY   ?= 60s
DIAGNOSIS_OUT    ?= $(CURDIR)/docs/results/diagnosis
.PHONY: lab-diagnosis
lab-diagnosis: ## run every pitfall in the compose lab and report which alerts named it, when, and the false alarms (docs/results/diagnosis)
	./.ci/labimages
	DIAGNOSIS_MODELS=$(DIAGNOSIS_MODELS) DIAGNOSIS_CALM=$(DIAGNOSIS_CALM) DIAGNOSIS_PHASE=$(DIAGNOSIS_PHASE) \
	DIAGNOSIS_BUSY=$(DIAGNOSIS_BUSY) DIAGNOSIS_OUT=$(DIAGNOSIS_OUT) \
		$(GO) test -tags composelab -count=1 -v -timeout 150m -run '^TestDiagnosis$$' ./e2e/composelab/

.PHONY: dashboards
dashboards: ## regenerate grafana/dashboards/*.json from grafana/board (grafana-foundation-sdk), then make k8s
	$(GO) run ./grafana/generate
	$(MAKE) --no-print-directory k8s

# kustomize reads files only from inside a kustomization's directory: the
# Kubernetes manifests hold copies of the board, the rules and Grafana's
# provisioning, which the tests check against their sources.
.PHONY: k8s
k8s: ## refresh deploy/kubernetes's copies of the board, the rules (and PrometheusRules) and Grafana's provisioning
	$(GO) run ./deploy/kubernetes/generate

.PHONY: rules-test
rules-test: $(BIN)/promtool ## promtool check config (compose, local and Kubernetes) and rules, then the rule unit tests
	$(BIN)/promtool check config prometheus/prometheus.yml
	$(BIN)/promtool check config deploy/local/prometheus.yml
	$(BIN)/promtool check config deploy/kubernetes/lab/prometheus/prometheus.yml
	$(BIN)/promtool check rules prometheus/rules/*.yml
	$(BIN)/promtool test rules prometheus/tests/*.yml

# JAEGER (optional): a Jaeger v2 binary; the e2e then also runs the compose
# jaeger config and follows exemplar links into it (make e2e-jaeger).
JAEGER ?=

.PHONY: e2e
e2e: $(BIN)/prometheus $(BIN)/postgres_exporter rules-test ## the lab without Docker: compose check, services + Prometheus + load, every panel query, alerts, traces
	PROMETHEUS=$(BIN)/prometheus POSTGRES_EXPORTER=$(BIN)/postgres_exporter JAEGER=$(JAEGER) $(GO) test -tags labcheck -count=1 -v -timeout 14m ./e2e/ ./grafana/...

# Jaeger v2.11.0 is Go module v1.74.0. compose pins the image at 2.17.0 (a UI
# XSS fix), which cannot be built here (the newest approved Jaeger on the
# module proxy is v1.75.0, Jaeger 2.12.0): this builds 2.11.0, the stand-in
# .ci/labimages puts under 2.17.0's name (its UI is a placeholder). Its
# go.mod has replace directives, so `go install pkg@version` refuses it:
# build it from the module's source instead (a few minutes on 2 cores).
JAEGER_VERSION ?= v1.74.0
$(BIN)/jaeger:
	@set -e; src=$$($(GO) mod download -json github.com/jaegertracing/jaeger@$(JAEGER_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	tmp=$$(mktemp -d); trap 'chmod -R u+w "$$tmp"; rm -rf "$$tmp"' EXIT; \
	cp -r "$$src"/. "$$tmp"; chmod -R u+w "$$tmp"; \
	cd "$$tmp" && $(GO) build -o $(BIN)/jaeger ./cmd/jaeger

.PHONY: e2e-jaeger
e2e-jaeger: $(BIN)/jaeger ## make e2e, plus a real Jaeger with the compose config: exemplar links must open their trace
	$(MAKE) e2e JAEGER=$(BIN)/jaeger

## ---- scenarios ----
# make scenario NAME=pool-starvation [QUICK=1] [COUNT=3]; make scenarios [QUICK=1] [COUNT=3].
# COUNT runs each scenario that many times over: its tables quote the median and the range.
# Results: results/<scenario>/<timestamp>.{json,md,html} (docs/reference/scenario-format.md).
SCENARIO_ARGS ?=
COUNT ?= 1
SCENARIO_FLAGS = $(if $(filter 1 true yes,$(QUICK)),-quick) -count $(COUNT) -out results -bin $(BIN) $(if $(DATABASE_URL),-db '$(DATABASE_URL)') $(SCENARIO_ARGS)

.PHONY: scenario
scenario: build $(if $(filter too-many-clients all,$(NAME)),pgbouncer) ## one scenario against fresh local services: make scenario NAME=burst-1000 [QUICK=1] (list: NAME=-list)
	@test -n "$(NAME)" || { echo "scenario: set NAME (one of: $$($(BIN)/lab scenario -list | cut -d' ' -f1 | tr '\n' ' '))"; exit 2; }
	$(BIN)/lab scenario $(SCENARIO_FLAGS) $(NAME)

.PHONY: scenarios
scenarios: build pgbouncer ## all twenty scenarios (their load alone: 37 minutes at full size, 6 with QUICK=1; on top, a fresh start of the services for most phases)
	timeout 60m $(BIN)/lab scenario $(SCENARIO_FLAGS) all

# make faults [FAULTS_ARGS='-faults restart -services pipeline']: docs/reference/database-failures.md.
FAULTS_ARGS ?=
.PHONY: faults
faults: build ## the database fails under load (internal/dbfault: killed backends, restart, 3 s outage, blackhole, latency, reset connections): the reliability tables of docs/reference/database-failures.md, about 4 minutes
	$(BIN)/lab faults -bin $(BIN) $(FAULTS_ARGS)

# The docs' pictures (docs/img/pictures.txt): each drawn from a committed
# report's JSON (docs/results/), rendered again by `lab scenario
# -render` into PICTURES_OUT, then one chart (or the page's top) captured as
# a PNG by the headless Chromium of the report test (internal/docshot). No
# load is run: a picture shows exactly the committed run its caption names.
PICTURES_OUT ?= $(CURDIR)/.cache/pictures
.PHONY: pictures
pictures: build chromium ## the docs' pictures (docs/img/pictures.txt): charts of committed reports as PNGs under docs/img/
	rm -rf $(PICTURES_OUT)
	grep -v '^#' docs/img/pictures.txt | while IFS='|' read -r report what png; do \
	  mkdir -p "$(PICTURES_OUT)/$$(dirname $$report)" && cp "docs/results/$$report.json" "$(PICTURES_OUT)/$$report.json" && \
	  $(BIN)/lab scenario -render "$(PICTURES_OUT)/$$report.json" >/dev/null && \
	  if [ "$$what" = -page ]; then how=-page; else how="-title=$$what"; fi && \
	  $(GO) run ./internal/docshot -html "$(PICTURES_OUT)/$$report.html" "$$how" -out "docs/img/$$png" && echo "docs/img/$$png: $$report, $$what" || exit 1; \
	done

# The front page's screenshots (docs/front-page.md): the e2e's lab with a
# quick pool-starvation run from the page in headless Chromium, which saves
# the catalog, the run in progress and its verdict as docs/img/front-*.png.
.PHONY: front-pictures
front-pictures: $(BIN)/prometheus $(BIN)/postgres_exporter chromium ## the front page's screenshots, docs/img/front-{catalog,run,verdict,mystery,mystery-reveal}.png, from the e2e's lab
	PROMETHEUS=$(BIN)/prometheus POSTGRES_EXPORTER=$(BIN)/postgres_exporter FRONT_SHOTS=$(CURDIR)/docs/img $(GO) test -tags labcheck -count=1 -v -timeout 14m -run 'TestLab$$' ./e2e/

BENCH_TASKS_ARGS ?=
.PHONY: bench
bench: ## scenario 4 and 10 benchmarks: 100,000 jobs of 50 ms, goroutines vs pools; CPU-bound parity
	$(GO) test -run '^$$' -bench 'HundredThousandTasks|CPUBound' -benchtime 1x -count 1 ./lab/tasks $(BENCH_TASKS_ARGS)
