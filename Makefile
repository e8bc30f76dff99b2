# aep-hook: make build | install | test | bench | demo | fuzz | lint | cross | real
GO      ?= go
SHARED  ?= ../shared
PINS    := $(SHARED)/aep-spec/conformance/fixtures/mappings
BIN     := bin/aep-hook
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
FUZZTIME ?= 20s
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

# The conformance suite reads the upstream pins in place (never copied).
ifneq ($(wildcard $(PINS)),)
export AEP_CONFORMANCE_DIR := $(abspath $(PINS))
export AEP_SCHEMA_DIR := $(abspath $(SHARED)/aep-spec/schemas)
export AEP_OTLP_PINS := $(abspath $(SHARED)/aep-spec/conformance/fixtures/otlp)
endif

.PHONY: build build-grpc test bench demo fuzz lint cross clean real

# Static (CGO_ENABLED=0): kong's os/user and net's resolver would otherwise
# link libc, and every hook process would pay the dynamic loader (about a
# millisecond, half of a Go program's whole start).
#
# Two builds, one file: the full binary (./cmd/aep-hook, what go install
# gives) is placed inside the hook-only build (./cmd/aep-hook/hookonly,
# which links only the hook path so a hook starts like a minimal Go
# program, and runs the full binary for every other verb). $(BIN) is the
# hook-only build; $(BIN)-full is the full one alone.
FULL_EMBED := cmd/aep-hook/hookonly/aep-hook.full
SHA256 := $(shell command -v sha256sum 2>/dev/null || echo shasum -a 256)

# The hook-only build is linked to a side file and copied into place: the
# linker writes through a memory map, and a file written so is slower to
# map into every process that runs it while it stays in the page cache
# (measured on Linux 6.x: about a fifth of a hook's time) than a copy.
define build_pair
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(2)-full ./cmd/aep-hook
	cp $(2)-full $(FULL_EMBED)
	CGO_ENABLED=0 $(GO) build -trimpath -tags aepfull \
	  -ldflags "$(LDFLAGS) -X main.fullSum=$$($(SHA256) $(FULL_EMBED) | awk '{print $$1}')" -o $(2).link ./cmd/aep-hook/hookonly
	rm -f $(FULL_EMBED)
	cp $(2).link $(2).new && mv -f $(2).new $(2) && rm -f $(2).link
endef
build:
	$(call build_pair,,$(BIN))

# Puts the binary where it will stay, $(PREFIX)/bin/aep-hook (default
# ~/.local/bin, made when missing): `aep-hook install` registers the binary
# it runs from by absolute path, so that path must outlive the checkout.
# Replaced by a rename, so a hook starting meanwhile runs the old binary or
# the new one, never half of one.
PREFIX ?= $(HOME)/.local
.PHONY: install
install: build
	@mkdir -p "$(PREFIX)/bin"
	@cp $(BIN) "$(PREFIX)/bin/.aep-hook.new" && chmod 0755 "$(PREFIX)/bin/.aep-hook.new" && mv -f "$(PREFIX)/bin/.aep-hook.new" "$(PREFIX)/bin/aep-hook"
	@echo "installed $(PREFIX)/bin/aep-hook"

# The second build: adds OTLP/gRPC to `aep-hook otel`. Kept out of the
# default binary because linking gRPC slows every hook process's start.
build-grpc:
	CGO_ENABLED=0 $(GO) build -trimpath -tags grpc -ldflags '$(LDFLAGS)' -o bin/aep-hook-grpc ./cmd/aep-hook

# Unit, conformance, process and fuzz-seed tests, under the race detector,
# then the per-vendor conformance report.
test:
	$(GO) test -race -count=1 -timeout 30m ./...
	$(GO) test -count=1 -tags grpc ./adapters/otlp/
	@$(GO) test -count=1 -run '^TestConformance$$' -v ./mapping/ | grep '^conformance:' || true

# Re-record the real-agent sessions (installs the pinned agent CLIs from the
# npm registry into $AEP_REAL_CACHE, default ~/.cache/aep-hook/realagents), then
# replay every recorded fixture; prints per agent "scenarios passed/total".
# AGENT=name and SCENARIO=name narrow it; the tees' real peers (ACP SDK
# client with qwen --acp and the SDK's example agent, AG-UI client and
# encoder server) are recorded too unless AGENT is given; PEER=name
# (qwen-code-0.24.4, acp-example-agent, agui, ...) records only those. The
# OpenCode and Kilo servers (AGENT=opencode|kilocode) are recorded through
# the stream bridge and aep-hook's forwarder plugin by busrecord.
# AGENT=codex-otel records Codex's OTel log export through `aep-hook otel`
# (a recording proxy in front of the real sidecar), the hooks beside it.
# Every stage runs even when an earlier one found a false record; the
# target fails at the end if any did.
# LATEST=1 is the drift check: every hook agent, ACP peer and bus server at its
# newest published version (the pins and fixtures stay), recorded into a
# folder of its own; per agent what changed in the payloads against the
# pinned recordings (moments, fields per moment, tools offered), then the
# truth checks on the new recordings. A newest version that does not
# install is reported and the pin stays.
real:
	@rc=0; \
	$(if $(PEER),,$(GO) build -o bin/realagents ./harness/realagents/cmd/realagents && \
	  bin/realagents record $(if $(LATEST),-latest) $(if $(AGENT),-agent $(AGENT)) $(if $(SCENARIO),-scenario $(SCENARIO)) || rc=1;) \
	$(if $(AGENT),,$(GO) build -o bin/realtees ./harness/realagents/tees/cmd/realtees && \
	  bin/realtees record $(if $(LATEST),-latest) $(if $(PEER),-peer $(PEER)) $(if $(SCENARIO),-scenario $(SCENARIO)) || rc=1;) \
	$(if $(PEER),,$(GO) run ./harness/realagents/bus/cmd/busrecord $(if $(LATEST),-latest) $(if $(AGENT),-agent $(AGENT)) $(if $(SCENARIO),-scenario $(SCENARIO)) || rc=1;) \
	exit $$rc

bench: build
	$(GO) run ./harness/bench -bin $(BIN)

demo: build
	$(GO) run ./harness/demo -bin $(BIN)

# Every fuzz target, briefly (FUZZTIME each); seeds already run in `make test`.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg; \
	  done; \
	done

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags grpc ./adapters/otlp/ ./cmd/aep-hook/

# Each platform's full binary inside its hook-only build, as make build.
cross:
	@set -e; mkdir -p bin/cross; for p in $(PLATFORMS); do \
	  echo "build $$p"; export GOOS=$${p%/*} GOARCH=$${p#*/} CGO_ENABLED=0; \
	  $(GO) build -trimpath -o bin/cross/aep-hook-full ./cmd/aep-hook; \
	  cp bin/cross/aep-hook-full $(FULL_EMBED); \
	  $(GO) build -trimpath -tags aepfull -o bin/cross/aep-hook-$${GOOS}-$${GOARCH} ./cmd/aep-hook/hookonly; \
	  rm -f $(FULL_EMBED) bin/cross/aep-hook-full; \
	done

clean:
	rm -rf bin
