# ckgate — make targets. Recipes run in one bash shell each, with -euo pipefail.
SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.ONESHELL:
.DEFAULT_GOAL := build

GO           ?= go
VERSION      ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS      := -X main.version=$(VERSION)
TEST_TIMEOUT ?= 30m
BENCHTIME    ?= 1s
FUZZTIME     ?= 10s
DEMO_DIR     := demo
PKGS         ?= ./...

.PHONY: build tools test bench fuzz lint demo clean

## build: the ckgate binary in bin/, with the version stamped in
build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/ckgate ./cmd/ckgate

## tools: the pinned storage emulators (versitygw, fake-gcs-server, Azurite) in .tools/
tools:
	bash scripts/install-tools.sh

## test: every test with the race detector, against the real emulators
test: tools
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)

## bench: every benchmark, then the summary table (NAME VALUE UNIT GOAL); fails on a missed goal
bench: tools
	@summary=$$(mktemp "$${TMPDIR:-/tmp}/ckgate-bench.XXXXXX")
	trap 'rm -f "$$summary"' EXIT
	echo "CKGATE_BENCH_SUMMARY=$$summary $(GO) test -run '^\$$' -bench . -benchtime $(BENCHTIME) $(PKGS)"
	CKGATE_BENCH_SUMMARY="$$summary" $(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -count 1 -timeout $(TEST_TIMEOUT) $(PKGS)
	echo
	$(GO) run ./cmd/benchsum "$$summary"

## fuzz: every Fuzz target in the repository for FUZZTIME each (found by grep, so new ones run too)
fuzz:
	@targets=$$(grep -rEo --include='*_test.go' --exclude-dir=.git --exclude-dir=.tools --exclude-dir=$(DEMO_DIR) \
		'^func Fuzz[A-Za-z0-9_]*\(' . | sed -E 's/^(.*)\/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($$/\1 \2/' | sort -u || true)
	if [ -z "$$targets" ]; then echo "no fuzz targets found"; exit 0; fi
	while read -r dir name; do
		echo "== $$dir $$name ($(FUZZTIME))"
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) "$$dir"
	done <<< "$$targets"

## lint: gofmt must list nothing, go vet must pass
lint:
	@unformatted=$$(find . -name '*.go' -not -path './.git/*' -not -path './.tools/*' -not -path './$(DEMO_DIR)/*' -print0 | xargs -0 gofmt -l)
	if [ -n "$$unformatted" ]; then echo "gofmt -l lists:"; echo "$$unformatted"; exit 1; fi
	echo "$(GO) vet ./..."
	$(GO) vet ./...

## demo: sessionize a generated clickstream (late and duplicate events) with the embedded engine on the local disk; run it twice: the second run finds nothing new and appends nothing
demo: build
	@mkdir -p $(DEMO_DIR)
	echo "\$$ go run ./testdata/events/gen $(DEMO_DIR)/clickstream"
	$(GO) run ./testdata/events/gen $(DEMO_DIR)/clickstream
	echo "\$$ ckgate run --checkpoint $(DEMO_DIR)/checkpoint --available-now --format text testdata/specs/clickstream-sessions.yaml"
	bin/ckgate run --checkpoint $(DEMO_DIR)/checkpoint --available-now --format text testdata/specs/clickstream-sessions.yaml
	echo

## clean: remove build output and the demo checkpoint (not the installed tools)
clean:
	rm -rf bin $(DEMO_DIR)
