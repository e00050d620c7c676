#!/usr/bin/env bash
# run-bench.sh - overhead benchmark of the lockdep-rcu LD_PRELOAD checker.
#
# Usage: tests/bench/run-bench.sh [--runs R] [--preload PATH] [--verbose] BUILD_DIR
#
# Runs each workload (BUILD_DIR/bench/lock_heavy, BUILD_DIR/bench/rcu_read_heavy)
# R times plain and R times with LD_PRELOAD=PATH, alternating
# (plain, preloaded, plain, preloaded, ...) so that slow drift of the machine
# (frequency, noisy neighbours) hits both sides alike.  Each run is timed
# with CLOCK_MONOTONIC around fork/exec/wait of the workload.  The median of
# each side is compared, and one line per workload is printed on stdout:
#
#   lock_heavy: plain 0.412 s, preloaded 0.530 s, ratio 1.29x (target <= 1.50x)
#
# The ratio is rounded to two decimals before it is compared with the
# target, so the verdict always matches the printed number.
#
# Options:
#   --runs R        runs per side and workload (default 11; odd keeps the
#                   median a real sample)
#   --preload PATH  library to preload (default BUILD_DIR/liblockdep-rcu.so)
#   --verbose, -v   also print every sample, min/max and spread per side
#   --help, -h      this text
#
# Environment: the preloaded runs get LD_PRELOAD=PATH; the plain runs get no
# LD_PRELOAD at all.  Everything else, LOCKDEP_RCU_OPTIONS included, is
# passed through unchanged from the caller to both sides.
#
# Exit status:
#   0  both ratios within target
#   1  at least one ratio over target (the offending workloads are named)
#   2  the preload library is missing or cannot be preloaded
#   3  usage error, missing workload binary, or a workload run failed
#      (non-zero exit, signal or timeout)
#
# Progress goes to stderr; stdout carries only the result lines.

set -u -o pipefail

# Targets: maximum accepted ratio preloaded/plain, per workload.
WORKLOADS=(lock_heavy rcu_read_heavy)
declare -A TARGET=([lock_heavy]=1.50 [rcu_read_heavy]=2.00)

# A run taking longer than this (seconds) is killed and counts as failed:
# a deadlocked checker must not hang the benchmark forever.
RUN_TIMEOUT=60

prog=${0##*/}

usage() {
	sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$0"
}

die() {	# die STATUS MESSAGE...
	local status=$1
	shift
	printf '%s: %s\n' "$prog" "$*" >&2
	exit "$status"
}

runs=11
preload=
verbose=0
build_dir=

while [ $# -gt 0 ]; do
	case $1 in
	--runs)
		[ $# -ge 2 ] || die 3 "--runs needs a value"
		runs=$2
		shift 2
		;;
	--runs=*)
		runs=${1#--runs=}
		shift
		;;
	--preload)
		[ $# -ge 2 ] || die 3 "--preload needs a value"
		preload=$2
		shift 2
		;;
	--preload=*)
		preload=${1#--preload=}
		shift
		;;
	-v | --verbose)
		verbose=1
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	--)
		shift
		break
		;;
	-*)
		die 3 "unknown option: $1 (try --help)"
		;;
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

# --- Check the preload ----------------------------------------------------
# Make it absolute: a bare file name in LD_PRELOAD would be looked up in the
# library search path, not in the current directory.
case $preload in
/*) ;;
*) preload=$PWD/$preload ;;
esac
# ld.so splits LD_PRELOAD on spaces and colons: such a path cannot work.
case $preload in
*[[:space:]:]*) die 2 "preload path contains a space or colon, which LD_PRELOAD cannot carry: $preload" ;;
esac
if [ ! -e "$preload" ]; then
	die 2 "preload library not found: $preload (build it first, or pass --preload PATH)"
fi
if [ ! -f "$preload" ] || [ ! -r "$preload" ]; then
	die 2 "preload library is not a readable file: $preload"
fi
# ld.so does not fail on an unloadable LD_PRELOAD entry: it prints an error
# and runs the program WITHOUT it, which would show up as a bogus ratio of
# 1.00x.  Load it once into a trivial program and look for that error.
check_st=0
check_out=$(LD_PRELOAD=$preload /bin/true 2>&1) || check_st=$?
if [ "$check_st" != 0 ] || [[ $check_out == *'cannot be preloaded'* ]]; then
	[ -z "$check_out" ] || printf '%s\n' "$check_out" >&2
	if [ "$check_st" != 0 ]; then
		die 2 "preload library cannot be preloaded: $preload (/bin/true under it exited $check_st)"
	fi
	die 2 "preload library cannot be preloaded: $preload"
fi

# --- Check the workloads -------------------------------------------------
for w in "${WORKLOADS[@]}"; do
	bin=$build_dir/bench/$w
	if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
		die 3 "workload binary not found or not executable: $bin (build the benchmarks first)"
	fi
done

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/run-bench.XXXXXX") || die 3 "mktemp failed"
trap 'rm -rf "$tmpdir"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- Timer ----------------------------------------------------------------
# timed_run PRELOAD_OR_EMPTY OUTFILE BIN
#   Runs BIN with LD_PRELOAD set to PRELOAD (or without LD_PRELOAD if empty),
#   its stdout+stderr to OUTFILE, and prints "SECONDS STATUS CPU" where
#   SECONDS is the CLOCK_MONOTONIC time from just before fork to just after
#   wait, STATUS is the exit status (128+N if killed by signal N) and CPU is
#   the user+system CPU time of the run (10 ms resolution; "-" if unknown).
#   Only SECONDS is judged; CPU is shown by --verbose as a cross-check that
#   is less sensitive to other processes competing for the 2 cores.
#
#   Perl (Time::HiRes) is preferred: one process does the clock reads and the
#   fork/exec/wait, so the measured window holds only the workload itself
#   (including the dynamic loading of the preload, which is part of its cost).
#   Without it, fall back to `date +%s%N` (CLOCK_REALTIME, and ~1 ms of
#   process start-up inside the window, the same on both sides).
if perl -MTime::HiRes=clock_gettime,CLOCK_MONOTONIC -e 1 2>/dev/null; then
	timed_run() {
		perl -MTime::HiRes=clock_gettime,CLOCK_MONOTONIC -e '
			my ($pre, $out, $limit, @cmd) = @ARGV;
			# Set up the child environment before starting the clock.
			if (length $pre) { $ENV{LD_PRELOAD} = $pre }
			else { delete $ENV{LD_PRELOAD} }
			open(my $fh, ">", $out) or die "open $out: $!\n";
			my $t0 = clock_gettime(CLOCK_MONOTONIC);
			my $pid = fork();
			die "fork: $!\n" unless defined $pid;
			if ($pid == 0) {
				open(STDOUT, ">&", $fh) and open(STDERR, ">&", $fh)
					or exit 126;
				open(STDIN, "<", "/dev/null");
				exec { $cmd[0] } @cmd or exit 127;
			}
			local $SIG{ALRM} = sub { kill "KILL", $pid };
			alarm $limit;
			waitpid($pid, 0);
			my $t1 = clock_gettime(CLOCK_MONOTONIC);
			alarm 0;
			my $st = $? & 127 ? 128 + ($? & 127) : $? >> 8;
			my (undef, undef, $cu, $cs) = times;
			printf "%.6f %d %.2f\n", $t1 - $t0, $st, $cu + $cs;
		' "$1" "$2" "$RUN_TIMEOUT" "$3"
	}
else
	echo "$prog: note: perl Time::HiRes not available, timing with date +%s%N (realtime clock)" >&2
	timed_run() {
		local t0 t1 st=0
		t0=$(date +%s%N)
		if [ -n "$1" ]; then
			LD_PRELOAD=$1 timeout -s KILL "$RUN_TIMEOUT" "$3" >"$2" 2>&1 </dev/null || st=$?
		else
			env -u LD_PRELOAD timeout -s KILL "$RUN_TIMEOUT" "$3" >"$2" 2>&1 </dev/null || st=$?
		fi
		t1=$(date +%s%N)
		LC_ALL=C awk -v a="$t0" -v b="$t1" -v s="$st" 'BEGIN { printf "%.6f %d -\n", (b - a) / 1e9, s }'
	}
fi

# median VALUE... : median of the values (mean of the middle two if even).
median() {
	printf '%s\n' "$@" | LC_ALL=C sort -g | LC_ALL=C awk '
		{ v[NR] = $1 }
		END { if (NR % 2) printf "%.6f\n", v[(NR + 1) / 2]
		      else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# spread LABEL VALUE... : one detail line for --verbose.
spread() {
	local label=$1
	shift
	printf '%s\n' "$@" | LC_ALL=C sort -g | LC_ALL=C awk -v label="$label" -v all="$*" '
		{ v[NR] = $1; s += $1; ss += $1 * $1 }
		END {
			med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			mean = s / NR; var = ss / NR - mean * mean; if (var < 0) var = 0
			printf "  %-9s min %.3f  median %.3f  max %.3f  stddev %.3f s (%.1f%% of median), max-min %.1f%%\n",
				label, v[1], med, v[NR], sqrt(var), 100 * sqrt(var) / med,
				100 * (v[NR] - v[1]) / med
			n = split(all, a, " "); line = "    runs:"
			for (i = 1; i <= n; i++) line = line sprintf(" %.3f", a[i])
			print line
		}'
}

# report_output WORKLOAD SIDE RUN FILE : show what a run wrote (first lines).
report_output() {
	[ -s "$4" ] || return 0
	printf '%s: %s %s run %s wrote output:\n' "$prog" "$1" "$2" "$3" >&2
	head -n 20 "$4" | sed 's/^/    /' >&2
}

# --- Main loop ------------------------------------------------------------
start_all=$(date +%s)
failed=()
for w in "${WORKLOADS[@]}"; do
	bin=$build_dir/bench/$w
	plain=()
	pre=()
	plain_cpu=()
	pre_cpu=()
	warned_plain=0
	warned_pre=0
	printf '%s: %s: %d x (plain, preloaded)...\n' "$prog" "$w" "$runs" >&2
	for ((i = 1; i <= runs; i++)); do
		for side in plain preloaded; do
			out=$tmpdir/$w.$side.$i.out
			if [ "$side" = plain ]; then
				res=$(timed_run "" "$out" "$bin") || die 3 "timer failed"
			else
				res=$(timed_run "$preload" "$out" "$bin") || die 3 "timer failed"
			fi
			read -r secs st cpu <<<"$res"
			if [ "$st" != 0 ]; then
				report_output "$w" "$side" "$i" "$out"
				if [ "$st" = 137 ] && LC_ALL=C awk -v s="$secs" -v l="$RUN_TIMEOUT" 'BEGIN { exit !(s >= l) }'; then
					die 3 "$w ($side run $i) timed out after ${RUN_TIMEOUT} s"
				elif [ "$st" -gt 128 ]; then
					die 3 "$w ($side run $i) was killed by signal $((st - 128))"
				fi
				die 3 "$w ($side run $i) failed with exit status $st"
			fi
			# The workloads print nothing: anything written came from the
			# preload (e.g. a checker report, which would be a false
			# positive here) and also costs time.  Show it once per side.
			if [ -s "$out" ]; then
				if [ "$side" = plain ] && [ "$warned_plain" = 0 ]; then
					report_output "$w" "$side" "$i" "$out"
					warned_plain=1
				elif [ "$side" = preloaded ] && [ "$warned_pre" = 0 ]; then
					report_output "$w" "$side" "$i" "$out"
					warned_pre=1
				fi
			fi
			if [ "$side" = plain ]; then
				plain+=("$secs")
				plain_cpu+=("$cpu")
			else
				pre+=("$secs")
				pre_cpu+=("$cpu")
			fi
		done
	done

	m_plain=$(median "${plain[@]}")
	m_pre=$(median "${pre[@]}")
	target=${TARGET[$w]}
	# The result line and the verdict (last line of the awk output) come
	# from the same rounded ratio.
	result=$(LC_ALL=C awk -v w="$w" -v a="$m_plain" -v b="$m_pre" -v t="$target" 'BEGIN {
		r = sprintf("%.2f", b / a)
		printf "%s: plain %.3f s, preloaded %.3f s, ratio %sx (target <= %sx)\n",
			w, a, b, r, t
		print r, (r + 0 <= t + 0) ? "ok" : "over" }')
	printf '%s\n' "${result%$'\n'*}"
	read -r ratio verdict <<<"${result##*$'\n'}"
	if [ "$verbose" = 1 ]; then
		spread plain "${plain[@]}"
		spread preloaded "${pre[@]}"
		if [ "${plain_cpu[0]}" != - ]; then
			c_plain=$(median "${plain_cpu[@]}")
			c_pre=$(median "${pre_cpu[@]}")
			LC_ALL=C awk -v a="$c_plain" -v b="$c_pre" 'BEGIN {
				printf "  cpu time (user+sys) medians: plain %.2f s, preloaded %.2f s, ratio %.2fx\n",
					a, b, (a > 0) ? b / a : 0 }'
		fi
	fi
	[ "$verdict" = ok ] || failed+=("$w ratio ${ratio}x > ${target}x")
done

printf '%s: total wall time %d s\n' "$prog" "$(($(date +%s) - start_all))" >&2

if [ ${#failed[@]} -gt 0 ]; then
	for f in "${failed[@]}"; do
		printf 'FAIL: %s\n' "$f"
	done
	exit 1
fi
exit 0
