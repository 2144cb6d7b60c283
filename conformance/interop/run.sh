#!/usr/bin/env bash
# Runs the client interop tests: the official Go SDK client and the
# TypeScript SDK v2 client against the mrtrkit conformance fixture server.
#
# Needs Go, Node (20 or later) and npm; installs nothing globally.
# Exits non-zero when the build or either suite fails.
#
# Environment:
#   INTEROP_TIMEOUT   seconds allowed for each step (default 600)
#   FIXTURE_BIN       use this prebuilt fixture binary instead of building one
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
step_timeout="${INTEROP_TIMEOUT:-600}"

work="$(mktemp -d "${TMPDIR:-/tmp}/mrtrkit-interop.XXXXXX")"
trap 'rm -rf "$work"' EXIT

passed=()
failed=()

# run NAME DIR CMD... runs one step in DIR under the time bound and records
# the outcome.
run() {
	local name="$1" dir="$2"
	shift 2
	local start end rc
	start=$(date +%s)
	echo "==> $name"
	(cd "$dir" && timeout --kill-after=10 "$step_timeout" "$@")
	rc=$?
	end=$(date +%s)
	if [ "$rc" -eq 0 ]; then
		echo "<== $name: ok ($((end - start))s)"
		passed+=("$name")
	else
		[ "$rc" -eq 124 ] && echo "<== $name: timed out after ${step_timeout}s"
		echo "<== $name: FAILED (exit $rc, $((end - start))s)"
		failed+=("$name")
	fi
	return "$rc"
}

summary() {
	echo
	for n in ${passed[@]+"${passed[@]}"}; do echo "PASS $n"; done
	for n in ${failed[@]+"${failed[@]}"}; do echo "FAIL $n"; done
	echo "interop: ${#passed[@]} passed, ${#failed[@]} failed"
}

echo "go:   $(go version)"
echo "node: $(node --version)   npm: $(npm --version)"

if [ -n "${FIXTURE_BIN:-}" ]; then
	fixture="$(cd "$(dirname "$FIXTURE_BIN")" && pwd)/$(basename "$FIXTURE_BIN")"
	echo "==> using fixture $fixture"
else
	fixture="$work/fixture"
	if ! run "build fixture server" "$root" go build -o "$fixture" ./conformance/server; then
		summary
		exit 1
	fi
fi
export FIXTURE_BIN="$fixture"

# Go SDK client (its own module, so the framework's go.mod stays untouched).
run "go-sdk client (go test)" "$here/go" go test -count=1 -timeout "${step_timeout}s" -v ./...

# TypeScript SDK v2 client.
if [ -f "$here/ts/package-lock.json" ]; then
	install=(npm ci --no-audit --no-fund)
else
	install=(npm install --no-audit --no-fund)
fi
if run "${install[*]:0:2}" "$here/ts" "${install[@]}"; then
	run "typescript-sdk client (node --test)" "$here/ts" node --test test/interop.test.mjs
fi

summary
[ "${#failed[@]}" -eq 0 ]
