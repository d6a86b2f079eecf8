# orderlab: make targets. `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

GO        ?= go
BIN       := $(CURDIR)/bin
export GOBIN := $(BIN)
export PATH  := $(BIN):$(PATH)

PROMETHEUS_VERSION ?= v0.316.0
STATICCHECK_VERSION ?= v0.8.2
GOVULNCHECK_VERSION ?= v1.9.0

TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
export TEST_DATABASE_URL
DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*## "}{printf "  %-16s %s\n",$$1,$$2}'

## ---- tools (installed into ./bin from the Go module proxy) ----
$(BIN)/promtool:
	$(GO) install github.com/prometheus/prometheus/cmd/promtool@$(PROMETHEUS_VERSION)
$(BIN)/prometheus:
	$(GO) install github.com/prometheus/prometheus/cmd/prometheus@$(PROMETHEUS_VERSION)
$(BIN)/staticcheck:
	$(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
$(BIN)/govulncheck:
	$(GO) install golang.org/x/vuln/cmd/govulncheck@$(GOVULNCHECK_VERSION)

.PHONY: tools
tools: $(BIN)/promtool $(BIN)/prometheus ## install promtool and prometheus into ./bin

## ---- build, run, test ----
.PHONY: build
build: ## build the three services and loadtest into ./bin
	$(GO) build -o $(BIN)/ ./services/unbounded ./services/semaphore ./services/pipeline ./loadtest

.PHONY: pgcheck
pgcheck:
	@$(GO) run ./services/internal/testdb/pgcheck

.PHONY: test
test: $(BIN)/promtool pgcheck ## vet + go test -race against a real Postgres (TEST_DATABASE_URL)
	$(GO) vet ./...
	$(GO) test -race -count=1 ./...

.PHONY: fmt-check
fmt-check:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: check
check: fmt-check $(BIN)/staticcheck $(BIN)/govulncheck ## gofmt, vet, staticcheck, govulncheck, then test
	$(GO) vet ./...
	$(BIN)/staticcheck ./...
	$(BIN)/govulncheck ./...
	$(MAKE) test

.PHONY: run
run: build ## the three services on 127.0.0.1:8081-8083 (admin 9091-9093) against DATABASE_URL
	@trap 'kill 0' EXIT INT TERM; \
	DATABASE_URL='$(DATABASE_URL)' HTTP_ADDR=127.0.0.1:8081 ADMIN_ADDR=127.0.0.1:9091 $(BIN)/unbounded & \
	DATABASE_URL='$(DATABASE_URL)' HTTP_ADDR=127.0.0.1:8082 ADMIN_ADDR=127.0.0.1:9092 $(BIN)/semaphore & \
	DATABASE_URL='$(DATABASE_URL)' HTTP_ADDR=127.0.0.1:8083 ADMIN_ADDR=127.0.0.1:9093 $(BIN)/pipeline & \
	wait

## ---- loadtest (issue 3) ----

## ---- lab, e2e (issue 4) ----
