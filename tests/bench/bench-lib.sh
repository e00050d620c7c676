# shellcheck shell=bash
# bench-lib.sh - common part of run-bench.sh and run-bench-peers.sh: checking
# the preload, timing one run of a workload, reading its phase lines, medians.
# Sourced, never run.  The sourcing script sets prog (its name for messages)
# and RUN_TIMEOUT (seconds before a run is killed) first.
# shellcheck disable=SC2154  # prog and RUN_TIMEOUT: the sourcing script's
#
# A workload prints one line per timed phase on stdout (tests/bench/bench.h):
#   phase=<name> ops=<N> seconds=<S> ns_per_op=<X>
# and nothing on stderr; what appears on stderr came from the tool around it
# (a checker's report, Valgrind's banner).

die() {	# die STATUS MESSAGE...
	local status=$1
	shift
	printf '%s: %s\n' "$prog" "$*" >&2
	exit "$status"
}

# check_preload PATH: prints PATH made absolute, or dies with status 2 when
# it cannot be preloaded.
check_preload() {
	local preload=$1 st=0 out
	# A bare file name in LD_PRELOAD would be looked up in the library
	# search path, not in the current directory.
	case $preload in
	/*) ;;
	*) preload=$PWD/$preload ;;
	esac
	# ld.so splits LD_PRELOAD on spaces and colons.
	case $preload in
	*[[:space:]:]*) die 2 "preload path contains a space or colon, which LD_PRELOAD cannot carry: $preload" ;;
	esac
	[ -e "$preload" ] || die 2 "preload library not found: $preload (build it first, or pass --preload PATH)"
	if [ ! -f "$preload" ] || [ ! -r "$preload" ]; then
		die 2 "preload library is not a readable file: $preload"
	fi
	# ld.so does not fail on an unloadable LD_PRELOAD entry: it prints an
	# error and runs the program WITHOUT it, which would show up as a bogus
	# ratio of 1.00x.  Load it once into a trivial program and look.
	out=$(LD_PRELOAD=$preload /bin/true 2>&1) || st=$?
	if [ "$st" != 0 ] || [[ $out == *'cannot be preloaded'* ]]; then
		[ -z "$out" ] || printf '%s\n' "$out" >&2
		[ "$st" = 0 ] || die 2 "preload library cannot be preloaded: $preload (/bin/true under it exited $st)"
		die 2 "preload library cannot be preloaded: $preload"
	fi
	printf '%s\n' "$preload"
}

# timed_run STDOUT STDERR CMD...
#   Runs CMD (stdin /dev/null) with its stdout and stderr to the two files,
#   and prints "SECONDS STATUS CPU": the CLOCK_MONOTONIC time from just before
#   fork to just after wait (the whole process: the ratios come from the
#   phase lines, this is a cross-check), the exit status (128+N if killed by
#   signal N, 137 on timeout) and the user+system CPU time of the run ("-"
#   if unknown).  Environment changes go in CMD: env -u LD_PRELOAD ...,
#   env LD_PRELOAD=... ...
if perl -MTime::HiRes=clock_gettime,CLOCK_MONOTONIC -e 1 2>/dev/null; then
	timed_run() {
		perl -MTime::HiRes=clock_gettime,CLOCK_MONOTONIC -e '
			my ($out, $err, $limit, @cmd) = @ARGV;
			open(my $fo, ">", $out) or die "open $out: $!\n";
			open(my $fe, ">", $err) or die "open $err: $!\n";
			my $t0 = clock_gettime(CLOCK_MONOTONIC);
			my $pid = fork();
			die "fork: $!\n" unless defined $pid;
			if ($pid == 0) {
				open(STDOUT, ">&", $fo) and open(STDERR, ">&", $fe)
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
		' "$1" "$2" "$RUN_TIMEOUT" "${@:3}"
	}
else
	echo "$prog: note: perl Time::HiRes not available, timing with date +%s%N (realtime clock)" >&2
	timed_run() {
		local t0 t1 st=0 out=$1 err=$2
		shift 2
		t0=$(date +%s%N)
		timeout -s KILL "$RUN_TIMEOUT" "$@" >"$out" 2>"$err" </dev/null || st=$?
		t1=$(date +%s%N)
		LC_ALL=C awk -v a="$t0" -v b="$t1" -v s="$st" 'BEGIN { printf "%.6f %d -\n", (b - a) / 1e9, s }'
	}
fi

# run_failure WHAT STATUS SECONDS STDERR: dies (status 3) explaining how a run
# ended badly, with the first lines it wrote on stderr.
run_failure() {
	local what=$1 st=$2 secs=$3 err=$4
	if [ -s "$err" ]; then
		printf '%s: %s wrote on stderr:\n' "$prog" "$what" >&2
		head -n 20 "$err" | sed 's/^/    /' >&2
	fi
	if [ "$st" = 137 ] && LC_ALL=C awk -v s="$secs" -v l="$RUN_TIMEOUT" 'BEGIN { exit !(s >= l) }'; then
		die 3 "$what timed out after ${RUN_TIMEOUT} s"
	elif [ "$st" -gt 128 ]; then
		die 3 "$what was killed by signal $((st - 128))"
	fi
	die 3 "$what failed with exit status $st"
}

# phase_value FILE PHASE KEY: the value of KEY on FILE's line of PHASE, or
# nothing when there is no such line.
phase_value() {
	LC_ALL=C awk -v p="phase=$2" -v k="$3=" '
		$1 == p { for (i = 2; i <= NF; i++) if (index($i, k) == 1) { print substr($i, length(k) + 1); exit } }' "$1"
}

# median VALUE... : median of the values (mean of the middle two if even).
median() {
	printf '%s\n' "$@" | LC_ALL=C sort -g | LC_ALL=C awk '
		{ v[NR] = $1 }
		END { if (NR % 2) printf "%.6f\n", v[(NR + 1) / 2]
		      else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# spread LABEL VALUE... : one detail line (min, median, max, spread) and the
# samples, for --verbose.
spread() {
	local label=$1
	shift
	printf '%s\n' "$@" | LC_ALL=C sort -g | LC_ALL=C awk -v label="$label" -v all="$*" '
		{ v[NR] = $1; s += $1; ss += $1 * $1 }
		END {
			med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			mean = s / NR; var = ss / NR - mean * mean; if (var < 0) var = 0
			printf "  %-24s min %.4f  median %.4f  max %.4f s, stddev %.1f%%, max-min %.1f%% of median\n",
				label, v[1], med, v[NR], 100 * sqrt(var) / med, 100 * (v[NR] - v[1]) / med
			n = split(all, a, " "); line = "    runs:"
			for (i = 1; i <= n; i++) line = line sprintf(" %.4f", a[i])
			print line
		}'
}

# lockdep_report_count FILE: reports the tracer printed (each opens with a
# rule of '=', as tests/harness.c counts them).
lockdep_report_count() {
	local n
	n=$(grep -cE '^={4,}$' "$1" 2>/dev/null) || true
	echo "${n:-0}"
}

# Other processes competing for the CPUs make every number noisy (the
# project's machine is shared).  sample_busy, called between runs, records
# how many tasks other than this shell were runnable (/proc/loadavg);
# busy_note prints a note when there were some on average.
busy_samples=()
sample_busy() {
	local r
	read -r _ _ _ r _ </proc/loadavg 2>/dev/null || return 0
	busy_samples+=("$((${r%%/*} - 1))")
}
busy_note() {
	((${#busy_samples[@]} > 0)) || return 0
	printf '%s\n' "${busy_samples[@]}" | LC_ALL=C awk -v cpus="$(nproc)" '
		{ s += $1; if ($1 > 0) busy++ }
		END { if (s / NR >= 0.25)
			printf "note: the machine was not quiet: other runnable tasks at %d of %d samples between runs (%.1f on average, %d CPUs); the numbers are noisy\n",
				busy, NR, s / NR, cpus }'
}
