#!/usr/bin/env bash
# soak.sh runs the conformance fixture server under steady mixed load for a
# while (default 10m) and fails on any 5xx or lost answer to a well-behaved
# request.
#
#   scripts/soak.sh [duration]
#
# The load comes from internal/cmd/hostile in -soak mode: well-behaved workers
# calling tools/call, completing two-round MRTR calls and opening and
# closing subscriptions/listen streams, next to a share of slow-body,
# non-reading and listen-flooding clients, and 2,000 clients that each
# open a connection, send one subscriptions/listen and hold the connection
# whatever the answer, opening another 5 s after the server closes it
# (from one source address, 127.0.0.10, so that their accepted streams stay
# within one peer's share of the listener cap and the well-behaved
# listens are not refused for the global cap). The server's RSS, open file
# descriptors and goroutine count (the fixture's -debug-addr) are sampled
# every 10 s; the summary prints the request
# count, 5xx and lost answers, and the series after a one-minute warm-up.
# Extra arguments after the duration go to internal/cmd/hostile.
#
# The example server (examples/summarize_repo) is not part of the soak: its
# one tool needs sampling answers that name files from the listing the
# server sends, which the load generator does not model.
set -euo pipefail

duration="${1:-10m}"
shift || true

cd "$(dirname "$0")/.."
# Raise the descriptor limit for the load generator and the server it
# starts: to 200,000 where the shell may (as root), else to the hard limit.
ulimit -n 200000 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hostile" ./internal/cmd/hostile

exec "$tmp/hostile" -soak -duration "$duration" \
	-soak-workers 4 \
	-listens 1000000 -listen-conc 2 \
	-slow 20 -slow-every 3s \
	-nonread 10 -pipeline 16 -big 524288 \
	-hold 2000 -hold-addrs 1 -hold-again 5s \
	"$@"
