#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against
# conformance/cmd/clientfixture, a small command built on package client:
# `conformance client --requirements 2026-07-28`, then `--requirements
# 2025-11-25`. Each leg must exit as the baseline says, and its
# checks.json files must show every scenario run, the scored ones and the
# ones the suite does not score (the OAuth extensions: client credentials,
# private_key_jwt, enterprise-managed authorization, DPoP, workload
# identity), each with at least one SUCCESS and no FAILURE or WARNING (so
# a vacuous pass is refused), except the scenarios listed in
# conformance/client-baseline-<revision>.txt (known gaps, one per line; an
# entry that now passes is stale and fails the run too, so the list only
# shrinks). The number of scored scenarios must be 32 and 18, and of all
# scenarios 39 and 25.
#
# Needs Go and Node >= 20 with npx (the suite runs on Node 22, fetched by
# npx). Results go to a temporary directory, removed on exit unless
# CONFORMANCE_KEEP=1.
set -euo pipefail
cd "$(dirname "$0")/.."
V="${CONFORMANCE_VERSION:-0.2.0-alpha.12}"
for tool in go node npx; do
	command -v "$tool" >/dev/null || { echo "client-run.sh: $tool is needed" >&2; exit 1; }
done
work="$(mktemp -d)"
if [ "${CONFORMANCE_KEEP:-}" = 1 ]; then echo "results in $work"; else trap 'rm -rf "$work"' EXIT; fi
go build -o "$work/clientfixture" ./conformance/cmd/clientfixture

status=0
for leg in "2026-07-28 32 39" "2025-11-25 18 25"; do
	set -- $leg
	rev="$1" want="$2" wantAll="$3"
	echo "== conformance client --requirements $rev"
	set +e
	(cd "$work" && npx -y -p node@22 -p "@modelcontextprotocol/conformance@$V" -c \
		"conformance client --requirements $rev --command 'exec $work/clientfixture' -o $work/out-$rev") >"$work/run-$rev.log" 2>&1
	set -e
	baseline="conformance/client-baseline-$rev.txt"
	[ -f "$baseline" ] || baseline=/dev/null
	if ! node - "$rev" "$work/run-$rev.log" "$work/out-$rev" "$want" "$baseline" "$wantAll" <<'JS'
const fs = require('fs');
const path = require('path');
const [rev, logFile, dir, wantArg, baselineFile, wantAllArg] = process.argv.slice(2);
const text = fs.readFileSync(logFile, 'utf8').replace(/\x1b\[[0-9;]*m/g, '');
const lines = text.split('\n');
const known = new Set(fs.readFileSync(baselineFile, 'utf8').split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean));
const summary = new Map();
let on = false;
for (const l of lines) {
  if (l.startsWith('=== SUITE SUMMARY ===')) { on = true; continue; }
  if (!on) continue;
  if (l.startsWith('Total:')) break;
  const m = /^([✓✗]) (\S+): (\d+) passed, (\d+) failed/.exec(l);
  if (m) summary.set(m[2], m[1] === '✓');
}
const notScored = new Set();
const ns = lines.findIndex((l) => l.startsWith(`Not scored for ${rev}:`));
if (ns >= 0) for (const l of lines.slice(ns + 1)) { const m = /^  [✓✗] (\S+) \(/.exec(l); if (!m) break; notScored.add(m[1]); }
const checks = new Map();
const walk = (d, prefix) => {
  if (!fs.existsSync(d)) return;
  for (const e of fs.readdirSync(d)) {
    const p = path.join(d, e);
    const m = /^(.+)-\d{4}-\d{2}-\d{2}T.*$/.exec(e);
    if (m && fs.existsSync(path.join(p, 'checks.json'))) checks.set(prefix + m[1], JSON.parse(fs.readFileSync(path.join(p, 'checks.json'), 'utf8')));
    else if (fs.statSync(p).isDirectory()) walk(p, prefix + e + '/');
  }
};
walk(dir, '');
const failures = [];
const scored = [...summary.keys()].filter((s) => !notScored.has(s));
if (scored.length !== +wantArg) failures.push(`${scored.length} scored scenarios, expected ${wantArg}`);
// Every scenario is judged, the ones the suite does not score too.
const all = [...summary.keys()];
if (all.length !== +wantAllArg) failures.push(`${all.length} scenarios in all, expected ${wantAllArg}`);
let good = 0, ok = 0;
for (const s of all) {
  const cs = checks.get(s) || [];
  const f = cs.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  const succ = cs.filter((c) => c.status === 'SUCCESS').length;
  const pass = summary.get(s) && f.length === 0 && succ > 0;
  if (pass && known.has(s)) failures.push(`${s}: passes but is listed in the baseline (stale entry)`);
  if (!pass && !known.has(s)) {
    failures.push(`${s}: ${succ} SUCCESS; ` + (f.map((c) => `${c.status} ${c.id}: ${(c.errorMessage || '').replace(/\s+/g, ' ').slice(0, 200)}`).join('; ') || 'no checks'));
  }
  if (pass) { good++; ok += succ; }
}
console.log(`${rev}: ${good}/${all.length} scenarios (${scored.length} scored, ${all.length - scored.length} not scored) pass with every check (${ok} SUCCESS checks); ${known.size} known gaps in the baseline`);
for (const s of all) console.log(`  ${summary.get(s) && !failures.some((f) => f.startsWith(s + ':')) ? 'pass' : 'FAIL'} ${s}${notScored.has(s) ? ' (not scored)' : ''}: ${(checks.get(s) || []).filter((c) => c.status === 'SUCCESS').length} SUCCESS`);
for (const f of failures) console.log('FAILURE: ' + f);
process.exit(failures.length ? 1 : 0);
JS
	then
		status=1
		tail -n 60 "$work/run-$rev.log"
	fi
done
exit $status
