#!/usr/bin/env bash
# Runs the client interop tests against the mrtrkit conformance fixture
# server (and the summarize_repo and tour examples):
#
#   - the official Go SDK client (go-sdk v1.8.0, go/): at 2026-07-28, and
#     pinned to 2025-11-25 with and without its standalone GET stream;
#   - the TypeScript SDK v2 client (ts-v2/), at 2026-07-28;
#   - the TypeScript SDK v1 client (ts-v1/), at 2025-11-25, against the
#     fixture and the summarize_repo example;
#   - over stdio, each of these clients launching the fixture binary as a
#     subprocess with -stdio (go-sdk CommandTransport at 2026-07-28 and
#     2025-11-25, TS v2 and TS v1 StdioClientTransport);
#   - the tour example (examples/tour), with every tool, its resource and
#     its prompt: the go-sdk client at 2026-07-28 and 2025-11-25 over HTTP
#     and stdio (TestTour, TestStdioTour in go/), the TS v1 client at
#     2025-11-25 over HTTP and stdio (ts-v1/test/tour.test.mjs).
#
# Needs Go, Node (20 or later) and npm; installs nothing globally (npm ci
# into each folder's node_modules). Exits non-zero when a build or a suite
# fails.
#
# Environment:
#   INTEROP_TIMEOUT   seconds allowed for each step (default 600)
#   FIXTURE_BIN       use this prebuilt fixture binary instead of building one
#   EXAMPLE_BIN       use this prebuilt summarize_repo binary instead of building one
#   TOUR_BIN          use this prebuilt tour binary instead of building one
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

# binary VAR LABEL PACKAGE exports VAR as the absolute path of the binary
# it names when it is set, else of PACKAGE built into the work directory.
binary() {
	local var="$1" label="$2" pkg="$3" path="${!1:-}"
	if [ -n "$path" ]; then
		path="$(cd "$(dirname "$path")" && pwd)/$(basename "$path")"
		echo "==> using $label $path"
	else
		path="$work/$(basename "$pkg")"
		if ! run "build $label" "$root" go build -o "$path" "$pkg"; then
			summary
			exit 1
		fi
	fi
	export "$var=$path"
}
binary FIXTURE_BIN "fixture server" ./conformance/server
binary EXAMPLE_BIN "summarize_repo example" ./examples/summarize_repo
binary TOUR_BIN "tour example" ./examples/tour

# npm_install DIR installs DIR's locked dependencies (npm install when it has
# no lock file yet).
npm_install() {
	if [ -f "$1/package-lock.json" ]; then
		run "npm ci ($(basename "$1"))" "$1" npm ci --no-audit --no-fund
	else
		run "npm install ($(basename "$1"))" "$1" npm install --no-audit --no-fund
	fi
}

# Go SDK client (its own module, so the framework's go.mod stays untouched):
# 2026-07-28, and 2025-11-25 with and without the standalone GET stream.
run "go-sdk client, 2026-07-28 and 2025-11-25 (go test)" "$here/go" go test -count=1 -timeout "${step_timeout}s" -skip '^TestStdio' -v ./...
# The same client over stdio (CommandTransport), at both versions.
run "go-sdk client over stdio, 2026-07-28 and 2025-11-25 (go test -run Stdio)" "$here/go" go test -count=1 -timeout "${step_timeout}s" -run '^TestStdio' -v ./...

# mrtrkit's own client (package client) against servers of other SDKs: the
# go-sdk everything-server at both revisions over HTTP and stdio, an mcp-go
# server, and the TypeScript SDK v2 server (tsserver/) over HTTP and stdio.
npm_install "$here/tsserver"
run "mrtrkit client vs go-sdk, mcp-go and TypeScript servers (go test)" "$here/goclient" go test -count=1 -timeout "${step_timeout}s" -v ./...

# TypeScript SDK v2 client, 2026-07-28.
if npm_install "$here/ts-v2"; then
	run "typescript-sdk v2 client, 2026-07-28 (node --test)" "$here/ts-v2" node --test test/interop.test.mjs
	run "typescript-sdk v2 client, Tasks extension by hand (node --test)" "$here/ts-v2" node --test test/tasks.test.mjs
	run "typescript-sdk v2 client over stdio, 2026-07-28 (node --test)" "$here/ts-v2" node --test test/stdio.test.mjs
fi

# TypeScript SDK v1 client, 2025-11-25: the fixture, then summarize_repo,
# then the tour (over HTTP and stdio).
if npm_install "$here/ts-v1"; then
	run "typescript-sdk v1 client, 2025-11-25 (node --test)" "$here/ts-v1" node --test test/legacy.test.mjs test/summarize_repo.test.mjs test/tour.test.mjs
	run "typescript-sdk v1 client over stdio, 2025-11-25 (node --test)" "$here/ts-v1" node --test test/stdio.test.mjs
fi

summary
[ "${#failed[@]}" -eq 0 ]
