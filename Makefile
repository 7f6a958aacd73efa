# apistack: `make run` runs every API on its embedded default; `make test` runs the tests.
GO        ?= go
TOOLS     := $(CURDIR)/.tools
SPECTRAL_VERSION := 6.16.3
SPECTRAL  := $(TOOLS)/node_modules/.bin/spectral
PRISM_VERSION := 5.16.0
PRISM     := $(TOOLS)/node_modules/.bin/prism
SPECS     := $(wildcard specs/*/openapi.yaml) $(wildcard specs/*/webhooks.yaml)
# A count of executions, not a duration: with a duration, Go 1.26's fuzz
# coordinator can report "context deadline exceeded" as a failure when the time
# runs out while a worker is busy (golang/go#75804, fixed in Go 1.27), which a
# loaded CI machine hits at random. 25,000 executions take 1 to 6 s per target here.
FUZZTIME  ?= 25000x
# tools/breaking is its own module (oasdiff and its dependencies stay out of
# the main module's graph); its go.sum is committed, CI builds it -mod=readonly.
BREAKING_DIR := tools/breaking
STATICCHECK_VERSION = $(shell $(GO) list -m -f '{{.Version}}' honnef.co/go/tools)

.PHONY: all cover spec-loop generate check-generated lint fmt-check tidy-check vet staticcheck spectral prism test fuzz bench run build tools breaking changelog changelog-check

all: check-generated lint test

## generate: regenerate gen/ (and GENERATED_ELSEWHERE) from specs/ in one process (tools/generate
## runs every //go:generate line; `go generate ./...` does the same, one `go run` per line)
generate:
	$(GO) run ./tools/generate

# GENERATED_ELSEWHERE: the generated files outside gen/ (go generate writes
# them beside the table they come from); tools/generate regenerates their
# directories too.
GENERATED_ELSEWHERE := servers/restaurant/handlers_gen.go specs/sandbox/fixture.schema.json

## check-generated: regenerate into a temporary directory and fail naming each file of gen/ (or
## GENERATED_ELSEWHERE) that differs: passes on freshly generated code not committed yet
check-generated:
	$(GO) run ./tools/generate -check

## lint: gofmt, go mod tidy (nothing to change), go vet, staticcheck and spectral (spectral:oas) on every spec
lint: fmt-check tidy-check vet staticcheck spectral

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go') 2>&1); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# tidy-check: go.mod and go.sum say exactly what the code imports (go mod tidy would change nothing)
tidy-check:
	$(GO) mod tidy -diff
	cd $(BREAKING_DIR) && $(GO) mod tidy -diff

vet:
	$(GO) vet ./...
	cd $(BREAKING_DIR) && $(GO) vet ./...

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck ./...
	cd $(BREAKING_DIR) && $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

$(SPECTRAL):
	mkdir -p $(TOOLS)
	cd $(TOOLS) && [ -f package.json ] || echo '{"private":true}' > $(TOOLS)/package.json
	cd $(TOOLS) && npm install --no-audit --no-fund --loglevel=error @stoplight/spectral-cli@$(SPECTRAL_VERSION)

spectral: $(SPECTRAL)
	$(SPECTRAL) lint --ruleset .spectral.yaml --fail-severity error $(SPECS)

## prism: install the pinned Prism CLI into .tools (the conformance tests run `prism mock` on each spec)
prism: $(PRISM)

$(PRISM):
	mkdir -p $(TOOLS)
	cd $(TOOLS) && [ -f package.json ] || echo '{"private":true}' > $(TOOLS)/package.json
	cd $(TOOLS) && npm install --no-audit --no-fund --loglevel=error @stoplight/prism-cli@$(PRISM_VERSION)

# TEST_TIMEOUT: how long one package's tests may run; go test's default (10m)
# is short for the largest packages on a slow or busy two-core machine.
TEST_TIMEOUT ?= 30m

# HEAP_TESTS: the tests that measure the heap over tens of MiB of documents,
# which skip under the race detector (heaptest.RaceEnabled: it makes them take
# minutes); test runs them without it, on both backends.
HEAP_TESTS := ^TestImportPeakHeapIsBounded$$
HEAP_TEST_PKGS := ./servers/admin/

## test: every test with the race detector, then the server and client tests
## again on PostgreSQL (APISTACK_TEST_BACKEND=postgres; the replica tests, on
## PostgreSQL in both runs, only once), then the contract coverage of both
## runs (every declared (operation, status) pair, and every response property
## and header, produced, or listed in testdata/contract/unreachable.yaml; it
## prints each API's figures), the example module's tests
## (examples/consumer, its own go.mod, with -mod=readonly so a stale go.mod/go.sum fails, against
## the test kit in process, then against `apistack serve --demo` through apistacktest.Connect:
## examples/consumer/against-serve.sh), tools/breaking (its own go.mod), and each fuzz target briefly;
## the heap tests of large documents (HEAP_TESTS) run without -race, on both backends
test:
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && set -x && \
	APISTACK_CONTRACT_COVERAGE_DIR=$$dir $(GO) test -race -count=1 -timeout=$(TEST_TIMEOUT) ./... && \
	APISTACK_CONTRACT_COVERAGE_DIR=$$dir APISTACK_TEST_BACKEND=postgres $(GO) test -race -count=1 -timeout=$(TEST_TIMEOUT) $$($(GO) list ./servers/... ./clients/... | grep -v /cmd/apistack/replicas$$) && \
	APISTACK_CONTRACT_COVERAGE_DIR=$$dir $(GO) test -count=1 -tags contractcoverage -run '^TestContractCoverage$$' -v ./internal/contractcoverage/
	$(GO) test -count=1 -run '$(HEAP_TESTS)' $(HEAP_TEST_PKGS)
	APISTACK_TEST_BACKEND=postgres $(GO) test -count=1 -run '$(HEAP_TESTS)' $(HEAP_TEST_PKGS)
	cd examples/consumer && GOFLAGS=-mod=readonly $(GO) test -race -count=1 ./...
	GO=$(GO) examples/consumer/against-serve.sh
	cd $(BREAKING_DIR) && $(GO) test -race -count=1 ./...
	$(MAKE) fuzz

## cover: one API's server tests (SQLite; BACKEND=postgres for PostgreSQL) and then its contract
## coverage: every (operation, status) pair and every response field its spec declares was produced by
## them, or is listed in testdata/contract/unreachable.yaml with the reason (docs/maintaining-specs.md)
# COVER_PKGS_<api>: the tests that produce an API's responses, when more than
# its server's (the fax webhook receiver's answers come from the fax client's
# end-to-end tests); COVER_APIS_<api>: the coverage records it checks.
COVER_PKGS_fax  := ./servers/fax/... ./e2e/fax/...
COVER_APIS_fax  := fax|faxwebhooks
COVER_PKGS = $(or $(COVER_PKGS_$(API)),./servers/$(API)/...)
COVER_APIS = $(or $(COVER_APIS_$(API)),$(API))
COVER_KNOWN := pam fax storage restaurant admin sandbox
BACKEND ?= sqlite
cover:
	@if [ -z "$(filter $(API),$(COVER_KNOWN))" ] || [ "$(words $(API))" != 1 ]; then \
		echo "usage: make cover API=<$(subst $(eval) ,|,$(COVER_KNOWN))> [BACKEND=postgres]"; exit 2; fi
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && set -x && \
	APISTACK_CONTRACT_COVERAGE_DIR=$$dir APISTACK_TEST_BACKEND=$(BACKEND) $(GO) test -count=1 $(COVER_PKGS) && \
	APISTACK_CONTRACT_COVERAGE_DIR=$$dir APISTACK_COVER_SCOPE='$(COVER_PKGS)' $(GO) test -count=1 -tags contractcoverage \
		-run '^TestContractCoverage$$/^($(COVER_APIS))$$' -v ./internal/contractcoverage/

## spec-loop: the maintainer's loop end to end, on a scratch checkout of HEAD (minutes: CI runs it
## once): docs/maintaining-specs.md's commands as written, then a table of spec edits (a field, an enum
## value, a header, an operation, a role of an operation), each generated but not committed, through check-generated and cover
spec-loop:
	APISTACK_SPEC_LOOP=1 $(GO) test -count=1 -timeout 30m -v ./internal/specloop/

## breaking: compare every spec at BASE (a git revision) with the work tree; fail on a change
## that breaks consumers unless that spec's info.version has a new major version (oasdiff)
breaking:
	@if [ -z "$(BASE)" ]; then echo "usage: make breaking BASE=<git rev> (CI: HEAD~1; a pull request: its merge base)"; exit 2; fi
	cd $(BREAKING_DIR) && $(GO) run . check --base "$(BASE)" --root "$(CURDIR)"

## changelog: write specs/<api>/CHANGELOG.md (and specs/fax/WEBHOOKS-CHANGELOG.md) from each spec's
## history, one entry per info.version; changelog-check fails when a committed one is stale
changelog:
	cd $(BREAKING_DIR) && $(GO) run . changelog --root "$(CURDIR)"

changelog-check:
	cd $(BREAKING_DIR) && $(GO) run . changelog --check --root "$(CURDIR)"

## fuzz: run every fuzz target for FUZZTIME each (executions, or a duration such as 30s)
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
		for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/func //'); do \
			echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
			$(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

## bench: every benchmark
bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=1 ./...

## run: every API on its own port with demo tenants (credentials in data/demo-credentials.json)
run:
	@echo '# make run: building bin/apistack (the first build compiles every dependency: minutes on a cold cache; go build -v lists each package as it compiles)'
	$(GO) build -v -o bin/apistack ./servers/cmd/apistack
	bin/apistack serve --demo

## build: the binary, bin/apistack
build:
	$(GO) build -o bin/apistack ./servers/cmd/apistack

## bench-http: the HTTP benchmark harness, which checks the performance targets: each API beside a bare echo ceiling and Prism's mock, in
## interleaved rounds; writes BENCHMARKS.md (minutes; e.g. BENCHHTTP_FLAGS="-duration 2s -rounds 1 -scenarios pam-list")
.PHONY: bench-http
BENCHHTTP_FLAGS ?=
bench-http: $(PRISM)
	$(GO) run ./bench/cmd/benchhttp $(BENCHHTTP_FLAGS)

## image: the container image IMAGE (default apistack:dev) with podman, or docker when podman is
## missing (ENGINE=docker to choose): the binary is compiled here (deploy/rootfs.sh), so no base
## image is pulled; with network access `docker build -f Containerfile .` compiles it in a Go stage
.PHONY: image
IMAGE  ?= apistack:dev
ENGINE ?= $(shell command -v podman >/dev/null 2>&1 && echo podman || echo docker)
image:
	GO=$(GO) deploy/rootfs.sh bin/image/rootfs
	$(ENGINE) build -f Containerfile --build-arg ROOTFS=prebuilt -t $(IMAGE) .
