# rwq: `make conformance` runs the conformance suite against the reference Python client;
# `make test` runs lint, type checks, freshness checks and the whole test suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
OUT ?= conformance-out

.PHONY: all venv system-deps test test-python test-go go-adapter test-ts conformance-ts lint typecheck generate check-generated conformance conformance-go conformance-cluster mutants mutants-generated bench clean

all: test

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@rm -f $(VENV)/.installed-* && touch $@

venv: $(STAMP)

# The TypeScript package's dependencies, from its committed lockfile; again when the lockfile changes.
TS := typescript
TS_STAMP := $(TS)/node_modules/.installed-$(shell cksum < $(TS)/package-lock.json | cut -d' ' -f1)

$(TS_STAMP): $(TS)/package-lock.json
	cd $(TS) && npm ci --no-audit --no-fund --loglevel=error
	@rm -f $(TS)/node_modules/.installed-* && touch $@

system-deps:
	@bash tools/system-deps.sh

generate: venv
	$(PY) tools/generate.py

check-generated: venv
	$(PY) tools/generate.py --check

lint: venv
	$(VENV)/bin/ruff check python tests tools bench conformance/mutants
	$(VENV)/bin/ruff format --check python tests tools bench conformance/mutants

typecheck: venv
	$(VENV)/bin/mypy

test: test-python test-go test-ts conformance-ts conformance-cluster

# tests/test_interop_langs.py runs the Go and TypeScript clients too: the TypeScript package's
# dependencies are installed first when npm is there (its fixture compiles it; go build is cached).
TS_DEPS := $(if $(shell command -v npm),$(TS_STAMP))

test-python: venv system-deps check-generated lint typecheck $(TS_DEPS)
	$(VENV)/bin/pytest -q

# The Go module (go/): go vet, staticcheck when installed, its tests (they start their own
# redis-server), the README quickstart built as an outside project would, then the conformance
# suite against its adapter on one Redis, with profile declared-keys on (SPEC §20), and on a local
# Redis Cluster.
GO ?= go
GO_ADAPTER := $(abspath go/bin/rwq-conformance-adapter)
STATICCHECK ?= $(shell command -v staticcheck || ls "$$($(GO) env GOPATH 2>/dev/null)/bin/staticcheck" 2>/dev/null)

test-go: venv system-deps check-generated
	cd go && $(GO) vet ./...
	@if [ -n "$(STATICCHECK)" ]; then echo "cd go && staticcheck ./..."; cd go && $(STATICCHECK) ./...; \
	else echo "staticcheck not installed, skipped (go install honnef.co/go/tools/cmd/staticcheck@latest)"; fi
	cd go && $(GO) test -count=1 ./...
	bash go/scripts/quickstart_test.sh
	$(MAKE) conformance-go

go-adapter:
	cd go && $(GO) build -o bin/rwq-conformance-adapter ./cmd/rwq-conformance-adapter

conformance-go: venv system-deps go-adapter
	$(VENV)/bin/rwq conformance --adapter "$(GO_ADAPTER)" --out $(OUT)-go
	$(VENV)/bin/rwq conformance --declared-keys --adapter "$(GO_ADAPTER)" --out $(OUT)-go-declared
	$(VENV)/bin/rwq conformance --cluster --adapter "$(GO_ADAPTER)" --out $(OUT)-go-cluster

# The TypeScript package: strict tsc, then its tests (node:test) against the redis-server and the
# 3-master cluster they start (README examples included). About 30 s.
test-ts: venv system-deps check-generated $(TS_STAMP)
	cd $(TS) && npm test

# The conformance suite against the TypeScript adapter: plain, with profile declared-keys on, and on
# a local Redis Cluster. About 3 minutes.
TS_ADAPTER := node $(abspath $(TS)/dist/bin/rwq-conformance-adapter.js)
conformance-ts: venv system-deps $(TS_STAMP)
	cd $(TS) && npx tsc -p tsconfig.json
	$(VENV)/bin/rwq conformance --adapter "$(TS_ADAPTER)" --out $(OUT)-ts
	$(VENV)/bin/rwq conformance --declared-keys --adapter "$(TS_ADAPTER)" --out $(OUT)-ts-declared
	$(VENV)/bin/rwq conformance --cluster --adapter "$(TS_ADAPTER)" --out $(OUT)-ts-cluster

# The mutation audit: every mutant of the ledger (conformance/audit/) must fail the case it names,
# and the reference must pass them all. Prints caught K/N; fails below 100 %. About 6 minutes, so it
# is a CI step of its own (.ci/run) rather than part of make test.
mutants: venv system-deps
	$(PY) tools/mutants.py

# Generated mutants (tools/pymutate.py, tools/gomutate): every mutant of the Python protocol layer
# and of the Go client against the suite in fast mode, results in conformance/audit/generated/.
# Prints killed/survived/equivalent; fails when a survivor has no verdict. INCREMENTAL=1 runs only
# the mutants new or changed since the ledger (after an edit of the protocol layer or go/).
mutants-generated: venv system-deps
	nice -n 19 $(PY) tools/generated_mutants.py --jobs $(or $(JOBS),2) $(if $(INCREMENTAL),--incremental)

# Then every case again with profile declared-keys on (SPEC §20): each script call must pass every
# key its script touches in KEYS (the generated programs of property/ and workload/ run once).
# The two passes run at the same time (each on its own servers, --jobs = the CPU count); the
# declared-keys pass's output (OUT-declared/terminal.log) follows the plain one's, and the target
# fails if either pass does. About 95 s of CPU in all, so under a minute on 2 otherwise idle
# cores (118 s wall on a machine loaded 7-10 by other work, where the two passes one after the
# other took 322 s).
REFERENCE_ADAPTER := $(abspath $(PY)) -m rwq.conformance.reference_adapter
conformance: venv system-deps
	@mkdir -p $(OUT)-declared; \
	$(VENV)/bin/rwq conformance --declared-keys --adapter "$(REFERENCE_ADAPTER)" --out $(OUT)-declared \
		> $(OUT)-declared/terminal.log 2>&1 & declared=$$!; \
	$(VENV)/bin/rwq conformance --adapter "$(REFERENCE_ADAPTER)" --out $(OUT); plain=$$?; \
	wait $$declared; status=$$?; cat $(OUT)-declared/terminal.log; \
	[ $$plain -eq 0 ] && [ $$status -eq 0 ]

# The same suite against a local 3-master Redis Cluster the runner starts (cases of group cluster too).
conformance-cluster: venv system-deps
	$(VENV)/bin/rwq conformance --cluster --adapter "$(REFERENCE_ADAPTER)" --out $(OUT)-cluster

# rwq side by side with raw redis-py, Streams, redis-work-queue 0.1.5, bullmq and rq, on one Redis;
# ratios within one run (BENCH_ARGS=--quick for a smoke run). Never part of make test.
bench: venv system-deps
	$(PY) -m pip install -q -e '.[bench]'
	$(PY) -m bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) $(OUT) conformance-out-generated $(OUT)-go $(OUT)-cluster $(OUT)-go-cluster $(OUT)-declared $(OUT)-go-declared go/bin $(OUT)-ts $(OUT)-ts-declared $(OUT)-ts-cluster $(TS)/node_modules $(TS)/dist .mypy_cache .ruff_cache .pytest_cache .hypothesis dist build
