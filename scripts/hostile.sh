#!/usr/bin/env bash
# hostile.sh runs internal/cmd/hostile against the conformance fixture server
# with its defaults (20,000 listen attempts, 200 slow-body clients, 200
# non-reading clients and a well-behaved tools/call every 100 ms, for one
# minute) after raising the descriptor limit. The well-behaved client runs
# in a process of its own and the hostile clients at nice 10 (see
# internal/cmd/hostile/doc.go; -good-apart=false -attack-nice=0 -good-from=any
# to measure without). Arguments go to internal/cmd/hostile.
#
#   scripts/hostile.sh [flags]
#
# Connections held open after a refusal (each sends one
# subscriptions/listen and keeps its connection whatever the answer), with
# the slow-body and non-reading clients beside them:
#
#   scripts/hostile.sh -listens 0 -hold 19000
#
# Each held connection is a descriptor here and, until the server closes
# it, one in the server: the limit is raised to 200,000 where the shell may
# (as root), else to the hard limit.
set -euo pipefail
cd "$(dirname "$0")/.."
ulimit -n 200000 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hostile" ./internal/cmd/hostile
"$tmp/hostile" "$@"
