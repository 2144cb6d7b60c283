#!/usr/bin/env bash
# Runs the official MCP conformance suite against the mrtrkit fixture
# server (conformance/server), which serves both eras on one endpoint:
# 2025-11-25 clients (initialize, sessions) through package mrtr/legacy,
# and 2026-07-28 clients (stateless, MRTR).
#
#   1. builds the fixture server into a temporary directory;
#   2. starts it on a loopback port (CONFORMANCE_PORT, or a free one) and
#      waits until it answers; every run below uses the one URL
#      http://localhost:PORT/mcp (localhost, as the dns-rebinding scenario
#      expects a local Host);
#   3. runs the frozen 2025-11-25 requirement set (`--requirements
#      2025-11-25`), then the frozen 2026-07-28 one (which adds transient
#      tools to the fixture, so it runs second). Each must exit 0, and the
#      checks.json files must show every required scenario (30 and 37)
#      run and passed with no WARNING and no vacuous pass (the
#      server-sse-polling WARNING is accepted: it is not scored, and the
#      fixture has no resumability by design); the not-scored scenarios
#      must pass too, and at 2026-07-28 the nine tasks-* scenarios of the
#      Tasks extension must pass with every check a SUCCESS
#      (tasks-status-notifications is skipped upstream); and no
#      input-required-result-* (MRTR) scenario may WARN;
#   4. runs single scenarios one by one: server-session-lifecycle at
#      2025-11-25 and three not-scored 2026-07-28 server scenarios, each of
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
#   CONFORMANCE_URL      test the server already running at this URL
#                        (http://localhost:PORT/mcp) instead of building and
#                        starting one (conformance/production runs the suite
#                        so, against the fixture with -production)
#   CONFORMANCE_TOKEN, CONFORMANCE_OTHER_TOKEN
#                        bearer tokens of two principals, given to mrtrcheck
#                        (-token, -other-token) for its cross-principal checks
set -euo pipefail

readonly SUITE_VERSION="${CONFORMANCE_VERSION:-0.2.0-alpha.12}"
readonly NODE_PKG="node@22"
readonly WAIT_SECONDS=15
# The requirement sets, in the order they run, and how many scenarios each
# requires (the scored ones; the pinned suite's requirements/*.yaml).
readonly REVISIONS=(2025-11-25 2026-07-28)
declare -rA REQUIRED=([2025-11-25]=30 [2026-07-28]=37)
# Single scenarios, as "scenario spec-version".
readonly SINGLE_SCENARIOS=(
	"server-session-lifecycle 2025-11-25"
	"http-header-validation 2026-07-28"
	"http-custom-header-server-validation 2026-07-28"
	"json-schema-2020-12 2026-07-28"
)

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
url="${CONFORMANCE_URL:-}"
if [[ -z "$url" ]]; then
	log "building the fixture server"
	(cd "$root" && go build -o "$work/server" ./conformance/server) || die "go build ./conformance/server failed"
fi
(cd "$root" && go build -o "$work/mrtrcheck" ./conformance/cmd/mrtrcheck) || die "go build ./conformance/cmd/mrtrcheck failed"

# 2. Start and wait, unless CONFORMANCE_URL names a running server. With
# no port given the server binds port 0 and the port is read back from its
# start-up log line, which leaves no window for another process to take a
# port picked in advance.
if [[ -n "$url" ]]; then
	code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url" || true)"
	[[ "$code" != 000 && -n "$code" ]] || die "nothing answers at CONFORMANCE_URL $url"
	log "testing the server at $url (CONFORMANCE_URL)"
else
	port="${CONFORMANCE_PORT:-0}"
	server_args=(-addr "127.0.0.1:$port" -path /mcp)
	[[ "${CONFORMANCE_VERBOSE:-0}" == 1 ]] && server_args+=(-v)
	"$work/server" "${server_args[@]}" 2>"$work/server.log" &
	server_pid=$!

	deadline=$((SECONDS + WAIT_SECONDS))
	while :; do
		if ! kill -0 "$server_pid" 2>/dev/null; then
			cat "$work/server.log" >&2 || true
			die "the fixture server exited during start-up"
		fi
		if [[ -z "$url" ]]; then
			listening="$(sed -n 's/.*msg="conformance server listening" url=\(http:[^ ]*\).*/\1/p' "$work/server.log" | head -n 1)"
			# The server binds 127.0.0.1; the suite is pointed at localhost.
			[[ -n "$listening" ]] && url="${listening/127.0.0.1/localhost}"
		fi
		if [[ -n "$url" ]]; then
			# Any HTTP status means the endpoint answers (a GET without a
			# session gets 400).
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
fi

# conformance runs the suite CLI on Node 22 through npx, without a global
# install. Its output goes to the file named by $1 only: the suite's own
# tally counts the unscored extension scenarios, which this project does not
# implement, so it would read as a failure; the summary at the end says
# what passed, and a run that fails has its output printed in full.
conformance() {
	local out="$1"
	shift
	local cmd="conformance server --url $url $*"
	set +e
	npx -y -p "$NODE_PKG" -p "@modelcontextprotocol/conformance@$SUITE_VERSION" -c "$cmd" 2>&1 |
		grep -v '^npm warn' >"$out"
	local rc=${PIPESTATUS[0]}
	set -e
	return "$rc"
}

# check_requirements REVISION OUTPUT DIR EXPECTED reads a --requirements
# run: its console OUTPUT (the scenarios it announced, its summary, its
# not-scored list) and every checks.json under DIR. It prints a report
# whose first lines are the summary lines, and exits 1 with one "FAILURE:"
# line per problem when a required scenario is missing, failed, warned or
# passed no check, when their count is not EXPECTED, when a not-scored
# scenario failed, or (2026-07-28) when an MRTR scenario warned or one of
# the nine tasks-* scenarios did not pass with every check a SUCCESS.
check_requirements() {
	node - "$@" <<'EOF'
const fs = require('fs');
const path = require('path');
const [revision, outFile, dir, expectedArg] = process.argv.slice(2);
const expected = Number(expectedArg);
// Accepted: not scored, and the fixture has no SSE resumability by design.
const acceptedWarnings = new Set(['server-sse-polling']);
const text = fs.readFileSync(outFile, 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
const lines = text.split('\n');
const failures = [];
const report = [];

const announced = /^Running requirements \S+ \((\d+) scenarios\)/m.exec(text);
const summary = new Map(); // scenario -> { ok, passed, failed }
let inSummary = false;
for (const l of lines) {
  if (l.startsWith('=== SUMMARY ===')) { inSummary = true; continue; }
  if (!inSummary) continue;
  if (l.startsWith('Total:')) break;
  const m = /^([✓✗]) (\S+): (\d+) passed, (\d+) failed$/.exec(l);
  if (m) summary.set(m[2], { ok: m[1] === '✓', passed: +m[3], failed: +m[4] });
}
const notScored = new Map(); // scenario -> reason
const ns = lines.findIndex((l) => l.startsWith(`Not scored for ${revision}:`));
if (ns >= 0) {
  for (const l of lines.slice(ns + 1)) {
    const m = /^  [✓✗] (\S+) \((.+)\)$/.exec(l);
    if (!m) break;
    notScored.set(m[1], m[2]);
  }
}
if (!announced) failures.push('the run did not announce its scenarios');
if (!summary.size) failures.push('the run printed no summary');
if (announced && +announced[1] !== summary.size) {
  failures.push(`the run announced ${announced[1]} scenarios but summarised ${summary.size}`);
}

const checks = new Map(); // scenario -> checks.json
if (fs.existsSync(dir)) {
  for (const d of fs.readdirSync(dir).sort()) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T.*$/.exec(d);
    const file = path.join(dir, d, 'checks.json');
    if (m && fs.existsSync(file)) checks.set(m[1], JSON.parse(fs.readFileSync(file, 'utf8')));
  }
}
const count = (cs, s) => cs.filter((c) => c.status === s).length;
const problems = (cs) => cs.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
  .map((c) => `    ${c.status} ${c.id}: ${(c.errorMessage || c.description || '').replace(/\s+/g, ' ').slice(0, 300)}`);

// Required scenarios: every summarised one that is not listed as not scored.
const required = [...summary.keys()].filter((s) => !notScored.has(s));
let passed = 0, successChecks = 0, warnings = 0;
const accepted = [];
for (const s of required) {
  const sum = summary.get(s);
  const cs = checks.get(s);
  if (!cs) { failures.push(`${s}: no checks.json`); continue; }
  const w = count(cs, 'WARNING'), f = count(cs, 'FAILURE'), ok = count(cs, 'SUCCESS');
  successChecks += ok;
  let good = sum.ok && f === 0 && sum.failed === 0;
  if (w && acceptedWarnings.has(s)) accepted.push(`${s} (${w} WARNING, accepted: no resumability by design)`);
  else if (w) { warnings += w; good = false; }
  if (ok === 0 && !acceptedWarnings.has(s)) { good = false; failures.push(`${s}: passed no check (a vacuous pass)`); }
  if (good) passed++;
  else if (f || w || !sum.ok) failures.push(`${s}: ${ok} passed, ${f} failed, ${w} warnings\n${problems(cs).join('\n')}`);
}
if (required.length !== expected) {
  failures.push(`${required.length} required scenarios ran, want ${expected}: ${required.join(' ')}`);
}
report.push(`${revision}: ${passed}/${expected} required scenarios passed (${successChecks} checks), ${warnings} warnings` +
  (accepted.length ? `; accepted: ${accepted.join(', ')}` : ''));

// MRTR scenarios (2026-07-28): no WARNING or FAILURE, SHOULD-level included.
const mrtr = required.filter((s) => s.startsWith('input-required-result-'));
if (revision >= '2026-07-28') {
  const bad = mrtr.filter((s) => { const cs = checks.get(s) || []; return count(cs, 'WARNING') + count(cs, 'FAILURE') > 0; });
  if (!mrtr.length) failures.push('no input-required-result-* (MRTR) scenario ran');
  if (bad.length) failures.push(`MRTR scenarios with a WARNING or FAILURE: ${bad.join(' ')}`);
  report.push(`${revision}: MRTR (input-required-result-*): ${mrtr.length - bad.length}/${mrtr.length} scenarios with no warning and no failure`);
}

// Not-scored scenarios: every one must pass. The tasks-* extension
// (SEP-2663) is checked on its own: at 2026-07-28 every tasks-* scenario
// the suite runs must pass with every check a SUCCESS (at least one), and
// there must be exactly nine of them, besides tasks-status-notifications,
// which upstream skips (one SKIPPED check) pending its rewrite for
// subscriptions/listen.
const tasksSkipped = new Set(['tasks-status-notifications']);
const tasks = [...notScored.keys()].filter((s) => s.startsWith('tasks-'));
const others = [...notScored.keys()].filter((s) => !s.startsWith('tasks-'));
const otherOk = [];
for (const s of others) {
  const cs = checks.get(s) || [];
  const f = count(cs, 'FAILURE'), w = count(cs, 'WARNING');
  if (!summary.get(s)?.ok || f || (w && !acceptedWarnings.has(s))) {
    failures.push(`not scored (${notScored.get(s)}) but expected to pass: ${s}: ${f} failed, ${w} warnings\n${problems(cs).join('\n')}`);
  } else {
    const none = count(cs, 'SUCCESS') ? '' : acceptedWarnings.has(s) ? ', no check: no SSE resumability by design' : ', no check';
    otherOk.push(`${s} (${notScored.get(s)}${none}${w ? `, ${w} WARNING accepted` : ''})`);
  }
}
if (others.length) report.push(`${revision}: not scored, passed: ${otherOk.join(', ') || 'none'}`);
if (revision >= '2026-07-28') {
  const run = tasks.filter((s) => !tasksSkipped.has(s));
  let taskChecks = 0;
  const tasksOk = [];
  for (const s of run) {
    const cs = checks.get(s) || [];
    const ok = count(cs, 'SUCCESS');
    const other = cs.filter((c) => c.status !== 'SUCCESS');
    taskChecks += ok;
    if (!summary.get(s)?.ok || !ok || other.length) {
      failures.push(`tasks extension: ${s}: ${ok} passed, ${other.length} not SUCCESS\n${other.map((c) => `    ${c.status} ${c.id}: ${(c.errorMessage || '').replace(/\s+/g, ' ').slice(0, 300)}`).join('\n')}`);
    } else tasksOk.push(s);
  }
  for (const s of tasksSkipped) {
    const cs = checks.get(s);
    if (cs && cs.some((c) => c.status !== 'SKIPPED')) failures.push(`tasks extension: ${s} is no longer skipped upstream: check it and require it`);
  }
  if (run.length !== 9) failures.push(`tasks extension: ${run.length} tasks-* scenarios ran (besides the skipped one), want 9: ${run.join(' ')}`);
  report.push(`${revision}: tasks extension (unscored): ${tasksOk.length}/9 tasks-* scenarios passed with every check (${taskChecks} checks); ` +
    `skipped upstream: ${[...tasksSkipped].join(', ')}`);
} else if (tasks.length) {
  report.push(`${revision}: tasks-* scenarios (${tasks.length}) run at a revision without the extension; not judged`);
}

console.log(report.join('\n'));
for (const f of failures) console.log(`FAILURE: ${f}`);
process.exit(failures.length ? 1 : 0);
EOF
}

failures=()
requirement_reports=()

# 3. The frozen requirement sets, at one URL, 2025-11-25 first.
for revision in "${REVISIONS[@]}"; do
	log "suite $SUITE_VERSION: --requirements $revision"
	out="$work/requirements-$revision.txt"
	rc=0
	conformance "$out" --requirements "$revision" -o "$work/requirements-$revision" || rc=$?
	((rc == 0)) || { failures+=("--requirements $revision exited $rc"); cat "$out" >&2; }
	report="$work/report-$revision.txt"
	if ! check_requirements "$revision" "$out" "$work/requirements-$revision" "${REQUIRED[$revision]}" >"$report"; then
		failures+=("--requirements $revision: the results do not show every required scenario passed (see FAILURE lines above)")
		cat "$out" >&2
	fi
	requirement_reports+=("$report")
done

# 4. Single scenarios, one by one.
single_summary=()
for entry in "${SINGLE_SCENARIOS[@]}"; do
	read -r scenario version <<<"$entry"
	log "suite $SUITE_VERSION: --scenario $scenario --spec-version $version"
	out="$work/$scenario-$version.txt"
	rc=0
	conformance "$out" --scenario "$scenario" --spec-version "$version" -o "$work/$scenario-$version" || rc=$?
	line="$(grep -E '^Passed: [0-9]+/[0-9]+, [0-9]+ failed, [0-9]+ warnings' "$out" | tail -n 1 || true)"
	single_summary+=("$scenario ($version): ${line:-no result line}")
	failed_before=${#failures[@]}
	if ((rc != 0)); then
		failures+=("$scenario ($version) exited $rc")
	elif grep -q '^SKIPPED' "$out"; then
		failures+=("$scenario ($version) was SKIPPED")
	elif [[ ! "$line" =~ ^Passed:\ ([0-9]+)/([0-9]+),\ 0\ failed,\ 0\ warnings$ ]] ||
		[[ "${BASH_REMATCH[1]}" != "${BASH_REMATCH[2]}" ]] || ((BASH_REMATCH[1] < 1)); then
		failures+=("$scenario ($version) did not print \"Passed: N/N, 0 failed, 0 warnings\" with N >= 1 (${line:-no result line})")
	fi
	((${#failures[@]} == failed_before)) || cat "$out" >&2
done

# 5. mrtrkit's own black-box suite (conformance/suite): what the official
# suite does not test, such as bit-flipped, replayed and oversized state.
log "mrtrcheck (conformance/suite)"
set +e
mrtrcheck_args=(-url "$url")
[[ -n "${CONFORMANCE_TOKEN:-}" ]] && mrtrcheck_args+=(-token "$CONFORMANCE_TOKEN")
[[ -n "${CONFORMANCE_OTHER_TOKEN:-}" ]] && mrtrcheck_args+=(-other-token "$CONFORMANCE_OTHER_TOKEN")
"$work/mrtrcheck" "${mrtrcheck_args[@]}" | tee "$work/mrtrcheck.txt"
mrtrcheck_rc=${PIPESTATUS[0]}
set -e
((mrtrcheck_rc == 0)) || failures+=("mrtrcheck exited $mrtrcheck_rc")

# Summary.
echo
echo "=== mrtrkit conformance summary (suite $SUITE_VERSION, one fixture at $url) ==="
echo "--- requirement sets ---"
cat "${requirement_reports[@]}"
echo
echo "--- single scenarios ---"
printf '%s\n' "${single_summary[@]}"
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
