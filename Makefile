# ckgate — make targets. Recipes run in one bash shell each, with -euo pipefail.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.ONESHELL:
.DEFAULT_GOAL := build

GO           ?= go
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS      := -X main.version=$(VERSION)
TEST_TIMEOUT ?= 50m
BENCHTIME    ?= 1s
FUZZTIME     ?= 10s
FUZZMINIMIZETIME ?= 5s
SOAK_RUNS    ?= 50
SOAK_WIRE_RUNS ?= 6
DEMO_DIR     := demo
PKGS         ?= ./...

.PHONY: build tools test soak bench fuzz lint demo man clean

## build: the ckgate binary in bin/, with the version stamped in (the first build compiles the cloud SDKs and OPA: minutes; -v names each package)
build:
	@echo "building bin/ckgate: $(GO) build -v -ldflags '$(LDFLAGS)' -o bin/ckgate ./cmd/ckgate"
	echo "(the first build compiles the AWS, GCS and Azure SDKs and OPA and takes a few minutes; later ones take seconds)"
	$(GO) build -v -ldflags '$(LDFLAGS)' -o bin/ckgate ./cmd/ckgate

## tools: the pinned storage emulators (versitygw, fake-gcs-server, Azurite) in .tools/
tools:
	bash scripts/install-tools.sh

## test: every test with the race detector, against the real emulators
test: tools
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)

## soak: the process-level reliability tests at length, without the race detector (make test runs them with it, 2 runs per cell, 1 per wire cell): SOAK_RUNS runs per cell of the SIGKILL matrix (local disk, S3 on versitygw and S3 through ckgate serve over a local dir, each with the file, the http and the Delta sink; and ckgate serve itself SIGKILLed and restarted under the engine, cells serve-killed/http and serve-killed/delta) and the concurrent-writer rounds, SOAK_WIRE_RUNS runs per wire-fault cell (S3, GCS, Azure through the fault proxy: 5% of store requests faulted, SIGKILLs on top, each run with the http and with the Delta sink; goal >= 500 faults per cloud), then the table of runs, kills, requests, faults by kind, ambiguous outcomes resolved, ErrUnknownOutcome, lost, duplicated (lost and duplicated must be 0)
soak: tools
	@report=$$(mktemp "$${TMPDIR:-/tmp}/ckgate-soak.XXXXXX")
	trap 'rm -f "$$report"' EXIT
	echo "CKGATE_SOAK_RUNS=$(SOAK_RUNS) CKGATE_SOAK_WIRE_RUNS=$(SOAK_WIRE_RUNS) CKGATE_SOAK_REPORT=$$report $(GO) test -run 'Soak|SIGKILL|ConcurrentWriters' -count=1 -timeout 120m ./cmd/ckgate/"
	status=0
	CKGATE_SOAK_RUNS=$(SOAK_RUNS) CKGATE_SOAK_WIRE_RUNS=$(SOAK_WIRE_RUNS) CKGATE_SOAK_REPORT="$$report" $(GO) test -run 'Soak|SIGKILL|ConcurrentWriters' -count=1 -timeout 120m ./cmd/ckgate/ || status=$$?
	echo
	sed -E 's/^\{//; s/\}$$//; s/"//g; s/,/  /g' "$$report"
	exit $$status

## bench: every benchmark, then the summary table (NAME VALUE UNIT GOAL); fails on a missed goal
bench: tools
	@summary=$$(mktemp "$${TMPDIR:-/tmp}/ckgate-bench.XXXXXX")
	trap 'rm -f "$$summary"' EXIT
	echo "CKGATE_BENCH_SUMMARY=$$summary $(GO) test -run '^\$$' -bench . -benchtime $(BENCHTIME) $(PKGS)"
	CKGATE_BENCH_SUMMARY="$$summary" $(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -count 1 -timeout $(TEST_TIMEOUT) $(PKGS)
	echo "CKGATE_BENCH_SUMMARY=$$summary $(GO) test -count=1 ./gateway/wiretest/   # the wire-fault rows (wire_*): the SDKs' retries through the fault proxy, per cloud"
	CKGATE_BENCH_SUMMARY="$$summary" $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./gateway/wiretest/
	echo
	$(GO) run ./cmd/benchsum "$$summary"

## fuzz: every Fuzz target in the repository for FUZZTIME each (found by grep, so new ones run too), then executions per target and the total
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) bash scripts/fuzz-summary.sh

## lint: gofmt must list nothing, go vet must pass
lint:
	@unformatted=$$(find . -name '*.go' -not -path './.git/*' -not -path './.tools/*' -not -path './$(DEMO_DIR)/*' -print0 | xargs -0 gofmt -l)
	if [ -n "$$unformatted" ]; then echo "gofmt -l lists:"; echo "$$unformatted"; exit 1; fi
	echo "$(GO) vet ./..."
	$(GO) vet ./...

## man: the man page man/ckgate.1, made from the command definitions (ckgate docs man)
man: build
	@echo "\$$ ckgate docs man man"
	bin/ckgate docs man man

## demo: sessionize a generated clickstream (late and duplicate events) with the embedded engine on the local disk; run it twice: the second run finds nothing new and appends nothing
demo: build
	@mkdir -p $(DEMO_DIR)
	echo "generating the demo clickstream (compiling the generator first)"
	echo "\$$ go run ./testdata/events/gen $(DEMO_DIR)/clickstream"
	$(GO) run ./testdata/events/gen $(DEMO_DIR)/clickstream
	echo "\$$ ckgate run --checkpoint $(DEMO_DIR)/checkpoint --available-now --format text testdata/specs/clickstream-sessions.yaml"
	bin/ckgate run --checkpoint $(DEMO_DIR)/checkpoint --available-now --format text testdata/specs/clickstream-sessions.yaml
	echo

## clean: remove build output and the demo checkpoint (not the installed tools)
clean:
	rm -rf bin man $(DEMO_DIR)
