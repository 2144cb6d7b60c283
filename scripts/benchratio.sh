#!/usr/bin/env bash
# benchratio.sh compares benchmarks of one package by running each in a
# process of its own, alternating, REPS times, and printing the median of
# each metric and the ratio of each benchmark's median to the first's.
# Separate, alternating processes keep one benchmark's heap and caches out
# of the other's figure; medians keep a busy machine's outliers out.
#
#	bash scripts/benchratio.sh ./mrtr/ 'RawThree/Final$' 'StraightThree/Final$'
#	REPS=15 METRIC=cpu-ns/op bash scripts/benchratio.sh ./mrtr/legacy/ 'ModernCall$' 'BridgedCall$'
#
# With PAIRS=1 the benchmarks are pairs (A1 B1 A2 B2 ...): each rep runs a
# pair back to back, in alternating order, and the figure printed for B is
# the median of its per-rep ratios B/A. A machine whose speed drifts over
# minutes (a shared virtual machine) moves both halves of a pair alike, so
# the paired ratio holds still where the ratio of medians does not.
#
# METRIC is the unit to compare (default cpu-ns/op, which the mrtr
# benchmarks report; ns/op for others); BENCHTIME is -test.benchtime.
set -euo pipefail
if [ $# -lt 2 ]; then
	echo "usage: $0 PACKAGE BENCH-A BENCH-B [BENCH...]" >&2
	exit 2
fi
pkg=$1
shift
pairs=${PAIRS:-0}
if [ "$pairs" = 1 ] && [ $(($# % 2)) -ne 0 ]; then
	echo "$0: PAIRS=1 needs an even number of benchmarks" >&2
	exit 2
fi
reps=${REPS:-9}
metric=${METRIC:-cpu-ns/op}
benchtime=${BENCHTIME:-20000x}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/b.test" "$pkg"
out="$bin/out.txt"
runone() {
	"$bin/b.test" -test.run '^$' -test.bench "$1" -test.benchtime "$benchtime" -test.cpu 1 -test.benchmem |
		awk -v b="$1" -v r="$2" '/^Benchmark/ { print b "|" r "|" $0 }' >>"$out"
}
names=("$@")
for r in $(seq "$reps"); do
	if [ "$pairs" = 1 ]; then
		for ((i = 0; i < ${#names[@]}; i += 2)); do
			if [ $((r % 2)) -eq 1 ]; then
				runone "${names[i]}" "$r"
				runone "${names[i + 1]}" "$r"
			else
				runone "${names[i + 1]}" "$r"
				runone "${names[i]}" "$r"
			fi
		done
	else
		for b in "${names[@]}"; do runone "$b" "$r"; done
	fi
done
awk -F"|" -v metric="$metric" -v order="$*" -v pairs="$pairs" '
	{
		n = split($3, f, /[ \t]+/)
		for (i = 2; i < n; i++) if (f[i+1] == metric) { v[$1, ++c[$1]] = f[i]; at[$1, $2] = f[i]; reps[$2] = 1 }
	}
	function median(a, k,   i, j, t) {
		for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
	}
	function medianOf(b,   k, i, a) {
		k = c[b]
		for (i = 1; i <= k; i++) a[i] = v[b, i]
		return median(a, k)
	}
	function pairedRatio(a, b,   k, r, x) {
		k = 0
		for (r in reps) if ((a, r) in at && (b, r) in at) x[++k] = at[b, r] / at[a, r]
		return median(x, k)
	}
	END {
		m = split(order, names, " ")
		base = medianOf(names[1])
		for (i = 1; i <= m; i++) {
			med = medianOf(names[i])
			if (pairs == 1) {
				rel = i % 2 ? 1 : pairedRatio(names[i - 1], names[i])
				printf "%-32s %12.0f %s  (%d runs)  %.3fx paired\n", names[i], med, metric, c[names[i]], rel
			} else {
				printf "%-32s %12.0f %s  (%d runs)  %.2fx\n", names[i], med, metric, c[names[i]], med / base
			}
		}
	}' "$out"
