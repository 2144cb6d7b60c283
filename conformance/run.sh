#!/usr/bin/env bash
# Runs the official MCP conformance suite against the mrtrkit fixture
# server (conformance/server), at the 2026-07-28 revision.
#
#   1. builds the fixture server into a temporary directory;
#   2. starts it on a loopback port (CONFORMANCE_PORT, or a free one) and
#      waits until it answers;
#   3. runs the frozen 2026-07-28 requirement set (`--requirements`), which
#      must exit 0, and in which no input-required-result-* (MRTR) scenario
#      may report a WARNING or a FAILURE;
#   4. runs the three not-scored 2026 server scenarios one by one, each of
#      which must print "Passed: N/N, 0 failed, 0 warnings" with N >= 1 (an
#      inapplicable scenario prints SKIPPED and exits 0, which is refused);
#   5. runs mrtrkit's own black-box suite (conformance/cmd/mrtrcheck), which
#      must report no FAIL.
#
# Needs Go, curl, and Node >= 20 with npm: the suite itself runs on Node 22,
# fetched by npx from the npm registry, so nothing is installed globally.
# Results go to a temporary directory that is removed on exit, unless
# CONFORMANCE_KEEP=1 (then its path is printed).
#
# Environment:
#   CONFORMANCE_PORT     port to listen on (default: a free port)
#   CONFORMANCE_VERSION  suite version (default 0.2.0-alpha.12, pinned)
#   CONFORMANCE_KEEP     1 keeps the results and the server log
#   CONFORMANCE_VERBOSE  1 makes the fixture server log every request
set -euo pipefail

readonly SUITE_VERSION="${CONFORMANCE_VERSION:-0.2.0-alpha.12}"
readonly NODE_PKG="node@22"
readonly REVISION="2026-07-28"
readonly WAIT_SECONDS=15
readonly EXTRA_SCENARIOS=(http-header-validation http-custom-header-server-validation json-schema-2020-12)

start_time=$SECONDS
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/mrtrkit-conformance.XXXXXX")"
server_pid=""
summarized=0

log() { printf '[conformance] %s\n' "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

cleanup() {
	local rc=$?
	if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	if [[ "${CONFORMANCE_KEEP:-0}" == 1 ]]; then
		log "results kept in $work"
	else
		rm -rf "$work"
	fi
	((summarized)) || log "elapsed: $((SECONDS - start_time)) s"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for tool in go curl node npx; do
	command -v "$tool" >/dev/null || die "$tool is not on PATH"
done

# 1. Build.
log "building the fixture server"
(cd "$root" && go build -o "$work/server" ./conformance/server) || die "go build ./conformance/server failed"
(cd "$root" && go build -o "$work/mrtrcheck" ./conformance/cmd/mrtrcheck) || die "go build ./conformance/cmd/mrtrcheck failed"

# 2. Start and wait. With no port given the server binds port 0 and the
# port is read back from its start-up log line, which leaves no window for
# another process to take a port picked in advance.
port="${CONFORMANCE_PORT:-0}"
server_args=(-addr "127.0.0.1:$port" -path /mcp)
[[ "${CONFORMANCE_VERBOSE:-0}" == 1 ]] && server_args+=(-v)
"$work/server" "${server_args[@]}" 2>"$work/server.log" &
server_pid=$!

url=""
deadline=$((SECONDS + WAIT_SECONDS))
while :; do
	if ! kill -0 "$server_pid" 2>/dev/null; then
		cat "$work/server.log" >&2 || true
		die "the fixture server exited during start-up"
	fi
	if [[ -z "$url" ]]; then
		url="$(sed -n 's/.*msg="conformance server listening" url=\(http:[^ ]*\).*/\1/p' "$work/server.log" | head -n 1)"
	fi
	if [[ -n "$url" ]]; then
		# Any HTTP status means the endpoint answers (a GET gets 405).
		code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url" || true)"
		[[ "$code" != 000 && -n "$code" ]] && break
	fi
	if ((SECONDS >= deadline)); then
		cat "$work/server.log" >&2 || true
		die "the fixture server did not answer within ${WAIT_SECONDS} s"
	fi
	sleep 0.2
done
log "fixture server up at $url (pid $server_pid)"

# conformance runs the suite CLI on Node 22 through npx, without a global
# install. Its output goes to the terminal and to the file named by $1.
conformance() {
	local out="$1"
	shift
	local cmd="conformance server --url $url $*"
	set +e
	npx -y -p "$NODE_PKG" -p "@modelcontextprotocol/conformance@$SUITE_VERSION" -c "$cmd" 2>&1 |
		grep -v '^npm warn' | tee "$out"
	local rc=${PIPESTATUS[0]}
	set -e
	return "$rc"
}

failures=()

# 3. The frozen requirement set.
log "suite $SUITE_VERSION: --requirements $REVISION"
main_out="$work/requirements.txt"
main_rc=0
conformance "$main_out" --requirements "$REVISION" -o "$work/requirements" || main_rc=$?
((main_rc == 0)) || failures+=("--requirements $REVISION exited $main_rc")
if ! grep -q '^Total: ' "$main_out"; then
	failures+=("--requirements $REVISION printed no summary")
fi

# The scenarios the run lists as not scored (extensions, pending).
not_scored="$(sed -n '/^Not scored for/,$s/^  [^ ]* \([a-z0-9-]*\) (.*)$/\1/p' "$main_out" | tr '\n' ' ')"

# Reads every checks.json of the run: prints each scenario's counts and
# every check that is not SUCCESS, SKIPPED or INFO (for not-scored
# extension scenarios, the counts only); exits 2 when an MRTR
# (input-required-result-*) scenario has a WARNING or FAILURE, 3 when no
# MRTR scenario ran at all.
report="$work/report.txt"
mrtr_rc=0
node - "$work/requirements" "$not_scored" >"$report" <<'EOF' || mrtr_rc=$?
const fs = require('fs');
const path = require('path');
const dir = process.argv[2];
const notScored = new Set((process.argv[3] || '').split(' ').filter(Boolean));
const byScenario = new Map();
for (const d of fs.readdirSync(dir).sort()) {
  const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T.*$/.exec(d);
  const file = path.join(dir, d, 'checks.json');
  if (!m || !fs.existsSync(file)) continue;
  byScenario.set(m[1], JSON.parse(fs.readFileSync(file, 'utf8')));
}
let mrtrSeen = 0, mrtrBad = 0;
for (const [name, checks] of byScenario) {
  const count = (s) => checks.filter((c) => c.status === s).length;
  const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  const mrtr = name.startsWith('input-required-result-');
  if (mrtr) mrtrSeen++;
  if (mrtr && bad.length) mrtrBad++;
  if (!bad.length) continue;
  const tag = mrtr ? '  [MRTR]' : notScored.has(name) ? '  [not scored]' : '';
  console.log(`${name}: ${count('SUCCESS')} passed, ${count('FAILURE')} failed, ${count('WARNING')} warnings${tag}`);
  if (notScored.has(name) && name.startsWith('tasks-')) continue;
  for (const c of bad) {
    const msg = (c.errorMessage || '').replace(/\s+/g, ' ').slice(0, 400);
    console.log(`  ${c.status} ${c.id}: ${msg}`);
  }
}
console.log(`scenarios: ${byScenario.size}, MRTR scenarios: ${mrtrSeen}, MRTR scenarios with warnings or failures: ${mrtrBad}`);
process.exit(mrtrBad ? 2 : mrtrSeen ? 0 : 3);
EOF
case $mrtr_rc in
0) ;;
2) failures+=("an input-required-result-* (MRTR) scenario reported a WARNING or FAILURE") ;;
3) failures+=("no input-required-result-* (MRTR) scenario ran") ;;
*) failures+=("reading the checks.json files failed (exit $mrtr_rc)") ;;
esac

# 4. The not-scored 2026 scenarios, one by one.
extra_summary=()
for scenario in "${EXTRA_SCENARIOS[@]}"; do
	log "suite $SUITE_VERSION: --scenario $scenario --spec-version $REVISION"
	out="$work/$scenario.txt"
	rc=0
	conformance "$out" --scenario "$scenario" --spec-version "$REVISION" -o "$work/$scenario" || rc=$?
	line="$(grep -E '^Passed: [0-9]+/[0-9]+, [0-9]+ failed, [0-9]+ warnings' "$out" | tail -n 1 || true)"
	extra_summary+=("$scenario: ${line:-no result line}")
	if ((rc != 0)); then
		failures+=("$scenario exited $rc")
	elif grep -q '^SKIPPED' "$out"; then
		failures+=("$scenario was SKIPPED")
	elif [[ ! "$line" =~ ^Passed:\ ([0-9]+)/([0-9]+),\ 0\ failed,\ 0\ warnings$ ]] ||
		[[ "${BASH_REMATCH[1]}" != "${BASH_REMATCH[2]}" ]] || ((BASH_REMATCH[1] < 1)); then
		failures+=("$scenario did not print \"Passed: N/N, 0 failed, 0 warnings\" with N >= 1 (${line:-no result line})")
	fi
done

# 5. mrtrkit's own black-box suite (conformance/suite): what the official
# suite does not test, such as bit-flipped, replayed and oversized state.
log "mrtrcheck (conformance/suite)"
set +e
"$work/mrtrcheck" -url "$url" | tee "$work/mrtrcheck.txt"
mrtrcheck_rc=${PIPESTATUS[0]}
set -e
((mrtrcheck_rc == 0)) || failures+=("mrtrcheck exited $mrtrcheck_rc")

# Summary.
echo
echo "=== mrtrkit conformance summary (suite $SUITE_VERSION, $REVISION) ==="
sed -n '/^=== SUMMARY ===/,$p' "$main_out" | sed '1d'
echo
echo "--- checks that did not pass (from checks.json) ---"
cat "$report"
echo
echo "--- not-scored scenarios run one by one ---"
printf '%s\n' "${extra_summary[@]}"
echo
echo "--- mrtrcheck ---"
tail -n 1 "$work/mrtrcheck.txt"
echo
echo "elapsed: $((SECONDS - start_time)) s"
summarized=1
if ((${#failures[@]})); then
	echo
	printf 'FAILED: %s\n' "${failures[@]}"
	exit 1
fi
echo "PASSED"
