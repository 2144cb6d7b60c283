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
# METRIC is the unit to compare (default cpu-ns/op, which the mrtr
# benchmarks report; ns/op for others); BENCHTIME is -test.benchtime.
set -euo pipefail
if [ $# -lt 3 ]; then
	echo "usage: $0 PACKAGE BENCH-A BENCH-B [BENCH...]" >&2
	exit 2
fi
pkg=$1
shift
reps=${REPS:-9}
metric=${METRIC:-cpu-ns/op}
benchtime=${BENCHTIME:-20000x}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/b.test" "$pkg"
out="$bin/out.txt"
for _ in $(seq "$reps"); do
	for b in "$@"; do
		"$bin/b.test" -test.run '^$' -test.bench "$b" -test.benchtime "$benchtime" -test.cpu 1 -test.benchmem |
			awk -v b="$b" '/^Benchmark/ { print b "|" $0 }' >>"$out"
	done
done
awk -F"|" -v metric="$metric" -v order="$*" '
	{
		n = split($2, f, /[ \t]+/)
		for (i = 2; i < n; i++) if (f[i+1] == metric) { v[$1, ++c[$1]] = f[i] }
	}
	function median(b,   k, i, j, t, a) {
		k = c[b]
		for (i = 1; i <= k; i++) a[i] = v[b, i]
		for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
	}
	END {
		m = split(order, names, " ")
		base = median(names[1])
		for (i = 1; i <= m; i++) {
			med = median(names[i])
			printf "%-32s %12.0f %s  (%d runs)  %.2fx\n", names[i], med, metric, c[names[i]], med / base
		}
	}' "$out"
