#!/usr/bin/env bash
# Runs every Fuzz target of the module, one after another, each for the
# duration given as the first argument (a Go duration such as 10s or 5m,
# or a count such as 1000x; default 10s):
#
#	bash scripts/fuzz.sh        # 10s each
#	bash scripts/fuzz.sh 5m     # long runs
#
# FUZZ_PARALLEL sets the number of fuzzing workers (go test -parallel;
# default: go's own, GOMAXPROCS). FUZZ_MATCH, a grep -E pattern, limits
# the run to the targets whose name matches it. A failing target leaves
# its input under testdata/fuzz/<FuzzName>/ of its package; the script
# goes on with the others and exits 1 when any failed.
set -u
cd "$(dirname "$0")/.."

dur="${1:-10s}"
match="${FUZZ_MATCH:-.}"
parallel=()
if [ -n "${FUZZ_PARALLEL:-}" ]; then
	parallel=(-parallel "$FUZZ_PARALLEL")
fi

# Every "func FuzzX(" of a _test.go file of this module (directories
# holding a go.mod of their own are other modules and are skipped).
targets=$(
	git ls-files --cached --others --exclude-standard -- '*_test.go' 2>/dev/null ||
		find . -name '*_test.go' -not -path './.git/*' | sed 's|^\./||'
)
list=()
while IFS= read -r file; do
	[ -f "$file" ] || continue
	dir=$(dirname "$file")
	d="$dir"
	other=0
	while [ "$d" != "." ] && [ "$d" != "/" ]; do
		if [ -f "$d/go.mod" ]; then other=1; break; fi
		d=$(dirname "$d")
	done
	[ "$other" = 1 ] && continue
	while IFS= read -r name; do
		[ -n "$name" ] && list+=("$dir $name")
	done < <(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*\*testing\.F).*/\1/p' "$file")
done <<<"$targets"

IFS=$'\n' list=($(printf '%s\n' "${list[@]}" | sort -u | grep -E " .*${match}" || true))
unset IFS

if [ "${#list[@]}" -eq 0 ]; then
	echo "fuzz: no Fuzz targets found" >&2
	exit 1
fi

pass=0
failed=()
start=$(date +%s)
for t in "${list[@]}"; do
	dir=${t%% *}
	name=${t##* }
	echo "== $name (./$dir) for $dur"
	# A run that fails with only "context deadline exceeded" and leaves no
	# new input under testdata/fuzz is the fuzzing engine's deadline
	# landing while a worker is busy, not a finding: it is run once more,
	# and fails if that happens again. Any other failure saves its input
	# and counts at once.
	tries=0
	while :; do
		tries=$((tries + 1))
		before=$(find "$dir/testdata/fuzz/$name" -type f 2>/dev/null | wc -l)
		out=$(go test -run '^$' -fuzz "^${name}\$" -fuzztime "$dur" "${parallel[@]}" "./$dir" 2>&1)
		rc=$?
		printf '%s\n' "$out"
		after=$(find "$dir/testdata/fuzz/$name" -type f 2>/dev/null | wc -l)
		if [ "$rc" -ne 0 ] && [ "$tries" -eq 1 ] && [ "$before" = "$after" ] &&
			printf '%s\n' "$out" | grep -q '^    context deadline exceeded$' &&
			! printf '%s\n' "$out" | grep -qE 'panic|Failing input|failure while testing seed corpus'; then
			echo "== $name: the engine's deadline, no input saved; once more"
			continue
		fi
		break
	done
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
	else
		failed+=("$name (./$dir)")
	fi
done
elapsed=$(($(date +%s) - start))

echo
if [ "${#failed[@]}" -gt 0 ]; then
	for f in "${failed[@]}"; do echo "FAIL $f"; done
	echo "fuzz: ${#list[@]} targets, $pass passed, ${#failed[@]} failed, $dur each (${elapsed}s)"
	exit 1
fi
echo "fuzz: ${#list[@]} targets, all passed, $dur each (${elapsed}s)"
