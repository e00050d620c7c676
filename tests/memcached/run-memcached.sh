#!/usr/bin/env bash
# run-memcached.sh - run memcached (libevent worker threads, item locks,
# LRU maintainer and crawler threads, slab rebalancer) on 127.0.0.1, as user
# nobody, optionally with an LD_PRELOAD library (the lockdep-rcu checker),
# and check that it answers every command right.
#
# Usage: tests/memcached/run-memcached.sh [--preload PATH] [--load N] WORKDIR
#
#   --preload PATH  LD_PRELOAD=PATH for memcached only (never for the
#                   client); empty = none.  The caller's LOCKDEP_RCU_OPTIONS
#                   is passed on, with log_path appended.
#   --load N        round trips (set, get, incr; a delete every 16th) per
#                   client, 8 clients (default 2000).
#   WORKDIR         created if missing; must be empty, and reachable by
#                   nobody (memcached drops privileges to it).
#
# Needs (Debian 12): memcached, python3 (the client, mc-client.py beside
# this script, never preloaded).
#
# Files left in WORKDIR: memcached.stderr, memcached.stdout, client.out,
# client.stderr, memcached.fds, tracer/, run-info.txt.
#
# stdout: key=value lines: port= mc_ops= mc_wrong= mc_errors= threads=
# memcached_exit= memcached_stop= fds= tracer_logs= tracer_reports=
# preload= result=.  memcached stops on SIGTERM and exits 0.
#
# Exit status: 0 if every answer was right and memcached exited 0; 1
# otherwise; 2 on a usage or setup error.

set -euo pipefail

PROG=run-memcached
LOAD_DEFAULT=2000
REQUIRED_TOOLS="memcached python3"
INSTALL_HINT="memcached python3"
# shellcheck source=../lib/real-program.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/../lib/real-program.sh"
rp_parse_args "$@"
here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)

readonly START_TIMEOUT=15 STOP_TIMEOUT=15 RUN_USER=nobody

port=0
mc_ops=0 mc_wrong=0 mc_errors=0 threads=0
memcached_exit=-1 memcached_stop=none memcached_pid="" fds=none
summary_keys=(port mc_ops mc_wrong mc_errors threads memcached_exit memcached_stop fds)
stderr_files=("$workdir/memcached.stderr")
rp_cleanup_hook() {
	if [[ -n $memcached_pid ]] && alive "$memcached_pid"; then
		memcached_stop=cleanup
		kill -KILL "$memcached_pid" 2>/dev/null || true
	fi
}
setpriv --reuid="$RUN_USER" --regid=nogroup --clear-groups test -w "$tracer_dir" ||
	rp_die "$RUN_USER cannot write to $tracer_dir (make every directory above WORKDIR searchable)"

reserve_port port
rp_log "starting memcached on 127.0.0.1:$port${preload:+ with LD_PRELOAD=$preload}"
spawn "${under_test[@]}" memcached -u "$RUN_USER" -l 127.0.0.1 -p "$port" -U 0 -t 4 -m 64 -c 256 \
	-o lru_crawler,lru_maintainer,slab_reassign,slab_automove=1 </dev/null \
	>>"$workdir/memcached.stdout" 2>>"$workdir/memcached.stderr" &
memcached_pid=$!
rp_track_pid "$memcached_pid"
started=0
if wait_tcp "$port" "$START_TIMEOUT" "$memcached_pid"; then
	started=1
else
	rp_log "memcached did not start (see memcached.stderr)"
fi
printf 'port=%s\n' "$port" >>"$workdir/run-info.txt"

if ((started)); then
	rc=0
	run_waited "$workdir/client.out" "$workdir/client.stderr" timeout -k 5 120 \
		python3 "$here/mc-client.py" 127.0.0.1 "$port" "$load" 8 || rc=$?
	for k in mc_ops mc_wrong mc_errors threads; do
		v=$(sed -n "s/^$k=//p" "$workdir/client.out")
		printf -v "$k" '%s' "${v:-0}"
	done
	((rc == 0)) || { rp_log "the client failed ($rc): see client.out, client.stderr"; mc_errors=$((mc_errors + 1)); }
	fd_snapshot "$memcached_pid" "$workdir/memcached.fds"
	fds=$(fd_digest "$workdir/memcached.fds")
	memcached_stop=$(stop_pid "$memcached_pid" TERM "$STOP_TIMEOUT")
else
	memcached_stop=exited-early
fi
wait_status memcached_exit "$memcached_pid"
memcached_pid=""
rp_release_ports
rp_log "memcached exit status $memcached_exit (stopped by: $memcached_stop)"

result=pass
if ((!started || mc_wrong != 0 || mc_errors != 0 || mc_ops != load * 8 || memcached_exit != 0)) ||
	[[ $memcached_stop != TERM ]]; then
	result=fail
fi
rp_print_summary "$result"
[[ $result == pass ]] || exit 1
exit 0
