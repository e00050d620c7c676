#!/usr/bin/env bash
# run-bench.sh - overhead of the lockdep-rcu LD_PRELOAD checker on the bench
# workloads, against the same workloads run plain, with a target per phase.
#
# Usage: tests/bench/run-bench.sh [--runs R] [--preload PATH] [--only W]...
#                                 [--verbose] BUILD_DIR
#
# Runs each workload BUILD_DIR/bench/W (tests/bench/W.c) R times plain and R
# times with LD_PRELOAD=PATH, alternating (plain, preloaded, plain, ...) so
# that slow drift of the machine (frequency, noisy neighbours) hits both
# sides alike.  A workload times its phases itself and prints one line per
# phase (tests/bench/bench.h).  One table is printed on stdout, a row per
# phase:
#
#   workload            phase     plain ns/op  preloaded ns/op   ratio  target  result
#   lock_heavy          lock             15.6             24.0   1.54x   1.25x  MISSED
#   many_locks          create          207.5           1946.9   9.38x       -  -
#
# ns/op is the median over the runs of the phase's wall time divided by its
# operations (each workload's header says what one op is).  The ratio is the
# median of the R paired ratios, each preloaded run over the plain run just
# before it: neighbours in time see the same machine, and on a virtual
# machine whose CPUs change speed from second to second that is much steadier
# than the ratio of the two medians (--verbose shows both, and the ratio of
# the fastest runs).  It is rounded to two decimals before it is compared
# with the target, so the verdict always matches the printed number.  A
# phase without a target is measured and printed only.
#
# Options:
#   --runs R        runs per side and workload (default 11; odd keeps the
#                   median a real sample)
#   --preload PATH  library to preload (default BUILD_DIR/liblockdep-rcu.so):
#                   any build of the tracer
#   --only W        only workload W (repeatable)
#   --verbose, -v   also print every sample, its spread, the other ratio
#                   estimates, and the medians of the whole process (wall
#                   and CPU time, start-up included)
#   --help, -h      this text
#
# Environment: the preloaded runs get LD_PRELOAD=PATH; the plain runs get no
# LD_PRELOAD at all.  Everything else, LOCKDEP_RCU_OPTIONS included, is
# passed through unchanged from the caller to both sides.
#
# Exit status:
#   0  every ratio within its target
#   1  at least one ratio over its target (the offending rows are named)
#   2  the preload library is missing or cannot be preloaded
#   3  usage error, missing workload binary, or a workload run failed
#      (non-zero exit, signal, timeout, or a phase line missing)
#
# Progress and anything a run wrote on stderr (a checker report here is a
# false positive, and costs time) go to stderr; stdout carries the table.

set -u -o pipefail

# The target table: workload, phase, maximum accepted ratio preloaded/plain
# ("-": measured, no target), and what one op of the phase is.
ROWS=(
	"lock_heavy          lock    1.25  iteration: lock A, lock B, unlock B, unlock A"
	"rcu_read_heavy      read    1.35  read side: read_lock, rcu_dereference, read_unlock"
	"many_locks          create  -     malloc + pthread_mutex_init of one of 200,000 locks"
	"many_locks          lock-2k -     the same pair, among the first 2,000 locks (all there are then)"
	"many_locks          lock    1.50  address-ordered pair: lock lo, lock hi, unlock both"
	"rwlock_read_mostly  read    1.30  read side: rdlock, unlock (1 in 64 with a mutex inside)"
	"free_cost           nolock  1.10  malloc + free of 16-256 bytes, no lock in the heap"
	"free_cost           lock    -     malloc + free, 1 in 8 blocks holding an initialized mutex"
	"lfht_lookup         lookup  1.30  read side: read_lock, cds_lfht_lookup, read_unlock"
	"fork_wait           fork    1.30  fork of a 3-thread process with 8 MiB of heap, child _exit(0), waitpid"
	"spawn               spawn   1.25  posix_spawn of /bin/true (preloaded too), waitpid"
)

# A run taking longer than this (seconds) is killed and counts as failed:
# a deadlocked checker must not hang the benchmark forever.
RUN_TIMEOUT=120

prog=${0##*/}
# shellcheck source-path=SCRIPTDIR source=bench-lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/bench-lib.sh"

usage() {
	sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$0"
}

runs=11
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
	--) shift; break ;;
	-*) die 3 "unknown option: $1 (try --help)" ;;
	*)
		[ -z "$build_dir" ] || die 3 "only one BUILD_DIR expected (try --help)"
		build_dir=$1
		shift
		;;
	esac
done
if [ $# -gt 0 ]; then
	if [ -n "$build_dir" ] || [ $# -ne 1 ]; then
		die 3 "only one BUILD_DIR expected (try --help)"
	fi
	build_dir=$1
fi
[ -n "$build_dir" ] || die 3 "missing BUILD_DIR (try --help)"

case $runs in
'' | *[!0-9]*) die 3 "--runs must be a positive integer, got '$runs'" ;;
esac
[ "$runs" -ge 1 ] || die 3 "--runs must be a positive integer, got '$runs'"

[ -n "$preload" ] || preload=$build_dir/liblockdep-rcu.so
preload=$(check_preload "$preload") || exit $?

# The workloads, in table order, each once; --only keeps those named.
workloads=()
for row in "${ROWS[@]}"; do
	read -r w _ <<<"$row"
	[[ " ${workloads[*]} " == *" $w "* ]] && continue
	if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $w "* ]]; then
		continue
	fi
	workloads+=("$w")
done
for w in "${only[@]}"; do
	[[ " ${workloads[*]} " == *" $w "* ]] || die 3 "no workload named $w (try --help)"
done
for w in "${workloads[@]}"; do
	bin=$build_dir/bench/$w
	if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
		die 3 "workload binary not found or not executable: $bin (build the benchmarks first: make bench)"
	fi
done

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/run-bench.XXXXXX") || die 3 "mktemp failed"
trap 'rm -rf "$tmpdir"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Samples, by "workload phase side" (phase seconds) and "workload side"
# (whole-process wall and CPU seconds): space-separated lists.
declare -A secs=() wall=() cpu=() ops=()

# show_stderr WHAT FILE: what a run wrote on stderr, first lines.
show_stderr() {
	printf '%s: %s wrote on stderr:\n' "$prog" "$1" >&2
	head -n 20 "$2" | sed 's/^/    /' >&2
}

# pair_ratios "PLAIN..." "PRELOADED...": run i preloaded over run i plain.
pair_ratios() {
	LC_ALL=C awk -v a="$1" -v b="$2" 'BEGIN {
		n = split(a, x, " "); split(b, y, " ")
		for (i = 1; i <= n; i++) printf "%.6f\n", y[i] / x[i] }'
}

# minimum VALUE...
minimum() {
	printf '%s\n' "$@" | LC_ALL=C sort -g | head -n 1
}

start_all=$(date +%s)
for w in "${workloads[@]}"; do
	bin=$build_dir/bench/$w
	phases=()
	for row in "${ROWS[@]}"; do
		read -r rw rp _ <<<"$row"
		[ "$rw" = "$w" ] && phases+=("$rp")
	done
	declare -A warned=()
	printf '%s: %s: %d x (plain, preloaded)...\n' "$prog" "$w" "$runs" >&2
	for ((i = 1; i <= runs; i++)); do
		for side in plain preloaded; do
			out=$tmpdir/$w.$side.$i.out
			err=$tmpdir/$w.$side.$i.err
			if [ "$side" = plain ]; then
				res=$(timed_run "$out" "$err" env -u LD_PRELOAD "$bin") || die 3 "timer failed"
			else
				res=$(timed_run "$out" "$err" env LD_PRELOAD="$preload" "$bin") || die 3 "timer failed"
			fi
			read -r s st c <<<"$res"
			[ "$st" = 0 ] || run_failure "$w ($side run $i)" "$st" "$s" "$err"
			# The workloads write nothing on stderr: anything there
			# came from the preload (a report would be a false
			# positive here).  Show it once per side.
			if [ -s "$err" ] && [ -z "${warned[$side]:-}" ]; then
				show_stderr "$w ($side run $i)" "$err"
				warned[$side]=1
			fi
			for p in "${phases[@]}"; do
				v=$(phase_value "$out" "$p" seconds)
				[ -n "$v" ] || die 3 "$w ($side run $i) printed no phase=$p line (stdout: $(head -c 200 "$out"))"
				secs[$w $p $side]+=" $v"
				ops[$w $p]=$(phase_value "$out" "$p" ops)
			done
			wall[$w $side]+=" $s"
			cpu[$w $side]+=" $c"
			sample_busy
		done
	done
	unset warned
done
printf '%s: total wall time %d s\n' "$prog" "$(($(date +%s) - start_all))" >&2

# --- The table -------------------------------------------------------------
failed=()
printf '%-19s %-7s %12s %16s %7s %7s  %s\n' workload phase "plain ns/op" "preloaded ns/op" ratio target result
for row in "${ROWS[@]}"; do
	read -r w p target _ <<<"$row"
	[[ " ${workloads[*]} " == *" $w "* ]] || continue
	# shellcheck disable=SC2046,SC2086  # the sample lists split on purpose
	{
		m_plain=$(median ${secs[$w $p plain]})
		m_pre=$(median ${secs[$w $p preloaded]})
		m_ratio=$(median $(pair_ratios "${secs[$w $p plain]}" "${secs[$w $p preloaded]}"))
	}
	# The row and the verdict (its last field) come from one rounded ratio.
	line=$(LC_ALL=C awk -v w="$w" -v p="$p" -v a="$m_plain" -v b="$m_pre" -v m="$m_ratio" -v n="${ops[$w $p]}" -v t="$target" 'BEGIN {
		r = sprintf("%.2f", m)
		if (t == "-") { verdict = "-"; tt = "-" }
		else { verdict = (r + 0 <= t + 0) ? "ok" : "MISSED"; tt = t "x" }
		printf "%-19s %-7s %12.1f %16.1f %6sx %7s  %s\n", w, p, a * 1e9 / n, b * 1e9 / n, r, tt, verdict }')
	printf '%s\n' "$line"
	[ "${line##* }" != MISSED ] || failed+=("$w $p: ratio $(awk '{ print $5 }' <<<"$line") > ${target}x")
done
# Scale: what a lock op costs among 200,000 live locks against among 2,000
# (many_locks's two lock phases), preloaded and plain; the tracer's tables
# must not make it more than twice.
SCALE_TARGET=2.00
if [[ " ${workloads[*]} " == *" many_locks "* ]]; then
	# shellcheck disable=SC2046,SC2086
	line=$(LC_ALL=C awk -v pre="$(median $(pair_ratios "${secs[many_locks lock-2k preloaded]}" "${secs[many_locks lock preloaded]}"))" \
		-v plain="$(median $(pair_ratios "${secs[many_locks lock-2k plain]}" "${secs[many_locks lock plain]}"))" \
		-v t="$SCALE_TARGET" 'BEGIN {
		r = sprintf("%.2f", pre)
		printf "many_locks scale: a pair among 200,000 live locks costs %sx one among 2,000 preloaded (target %sx: %s), %.2fx plain\n",
			r, t, (r + 0 <= t + 0) ? "ok" : "MISSED", plain }')
	printf '%s\n' "$line"
	[ "${line##*MISSED*}" ] || failed+=("many_locks scale: over ${SCALE_TARGET}x")
fi
if [ "$verbose" = 1 ]; then
	printf '\nops (see each workload'"'"'s header):\n'
	for row in "${ROWS[@]}"; do
		read -r w p _ what <<<"$row"
		[[ " ${workloads[*]} " == *" $w "* ]] || continue
		printf '  %-19s %-7s %s ops of one %s\n' "$w" "$p" "${ops[$w $p]}" "$what"
	done
	printf '\nratio estimates: median of paired ratios (the table'"'"'s), ratio of medians, ratio of minimums:\n'
	for row in "${ROWS[@]}"; do
		read -r w p _ <<<"$row"
		[[ " ${workloads[*]} " == *" $w "* ]] || continue
		# shellcheck disable=SC2046,SC2086
		LC_ALL=C awk -v w="$w" -v p="$p" \
			-v m="$(median $(pair_ratios "${secs[$w $p plain]}" "${secs[$w $p preloaded]}"))" \
			-v rm="$(median ${secs[$w $p preloaded]}) $(median ${secs[$w $p plain]})" \
			-v rn="$(minimum ${secs[$w $p preloaded]}) $(minimum ${secs[$w $p plain]})" 'BEGIN {
			split(rm, x, " "); split(rn, y, " ")
			printf "  %-19s %-7s %.2fx  %.2fx  %.2fx\n", w, p, m, x[1] / x[2], y[1] / y[2] }'
	done
	printf '\nsamples (phase seconds):\n'
	for row in "${ROWS[@]}"; do
		read -r w p _ <<<"$row"
		[[ " ${workloads[*]} " == *" $w "* ]] || continue
		# shellcheck disable=SC2086
		{
			spread "$w $p plain" ${secs[$w $p plain]}
			spread "$w $p preloaded" ${secs[$w $p preloaded]}
		}
	done
	printf '\nwhole process (start-up, thread creation and teardown included), medians:\n'
	for w in "${workloads[@]}"; do
		# shellcheck disable=SC2086
		LC_ALL=C awk -v w="$w" -v a="$(median ${wall[$w plain]})" -v b="$(median ${wall[$w preloaded]})" \
			-v ca="$(if [[ ${cpu[$w plain]} != *-* ]]; then median ${cpu[$w plain]}; fi)" \
			-v cb="$(if [[ ${cpu[$w preloaded]} != *-* ]]; then median ${cpu[$w preloaded]}; fi)" 'BEGIN {
			printf "  %-19s wall plain %.3f s, preloaded %.3f s, ratio %.2fx", w, a, b, b / a
			if (ca != "" && ca > 0) printf "; cpu plain %.2f s, preloaded %.2f s, ratio %.2fx", ca, cb, cb / ca
			printf "\n" }'
	done
fi

busy_note
if [ ${#failed[@]} -gt 0 ]; then
	for f in "${failed[@]}"; do
		printf 'FAIL: %s\n' "$f"
	done
	exit 1
fi
exit 0
