#!/usr/bin/env bash
# Wires every production piece at once in the fixture server and runs the
# official MCP conformance suite and the interop clients against it with a
# valid token (see main.go in this directory for what is checked):
#
#   1. builds the OpenTelemetry module's otelfixture (the fixture server of
#      conformance/server with the otelmrtr interceptor added), so that the
#      core module keeps no OpenTelemetry dependency;
#   2. runs the harness (conformance/production, main.go), which makes a
#      signing key and a requestState key ring at run time, starts an issuer
#      serving the JWK set and the fixture with -production, checks the
#      wiring, runs conformance/run.sh (the suite's CLI sending the suite's
#      token through bearer.cjs) and the Go, TypeScript v2 and TypeScript v1
#      clients' HTTP interop tests (sending a token of their own), and checks
#      the counter, the audit log, the spans and the metrics once the
#      fixture has stopped.
#
# Needs what conformance/run.sh and conformance/interop/run.sh need: Go,
# curl, Node >= 20 with npm (npx fetches Node 22 and the pinned suite).
#
# Environment:
#   PRODUCTION_KEEP  1 keeps the work directory (server log, telemetry report)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/mrtrkit-production.XXXXXX")"
trap 'rm -rf "$work"' EXIT
start=$SECONDS

echo "[production] building otel/internal/cmd/otelfixture and the harness" >&2
(cd "$root/otel" && go build -o "$work/otelfixture" ./internal/cmd/otelfixture)
(cd "$root" && go build -o "$work/harness" ./conformance/production)

args=(-fixture "$work/otelfixture" -root "$root")
[[ "${PRODUCTION_KEEP:-0}" == 1 ]] && args+=(-keep)
rc=0
"$work/harness" "${args[@]}" || rc=$?
echo "[production] total: $((SECONDS - start)) s" >&2
exit "$rc"
