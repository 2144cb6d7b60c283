# mrtrkit build targets. `make test` is the one command that runs every test.
GO ?= go

.PHONY: test vet fmt-check unit fuzz-brief otel redis browser conformance client-conformance interop affinity production bench run

# Every test: formatting, vet, the race-enabled unit and wire tests, the
# OpenTelemetry module, a browser calling across origins, the official MCP
# conformance suite, real clients from other SDKs, two replicas behind
# nginx with session affinity, the fixture wired for production, and three
# replicas sharing Redis behind round-robin nginx.
test: fmt-check vet unit fuzz-brief otel redis browser conformance client-conformance interop affinity production scaleout scaleout-conformance

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 ./...

# The OpenTelemetry integration, a module of its own that ./... does not enter.
otel:
	cd otel && $(GO) vet ./... && $(GO) test -race -count=1 ./...

# The Redis share.Bus, a module of its own that ./... does not enter; its
# tests start redis-server on a loopback port (installed from Debian
# packages when missing).
redis:
	cd redis && $(GO) vet ./... && $(GO) test -race -count=1 ./...

# Every fuzz target for a few seconds (scripts/fuzz.sh 5m for a longer run).
fuzz-brief:
	bash scripts/fuzz.sh 2s

# A cross-origin call from headless Chromium (installs chromium from Debian
# packages when missing).
browser:
	bash conformance/browser/run.sh

# The official MCP conformance suite (2026-07-28) against the fixture server.
conformance:
	bash conformance/run.sh

# The official suite's client scenarios (2026-07-28 and 2025-11-25)
# against conformance/cmd/clientfixture, built on package client.
client-conformance:
	bash conformance/client-run.sh

# The official Go SDK and TypeScript SDK clients against the fixture server.
interop:
	bash conformance/interop/run.sh

# Two fixture replicas behind nginx, hashing Mcp-Session-Id (the recipe in
# docs/deployment.md); installs nginx from Debian packages when missing.
affinity:
	bash conformance/affinity/run.sh

# The fixture wired as a deployment wires it (OpenTelemetry, OAuth bearer
# tokens from a JWK set, RFC 9728 metadata, per-caller visibility, CORS,
# health probes, audit log and counter), all at once, with the official
# suite and the interop clients run against it with a valid token.
production:
	bash conformance/production/run.sh

run:
	$(GO) run ./examples/summarize_repo

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Three replicas sharing a real redis-server behind nginx with round-robin
# balancing and no affinity (the recipe of docs/deployment.md): modern and
# 2025-11-25 multi-round calls across replicas, list changes, single-use
# states, a key ring rotated mid-run, Redis down and back, a replica
# killed mid-call. Installs redis-server and nginx from Debian packages
# when missing. About 40 s, so part of `make test`.
.PHONY: scaleout scaleout-conformance scaleout-bench
scaleout:
	bash redis/scaleout/run.sh

# The official suite (both requirement sets and every tasks-* scenario)
# through round-robin nginx in front of three fixture replicas sharing
# Redis: a deployment passes what a single process passes. About 75 s.
scaleout-conformance:
	bash redis/scaleout/run.sh conformance

# Throughput with one and three replicas behind nginx, and the latency the
# Redis paths add (not part of `make test`).
scaleout-bench:
	bash redis/scaleout/run.sh bench
