#!/usr/bin/env bash
# run-lttng.sh - run the LTTng session daemon (lttng-sessiond: liburcu memb
# through its exported read side, liburcu-cds hash tables, many threads, a
# run-as worker forked at startup, lttng-consumerd children) as an
# unprivileged user, optionally with an LD_PRELOAD library (the lockdep-rcu
# checker), drive tracing sessions with the lttng client and check every
# command works.
#
# Usage: tests/lttng/run-lttng.sh [--preload PATH] [--load N] WORKDIR
#
#   --preload PATH  LD_PRELOAD=PATH for lttng-sessiond (and the processes it
#                   starts: the run-as worker, lttng-consumerd) only, never
#                   for the lttng client; empty = none.  The caller's
#                   LOCKDEP_RCU_OPTIONS is passed on, with log_path appended.
#   --load N        tracing sessions, each create / enable-channel /
#                   enable-event -u / start / stop / list / destroy (default 3).
#   WORKDIR         created if missing; must be empty, and reachable by
#                   nobody (everything runs as nobody, LTTNG_HOME=WORKDIR/home,
#                   so that no system session daemon is in the way).
#
# Needs (Debian 12): lttng-tools.
#
# Files left in WORKDIR: home/ (LTTNG_HOME: the daemon's sockets and the
# traces), sessiond.stderr, sessiond.stdout, lttng.log (every command and its
# output), sessiond.fds, tracer/, run-info.txt.
#
# stdout: key=value lines: sessions= lttng_ok= lttng_failed= sessiond_exit=
# sessiond_stop= fds= tracer_logs= tracer_reports= preload= result=
# lttng-sessiond stops on SIGTERM and exits 0.
#
# Exit status: 0 if every lttng command succeeded, each session left a trace
# directory and the daemon exited 0; 1 otherwise; 2 on a usage or setup
# error.

set -euo pipefail

PROG=run-lttng
LOAD_DEFAULT=3
LOAD_MAX=100
REQUIRED_TOOLS="lttng-sessiond lttng"
INSTALL_HINT="lttng-tools"
# shellcheck source=../lib/real-program.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/../lib/real-program.sh"
rp_parse_args "$@"

readonly START_TIMEOUT=20 STOP_TIMEOUT=20 RUN_USER=nobody RUN_GROUP=nogroup

sessions=0 lttng_ok=0 lttng_failed=0 traces=0
sessiond_exit=-1 sessiond_stop=none sessiond_pid="" fds=none
summary_keys=(sessions traces lttng_ok lttng_failed sessiond_exit sessiond_stop fds)
stderr_files=("$workdir/sessiond.stderr")
rp_cleanup_hook() {
	if [[ -n $sessiond_pid ]] && alive "$sessiond_pid"; then
		sessiond_stop=cleanup
		kill -TERM "$sessiond_pid" 2>/dev/null || true
		wait_gone "$sessiond_pid" 10 || kill -KILL "$sessiond_pid" 2>/dev/null || true
	fi
}

home=$workdir/home
mkdir -p "$home"
chown "$RUN_USER:$RUN_GROUP" "$home"
setpriv --reuid="$RUN_USER" --regid="$RUN_GROUP" --clear-groups test -w "$tracer_dir" -a -w "$home" ||
	rp_die "$RUN_USER cannot write to $tracer_dir (make every directory above WORKDIR searchable)"
as_user=(setpriv --reuid="$RUN_USER" --regid="$RUN_GROUP" --clear-groups env "HOME=$home" "LTTNG_HOME=$home")

lttng_cmd() {
	local rc=0
	printf '== lttng %s\n' "$*" >>"$workdir/lttng.log"
	timeout -k 2 30 "${as_user[@]}" lttng "$@" >>"$workdir/lttng.log" 2>&1 </dev/null || rc=$?
	if ((rc == 0)); then
		lttng_ok=$((lttng_ok + 1))
	else
		lttng_failed=$((lttng_failed + 1))
		rp_log "lttng $* failed ($rc)"
	fi
	return "$rc"
}

rp_log "starting lttng-sessiond as $RUN_USER${preload:+ with LD_PRELOAD=$preload}"
spawn "${as_user[@]}" "${under_test[@]}" lttng-sessiond --no-kernel </dev/null \
	>>"$workdir/sessiond.stdout" 2>>"$workdir/sessiond.stderr" &
sessiond_pid=$!
rp_track_pid "$sessiond_pid"
started=0
deadline=$((SECONDS + START_TIMEOUT))
while :; do
	if ! alive "$sessiond_pid"; then
		wait_status sessiond_exit "$sessiond_pid"
		sessiond_stop=exited-early
		rp_log "lttng-sessiond exited early with status $sessiond_exit (see sessiond.stderr)"
		break
	fi
	if timeout -k 2 10 "${as_user[@]}" lttng list >/dev/null 2>&1 </dev/null; then
		started=1
		break
	fi
	((SECONDS < deadline)) || { rp_log "lttng-sessiond did not answer within ${START_TIMEOUT}s"; break; }
	sleep 0.2
done

if ((started)); then
	for ((i = 1; i <= load; i++)); do
		s=lockdep$i
		lttng_cmd create "$s" --output="$home/traces/$s" || continue
		sessions=$((sessions + 1))
		lttng_cmd enable-channel -u -s "$s" chan0 || true
		lttng_cmd enable-event -u -s "$s" -c chan0 -a || true
		lttng_cmd add-context -u -s "$s" -c chan0 -t vpid -t vtid || true
		lttng_cmd start "$s" || true
		lttng_cmd list "$s" || true
		lttng_cmd stop "$s" || true
		lttng_cmd destroy "$s" || true
		[[ -d $home/traces/$s ]] && traces=$((traces + 1))
	done
	fd_snapshot "$sessiond_pid" "$workdir/sessiond.fds"
	fds=$(fd_digest "$workdir/sessiond.fds")
	sessiond_stop=$(stop_pid "$sessiond_pid" TERM "$STOP_TIMEOUT")
fi
wait_status sessiond_exit "$sessiond_pid"
sessiond_pid=""
rp_log "lttng-sessiond exit status $sessiond_exit (stopped by: $sessiond_stop)"

result=pass
if ((!started || sessions != load || traces != load || lttng_failed != 0 || lttng_ok != 8 * load ||
	sessiond_exit != 0)) || [[ $sessiond_stop != TERM ]]; then
	result=fail
fi
rp_print_summary "$result"
[[ $result == pass ]] || exit 1
exit 0
