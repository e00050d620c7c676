#!/bin/bash
# The cost of remembering dereferences and of checking free() against them:
# tests/bench/rcu_deref_cost.c, plain and preloaded, alternating, RUNS runs
# each; prints the median ns/op of each and the difference.
# Usage: run-deref-bench.sh --preload PATH BUILD_DIR [RUNS]
set -euo pipefail
[ "${1:-}" = --preload ] || { echo "usage: $0 --preload PATH BUILD_DIR [RUNS]" >&2; exit 2; }
preload=$(realpath "$2")
bin="$3/bench/rcu_deref_cost"
runs=${4:-7}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

printf '%-10s %12s %12s %10s\n' workload "plain ns/op" "preloaded" "added ns"
for w in section1 section4 free-idle free-busy; do
	plain=() traced=()
	for ((i = 0; i < runs; i++)); do
		plain+=("$("$bin" "$w" | awk '{ print $2 }')")
		traced+=("$(LD_PRELOAD="$preload" "$bin" "$w" | awk '{ print $2 }')")
	done
	p=$(printf '%s\n' "${plain[@]}" | median)
	t=$(printf '%s\n' "${traced[@]}" | median)
	printf '%-10s %12s %12s %10s\n' "$w" "$p" "$t" "$(awk -v a="$t" -v b="$p" 'BEGIN { printf "%.1f", a - b }')"
done
