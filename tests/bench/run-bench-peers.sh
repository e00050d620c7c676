#!/usr/bin/env bash
# run-bench-peers.sh - the bench workloads under each tool that finds lock
# bugs at run time, side by side: plain, lockdep-rcu (preloaded),
# ThreadSanitizer (gcc -fsanitize=thread, deadlock detection on) and
# Valgrind's Helgrind.  One table, a row per workload phase, ns/op and
# slowdown against plain per tool.
#
# Usage: tests/bench/run-bench-peers.sh [--runs R] [--preload PATH] [--only W]...
#                                       [--verbose] BUILD_DIR
#
#   plain        BUILD_DIR/bench/W
#   lockdep-rcu  LD_PRELOAD=PATH BUILD_DIR/bench/W
#   TSan         TSAN_OPTIONS=detect_deadlocks=1 BUILD_DIR/bench/tsan/W (the
#                same source built with -fsanitize=thread; skipped with a
#                line saying so when those binaries are missing: make
#                bench-peers builds them when gcc can link TSan)
#   Helgrind     valgrind --tool=helgrind BUILD_DIR/bench/W (skipped with a
#                line saying so when valgrind is not installed)
#
# TSan and Helgrind cost per operation, so they run the workloads with fewer
# iterations (the counts are in PEERS below, printed by --verbose); plain and
# lockdep-rcu run the defaults of make bench.  The workloads time their phases
# themselves (tests/bench/bench.h), so Valgrind's and the runtimes' start-up
# is not in any number, and ns/op (a phase's wall time / its ops) compares
# runs of different lengths fairly.  Each tool runs R times (default 3),
# round-robin; ns/op is the median, the slowdown the median of the ratios of
# each run to the plain run of its round.
#
# Under the table, the reports each tool printed on each workload (none of
# the workloads has a bug; a report is the tool's false positive or its
# limit: liburcu is not instrumented for TSan, nor known to Helgrind).
#
# Options: --runs R, --preload PATH (default BUILD_DIR/liblockdep-rcu.so),
# --only W (repeatable), --verbose (every sample and the iteration counts),
# --help.  The caller's TSAN_OPTIONS come before ours; LOCKDEP_RCU_OPTIONS
# is passed to the lockdep-rcu runs unchanged.
#
# Exit status: 0 when every run completed (whatever the numbers), 2 when
# the preload cannot be preloaded, 3 on a usage error, a missing workload or
# a failed run.

set -u -o pipefail

# workload, phases, then the arguments of the TSan and Helgrind runs (a
# comma for a space).  Plain and lockdep-rcu run without arguments.  The
# reduced counts keep each run near a second; rcu_read_heavy and
# rwlock_read_mostly scale their update interval too, so a write still comes
# every as many reads.
PEERS=(
	"lock_heavy          lock         800000          40000"
	"rcu_read_heavy      read         2000000,5000    400000,1000"
	"many_locks          create,lock  150000          2000"
	"rwlock_read_mostly  read         200000,1000     10000,50"
)
TOOLS=(plain lockdep-rcu tsan helgrind)
declare -A TOOL_NAME=([plain]=plain [lockdep-rcu]=lockdep-rcu [tsan]=TSan [helgrind]=Helgrind)

RUN_TIMEOUT=600

prog=${0##*/}
# shellcheck source-path=SCRIPTDIR source=bench-lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/bench-lib.sh"

usage() {
	sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$0"
}

runs=3
preload=
verbose=0
build_dir=
only=()
while [ $# -gt 0 ]; do
	case $1 in
	--runs) [ $# -ge 2 ] || die 3 "--runs needs a value"; runs=$2; shift 2 ;;
	--runs=*) runs=${1#--runs=}; shift ;;
	--preload) [ $# -ge 2 ] || die 3 "--preload needs a value"; preload=$2; shift 2 ;;
	--preload=*) preload=${1#--preload=}; shift ;;
	--only) [ $# -ge 2 ] || die 3 "--only needs a value"; only+=("$2"); shift 2 ;;
	--only=*) only+=("${1#--only=}"); shift ;;
	-v | --verbose) verbose=1; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) die 3 "unknown option: $1 (try --help)" ;;
	*) [ -z "$build_dir" ] || die 3 "only one BUILD_DIR expected (try --help)"; build_dir=$1; shift ;;
	esac
done
[ -n "$build_dir" ] || die 3 "missing BUILD_DIR (try --help)"
case $runs in
'' | *[!0-9]*) die 3 "--runs must be a positive integer, got '$runs'" ;;
esac
[ "$runs" -ge 1 ] || die 3 "--runs must be a positive integer, got '$runs'"
[ -n "$preload" ] || preload=$build_dir/liblockdep-rcu.so
preload=$(check_preload "$preload") || exit $?

# --- Which workloads, which tools ------------------------------------------
declare -A phases_of=() tsan_args=() helgrind_args=()
workloads=()
for row in "${PEERS[@]}"; do
	read -r w p ta ha <<<"$row"
	if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $w "* ]]; then
		continue
	fi
	workloads+=("$w")
	phases_of[$w]=${p//,/ }
	tsan_args[$w]=${ta//,/ }
	helgrind_args[$w]=${ha//,/ }
done
for w in "${only[@]}"; do
	[[ " ${workloads[*]} " == *" $w "* ]] || die 3 "no workload named $w (try --help)"
done
for w in "${workloads[@]}"; do
	[ -x "$build_dir/bench/$w" ] || die 3 "workload binary not found: $build_dir/bench/$w (make bench-peers builds it)"
done

skipped=()
tools=(plain lockdep-rcu)
tsan_missing=
for w in "${workloads[@]}"; do
	[ -x "$build_dir/bench/tsan/$w" ] || tsan_missing="$build_dir/bench/tsan/$w"
done
if [ -z "$tsan_missing" ]; then
	tools+=(tsan)
elif ! echo 'int main(void) { return 0; }' | ${CC:-cc} -fsanitize=thread -x c - -o /dev/null 2>/dev/null; then
	skipped+=("TSan: skipped: ${CC:-cc} cannot link -fsanitize=thread (Debian: the compiler's libtsan, e.g. libtsan2 for gcc 12)")
else
	skipped+=("TSan: skipped: $tsan_missing is not built (make bench-peers builds the TSan binaries)")
fi
if command -v valgrind >/dev/null 2>&1; then
	tools+=(helgrind)
else
	skipped+=("Helgrind: skipped: valgrind is not installed (apt-get install valgrind)")
fi

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/run-bench-peers.XXXXXX") || die 3 "mktemp failed"
trap 'rm -rf "$tmpdir"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# tool_command TOOL WORKLOAD: the command line of one run, in the array cmd.
tool_command() {
	local bin=$build_dir/bench/$2 args
	case $1 in
	plain) cmd=(env -u LD_PRELOAD "$bin") ;;
	lockdep-rcu) cmd=(env LD_PRELOAD="$preload" "$bin") ;;
	tsan)
		read -ra args <<<"${tsan_args[$2]}"
		# exitcode=0: a report does not fail the run; reports are counted.
		cmd=(env -u LD_PRELOAD "TSAN_OPTIONS=${TSAN_OPTIONS:+$TSAN_OPTIONS:}detect_deadlocks=1:exitcode=0"
			"$build_dir/bench/tsan/$2" "${args[@]}")
		;;
	helgrind)
		read -ra args <<<"${helgrind_args[$2]}"
		cmd=(env -u LD_PRELOAD valgrind --tool=helgrind "$bin" "${args[@]}")
		;;
	esac
}

# reports TOOL STDERR: what the tool reported, in a few words ("" if none).
reports() {
	local n
	case $1 in
	plain) n=$(grep -c . "$2") && echo "$n lines on stderr" ;;
	lockdep-rcu) n=$(lockdep_report_count "$2"); ((n == 0)) || echo "$n reports" ;;
	tsan)
		n=$(grep -c '^WARNING: ThreadSanitizer:' "$2")
		((n == 0)) || echo "$n reports ($(grep '^WARNING: ThreadSanitizer:' "$2" |
			sed 's/^WARNING: ThreadSanitizer: //; s/ (pid=.*//' | sort | uniq -c |
			awk '{ c = $1; $1 = ""; printf "%s%s x%d", sep, substr($0, 2), c; sep = ", " }'))"
		;;
	helgrind)
		sed -n 's/^==[0-9]*== ERROR SUMMARY: \([0-9]*\) errors from \([0-9]*\) contexts.*/\1 \2/p' "$2" |
			awk '$1 > 0 { print $1 " errors from " $2 " contexts" }'
		;;
	esac
}

# --- The runs --------------------------------------------------------------
declare -A secs=() ops=() said=()
start_all=$(date +%s)
for w in "${workloads[@]}"; do
	printf '%s: %s: %d x (%s)...\n' "$prog" "$w" "$runs" "${tools[*]}" >&2
	for ((i = 1; i <= runs; i++)); do
		for t in "${tools[@]}"; do
			out=$tmpdir/$w.$t.$i.out
			err=$tmpdir/$w.$t.$i.err
			tool_command "$t" "$w"
			res=$(timed_run "$out" "$err" "${cmd[@]}") || die 3 "timer failed"
			read -r s st _ <<<"$res"
			[ "$st" = 0 ] || run_failure "$w under ${TOOL_NAME[$t]} (run $i: ${cmd[*]})" "$st" "$s" "$err"
			for p in ${phases_of[$w]}; do
				v=$(phase_value "$out" "$p" seconds)
				[ -n "$v" ] || die 3 "$w under ${TOOL_NAME[$t]} printed no phase=$p line"
				secs[$w $p $t]+=" $v"
				ops[$w $p $t]=$(phase_value "$out" "$p" ops)
			done
			[ -n "${said[$w $t]+set}" ] || said[$w $t]=$(reports "$t" "$err")
			sample_busy
		done
	done
done
printf '%s: total wall time %d s\n' "$prog" "$(($(date +%s) - start_all))" >&2

# --- One table ---------------------------------------------------------------
for line in "${skipped[@]}"; do
	printf '%s\n' "$line"
done
{
	printf 'workload phase'
	for t in "${TOOLS[@]}"; do printf ' %s' "${TOOL_NAME[$t]}"; done
	printf '\n'
	for w in "${workloads[@]}"; do
		for p in ${phases_of[$w]}; do
			printf '%s %s' "$w" "$p"
			for t in "${TOOLS[@]}"; do
				if [ -z "${secs[$w $p $t]:-}" ]; then
					printf ' -'
					continue
				fi
				# ns/op (median) and the slowdown: the median of the
				# paired ratios, run i under the tool over plain run i
				# of the same round (neighbours in time see the same
				# machine).
				# shellcheck disable=SC2046,SC2086  # the sample lists split on purpose
				printf ' %s' "$(LC_ALL=C awk -v s="$(median ${secs[$w $p $t]})" -v n="${ops[$w $p $t]}" \
					-v r="$(median $(LC_ALL=C awk -v a="${secs[$w $p plain]}" -v b="${secs[$w $p $t]}" \
						-v na="${ops[$w $p plain]}" -v nb="${ops[$w $p $t]}" 'BEGIN {
						k = split(a, x, " "); split(b, y, " ")
						for (i = 1; i <= k; i++) printf "%.6f\n", (y[i] / nb) / (x[i] / na) }'))" \
					'BEGIN { printf "%.3f:%.4f", s * 1e9 / n, r }')"
			done
			printf '\n'
		done
	done
} | LC_ALL=C awk '
	# ns/op with the slowdown against plain (column 3) beside it.
	function cell(c, plain_column,   f, v, x, s) {
		if (c == "-") return sprintf("%-20s", "   skipped")
		split(c, f, ":"); v = f[1]; x = f[2]
		s = (v >= 100) ? sprintf("%.0f ns", v) : sprintf("%.1f ns", v)
		if (plain_column) return sprintf("%-20s", sprintf("%10s", s))
		return sprintf("%-20s", sprintf("%10s %8s", s, sprintf(x >= 100 ? "%.0fx" : "%.2fx", x)))
	}
	NR == 1 {
		printf "%-19s %-7s", "workload", "phase"
		for (i = 3; i <= NF; i++) printf " %-20s", sprintf("%10s", $i)
		printf "\n"; next
	}
	{
		printf "%-19s %-7s", $1, $2
		for (i = 3; i <= NF; i++) printf " %s", cell($i, i == 3)
		printf "\n"
	}'
printf '(ns/op: wall time of the phase / its ops, median of %d runs; x: slowdown against plain, median of\n the ratios of each run to the plain run of its round)\n' "$runs"

printf 'reports (no workload has a bug):'
any=0
for w in "${workloads[@]}"; do
	for t in "${tools[@]}"; do
		[ -n "${said[$w $t]}" ] || continue
		printf '\n  %-19s %-12s %s' "$w" "${TOOL_NAME[$t]}" "${said[$w $t]}"
		any=1
	done
done
((any)) || printf ' none'
printf '\n'

busy_note
if [ "$verbose" = 1 ]; then
	printf '\niterations: plain and lockdep-rcu the defaults; TSan and Helgrind:\n'
	for w in "${workloads[@]}"; do
		printf '  %-19s TSan %-16s Helgrind %s\n' "$w" "${tsan_args[$w]}" "${helgrind_args[$w]}"
	done
	printf '\nsamples (phase seconds):\n'
	for w in "${workloads[@]}"; do
		for p in ${phases_of[$w]}; do
			for t in "${tools[@]}"; do
				# shellcheck disable=SC2086
				spread "$w $p ${TOOL_NAME[$t]}" ${secs[$w $p $t]}
			done
		done
	done
	printf '\ntools: %s; valgrind %s\n' "$(${CC:-cc} --version | head -n 1)" \
		"$(valgrind --version 2>/dev/null || echo 'not installed')"
fi
exit 0
