#!/usr/bin/env bash
# Calls the Streamable HTTP endpoint from a real browser, cross-origin:
#
#   1. installs Chromium from Debian packages when it is missing (needs root
#      and apt-get; an installed chromium is used as it is);
#   2. builds and starts the test server (conformance/browser/main.go): an
#      MCP endpoint with WithCORS on a free loopback port, serving a tool
#      with an x-mcp-header parameter, and one test page served from two
#      more free loopback ports: the page's origin is allowed, the other's
#      is not;
#   3. loads the page from the allowed origin in headless Chromium, whose
#      script fetch()es the endpoint (a preflight for the Mcp-Param-City
#      header, then the tools/call) and writes the answer into the page;
#      the dumped DOM must hold the tool's answer;
#   4. loads the same page from the other origin: the preflight must be
#      refused (403), the browser must not send the call, and the page must
#      report the failure.
#
# No network is needed beyond the Debian mirror for the install. Everything
# it starts is stopped on exit. Exits non-zero on any failure.
#
# Environment:
#   BROWSER_KEEP=1   keep the temporary directory (logs, dumped pages)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/mrtrkit-browser.XXXXXX")"
server_pid=""

log() { printf '[browser] %s\n' "$*" >&2; }
die() {
	log "FAIL: $*"
	exit 1
}

cleanup() {
	local rc=$?
	if [[ -n "$server_pid" ]]; then
		kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	if ((rc != 0)); then
		for f in "$work"/server.log "$work"/allowed.html "$work"/other.html "$work"/chromium.log; do
			[[ -s "$f" ]] || continue
			log "last lines of $f:"
			tail -n 15 "$f" >&2 || true
		done
	fi
	if [[ "${BROWSER_KEEP:-}" == 1 ]]; then
		log "kept $work"
	else
		rm -rf "$work"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

find_chromium() {
	local c
	for c in chromium chromium-browser; do
		if command -v "$c" >/dev/null 2>&1; then
			command -v "$c"
			return 0
		fi
	done
	return 1
}

chromium_bin="$(find_chromium || true)"
if [[ -z "$chromium_bin" ]]; then
	[[ "$(id -u)" == 0 ]] || die "chromium is missing and installing it needs root"
	command -v apt-get >/dev/null 2>&1 || die "chromium is missing and apt-get is not available"
	log "installing chromium from Debian packages"
	apt-get update >"$work/apt.log" 2>&1 || die "apt-get update failed (see $work/apt.log)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >>"$work/apt.log" 2>&1 ||
		die "installing chromium failed (see $work/apt.log)"
	chromium_bin="$(find_chromium)" || die "chromium is still missing after the install"
fi
log "using $("$chromium_bin" --version 2>/dev/null | head -n 1)"

log "building the test server"
(cd "$root" && go build -o "$work/server" ./conformance/browser) || die "build failed"

"$work/server" >"$work/ready" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 1 100); do
	[[ -s "$work/ready" ]] && break
	kill -0 "$server_pid" 2>/dev/null || die "the test server exited at start-up"
	sleep 0.1
done
read -r word mcp page other <"$work/ready" || true
[[ "$word" == ready ]] || die "the test server did not report its addresses"
mcp="${mcp#mcp=}"
page="${page#page=}"
other="${other#other=}"
log "endpoint $mcp; allowed page $page; other page $other"

# dump URL OUT: loads URL in headless Chromium and writes the DOM once the
# page's requests have settled (virtual time waits for pending fetches).
dump() {
	local profile
	profile="$(mktemp -d "$work/profile.XXXXXX")"
	# The sandbox cannot run as root; the pages are our own.
	timeout -k 5 60 "$chromium_bin" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--no-first-run --no-default-browser-check --disable-background-networking \
		--disable-component-update --disable-sync --disable-extensions \
		--user-data-dir="$profile" --virtual-time-budget=10000 \
		--dump-dom "$1" >"$2" 2>>"$work/chromium.log" || die "chromium failed on $1"
}

failures=0
check() { # check DESCRIPTION COMMAND...
	if "${@:2}"; then
		log "ok: $1"
	else
		log "FAIL: $1"
		failures=$((failures + 1))
	fi
}

dump "$page" "$work/allowed.html"
dump "$other" "$work/other.html"
# The server logs each request once answered; give the last line a moment.
sleep 0.2

check "the allowed page shows the tool's answer" \
	grep -qF '<pre id="result">answered status=200 text=forecast for Oslo: sunny</pre>' "$work/allowed.html"
check "the allowed origin's preflight asked for Mcp-Param-City and got 204" \
	grep -qE "method=OPTIONS origin=\"${page%/}\" request-headers=\"[^\"]*mcp-param-city[^\"]*\" status=204" "$work/server.log"
check "the allowed origin's call was answered 200" \
	grep -qF "method=POST origin=\"${page%/}\" request-headers=\"\" status=200" "$work/server.log"
check "the other page reports the call refused" \
	grep -qF '<pre id="result">refused: TypeError' "$work/other.html"
check "the other origin's preflight got 403" \
	grep -qE "method=OPTIONS origin=\"${other%/}\" .* status=403" "$work/server.log"
check "the browser did not send the other origin's call" \
	bash -c "! grep -qF 'method=POST origin=\"${other%/}\"' '$work/server.log'"

if ((failures > 0)); then
	die "$failures check(s) failed"
fi
log "browser: 6 passed, 0 failed"
