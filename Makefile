# Taskweave's developer entry points. `make run` and `make test` are all a new machine
# needs besides Go: scripts/pg.sh finds or starts a Postgres (see README.md).
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO ?= go
BIN := bin/taskweave

.PHONY: help build run migrate test bench fmt vet pg-stop

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

build: ## build bin/taskweave
	$(GO) build -o $(BIN) ./cmd/taskweave

run: build ## migrate and run API + workers on :8080 (TW_HTTP_ADDR), Postgres from scripts/pg.sh
	@scripts/run.sh all

migrate: build ## apply the migrations to TW_DATABASE_URL (or the scripts/pg.sh database)
	@scripts/run.sh migrate

test: ## run every test (and the Helm chart's, deploy/helm) against real Postgres (scripts/pg.sh), headless Chromium (scripts/chromium.sh), Node (scripts/node-deps.sh), Prometheus (scripts/prometheus.sh) and Dovecot (scripts/dovecot.sh)
	@url=$$(scripts/pg.sh test | tail -n 1); export TW_TEST_DATABASE_URL=$$url; \
	chromium=$$(scripts/chromium.sh | tail -n 1); export TW_CHROMIUM=$$chromium TW_REQUIRE_BROWSER=1; \
	prometheus=$$(scripts/prometheus.sh | tail -n 1); export TW_PROMETHEUS=$$prometheus TW_REQUIRE_PROMETHEUS=1; \
	dovecot=$$(scripts/dovecot.sh | tail -n 1); export TW_DOVECOT=$$dovecot TW_REQUIRE_DOVECOT=1; \
	scripts/node-deps.sh >/dev/null; export TW_REQUIRE_NODE=1 TW_REQUIRE_PG_TOOLS=1; \
	echo "go test ./... (TW_TEST_DATABASE_URL=$$TW_TEST_DATABASE_URL, TW_CHROMIUM=$$TW_CHROMIUM)"; \
	$(GO) test -count=1 -timeout 15m ./... 2>&1 | { grep -v 'no test files' || true; }; \
	echo "go test ./... in deploy/helm (the Helm chart, a module of its own)"; \
	cd deploy/helm && $(GO) test -count=1 -timeout 10m ./... 2>&1 | { grep -v 'no test files' || true; }

bench: ## Go benchmarks of domain/ and api/, then the ./bench load generator when present
	@url=$$(scripts/pg.sh test | tail -n 1); export TW_TEST_DATABASE_URL=$$url; \
	$(GO) test -count=1 -run '^$$' -bench . -benchmem ./domain/... ./api/... 2>&1 | { grep -v 'no test files' || true; }; \
	if [ "$$($(GO) list -f '{{.Name}}' ./bench 2>/dev/null)" = main ]; then \
		$(GO) run ./bench; \
	else \
		echo "bench: no main package in ./bench yet, skipped"; \
	fi

fmt: ## gofmt every Go file
	$(GO) fmt ./...

vet: ## go vet
	$(GO) vet ./...

pg-stop: ## stop the private Postgres under .data/pg (if scripts/pg.sh started one)
	@scripts/pg.sh stop
