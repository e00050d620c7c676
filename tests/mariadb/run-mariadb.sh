#!/usr/bin/env bash
# run-mariadb.sh - run MariaDB's server (InnoDB: its buffer pool, redo log,
# purge and page cleaner threads, a thread per connection, hundreds of
# mutexes and rwlocks of dozens of classes) on 127.0.0.1, as user nobody,
# optionally with an LD_PRELOAD library (the lockdep-rcu checker), drive it
# with sysbench's OLTP read-write transactions, and check the data and the
# shutdown.
#
# Usage: tests/mariadb/run-mariadb.sh [--preload PATH] [--load N] WORKDIR
#
#   --preload PATH  LD_PRELOAD=PATH for mariadbd only (never for
#                   mariadb-install-db, sysbench or the mariadb client);
#                   empty = none.  The caller's LOCKDEP_RCU_OPTIONS is passed
#                   on, with log_path and graph_path (WORKDIR/tracer/) added.
#   --load N        OLTP read-write transactions, run by 4 client threads
#                   (default 2000), on 4 tables of 2,000 rows.
#   WORKDIR         created if missing; must be empty, and reachable by
#                   nobody (mariadbd drops privileges to it).
#
# Needs (Debian 12): mariadb-server, mariadb-client, sysbench.
#
# Files left in WORKDIR: data/ (the database), run/ (its socket, pid file
# and error log mariadbd.err), mariadbd.stderr, mariadbd.stdout, install.log, prepare.out, sysbench.out,
# sysbench.stderr, check.out, mariadbd.fds, tracer/ (logs, graph), run-info.txt.
#
# stdout: key=value lines: port= sb_transactions= sb_errors= rows=
# tables_ok= mariadbd_exit= mariadbd_stop= fds= graph_edges=
# graph_duplicate_nodes= tracer_logs= tracer_reports= preload= result=.
# mariadbd stops on SIGTERM (a clean InnoDB shutdown) and exits 0.
# graph_edges counts the lock dependencies the tracer saw (0 without it):
# silence means something only when the validator had nested locks to
# judge; graph_duplicate_nodes the DOT node lines that appear twice.
#
# sb_errors: the transactions InnoDB chose as deadlock victims (or that
# timed out on a row lock), which sysbench retries: part of the workload,
# not a failure, and a count that changes from run to run.
#
# Exit status: 0 if every transaction committed, the tables hold what they
# must and mariadbd exited 0; 1 otherwise; 2 on a usage or setup error.

set -euo pipefail

PROG=run-mariadb
LOAD_DEFAULT=2000
LOAD_MAX=100000
REQUIRED_TOOLS="mariadbd mariadb-install-db mariadb sysbench"
INSTALL_HINT="mariadb-server mariadb-client sysbench"
# shellcheck source=../lib/real-program.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/../lib/real-program.sh"
rp_parse_args "$@"

readonly START_TIMEOUT=60 STOP_TIMEOUT=60 RUN_USER=nobody TABLES=4 ROWS=2000 THREADS=4

port=0
sb_transactions=0 sb_errors=0 rows=0 tables_ok=0
mariadbd_exit=-1 mariadbd_stop=none mariadbd_pid="" fds=none graph_edges=0 graph_duplicate_nodes=0
summary_keys=(port sb_transactions sb_errors rows tables_ok mariadbd_exit mariadbd_stop fds graph_edges
	graph_duplicate_nodes)
stderr_files=("$workdir/mariadbd.stderr")
rp_cleanup_hook() {
	if [[ -n $mariadbd_pid ]] && alive "$mariadbd_pid"; then
		mariadbd_stop=cleanup
		kill -KILL "$mariadbd_pid" 2>/dev/null || true
	fi
}
setpriv --reuid="$RUN_USER" --regid=nogroup --clear-groups test -w "$tracer_dir" ||
	rp_die "$RUN_USER cannot write to $tracer_dir (make every directory above WORKDIR searchable)"

# Every setting on the command line, none from /etc/mysql: the same server
# wherever this runs. A small redo log and buffer pool: start-up and
# shutdown in seconds.
# data/ and run/ (socket, pid file, error log) are the server's: it writes
# them as nobody.
socket=$workdir/run/mysqld.sock
server_options=(--no-defaults --user="$RUN_USER" --datadir="$workdir/data" --socket="$socket"
	--innodb-log-file-size=16M --innodb-buffer-pool-size=64M --skip-log-bin)
mkdir -p "$workdir/data" "$workdir/run"
chown "$RUN_USER": "$workdir/data" "$workdir/run"
if ! mariadb-install-db "${server_options[@]}" --auth-root-authentication-method=normal \
	>"$workdir/install.log" 2>&1; then
	rp_die "mariadb-install-db failed (see install.log)"
fi

if [[ -n $preload ]]; then
	under_test[2]="${under_test[2]}:graph_path=$tracer_dir/graph.%p.dot"
fi
reserve_port port
rp_log "starting mariadbd on 127.0.0.1:$port${preload:+ with LD_PRELOAD=$preload}"
spawn "${under_test[@]}" mariadbd "${server_options[@]}" --skip-grant-tables --bind-address=127.0.0.1 \
	--port="$port" --log-error="$workdir/run/mariadbd.err" --pid-file="$workdir/run/mariadbd.pid" \
	</dev/null >>"$workdir/mariadbd.stdout" 2>>"$workdir/mariadbd.stderr" &
mariadbd_pid=$!
rp_track_pid "$mariadbd_pid"
started=0
if wait_tcp "$port" "$START_TIMEOUT" "$mariadbd_pid"; then
	started=1
else
	rp_log "mariadbd did not start (see run/mariadbd.err, mariadbd.stderr)"
fi
printf 'port=%s\n' "$port" >>"$workdir/run-info.txt"

sql() { mariadb --no-defaults --protocol=socket --socket="$socket" -u root --batch --skip-column-names "$@"; }
sysbench_cmd=(sysbench oltp_read_write --db-driver=mysql --mysql-socket="$socket" --mysql-user=root
	--mysql-db=sbtest --tables="$TABLES" --table-size="$ROWS" --rand-seed=1)

if ((started)); then
	if sql -e 'CREATE DATABASE sbtest' && timeout -k 5 120 "${sysbench_cmd[@]}" prepare >"$workdir/prepare.out" 2>&1; then
		rc=0
		run_waited "$workdir/sysbench.out" "$workdir/sysbench.stderr" timeout -k 5 300 \
			"${sysbench_cmd[@]}" --threads="$THREADS" --events="$load" --time=0 run || rc=$?
		((rc == 0)) || rp_log "sysbench failed ($rc): see sysbench.out, sysbench.stderr"
		sb_transactions=$(awk '/^ *transactions:/ { print $2 }' "$workdir/sysbench.out")
		sb_errors=$(awk '/^ *ignored errors:/ { print $3 }' "$workdir/sysbench.out")
		sb_transactions=${sb_transactions:-0} sb_errors=${sb_errors:-0}
		# Each transaction deletes a row and inserts it again: the counts
		# stay, and CHECK TABLE finds every table and index consistent.
		{
			for t in $(seq "$TABLES"); do
				sql -e "SELECT COUNT(*) FROM sbtest.sbtest$t; CHECK TABLE sbtest.sbtest$t"
			done
		} >"$workdir/check.out" 2>&1 || rp_log "the checks failed: see check.out"
		rows=$(awk '$1 ~ /^[0-9]+$/ { n += $1 } END { print n + 0 }' "$workdir/check.out")
		tables_ok=$(grep -c $'\tcheck\tstatus\tOK$' "$workdir/check.out") || true
	else
		rp_log "could not prepare the tables: see prepare.out"
	fi
	fd_snapshot "$mariadbd_pid" "$workdir/mariadbd.fds"
	# InnoDB's unlinked temporary files are named by inode ("/tmp/#1095308").
	sed -i 's|/tmp/#[0-9]*|/tmp/#INODE|' "$workdir/mariadbd.fds"
	fds=$(fd_digest "$workdir/mariadbd.fds")
	mariadbd_stop=$(stop_pid "$mariadbd_pid" TERM "$STOP_TIMEOUT")
else
	mariadbd_stop=exited-early
fi
wait_status mariadbd_exit "$mariadbd_pid"
mariadbd_pid=""
rp_release_ports
rp_log "mariadbd exit status $mariadbd_exit (stopped by: $mariadbd_stop)"

graphs=("$tracer_dir"/graph.*.dot)
if [[ -e ${graphs[0]} ]]; then
	graph_edges=$(cat "${graphs[@]}" | grep -c ' -> ') || true
	graph_duplicate_nodes=$(cat "${graphs[@]}" | grep ' \[kind=' | sort | uniq -d | wc -l)
fi

result=pass
if ((!started || rows != TABLES * ROWS || tables_ok != TABLES || sb_transactions != load ||
	mariadbd_exit != 0)) || [[ $mariadbd_stop != TERM ]]; then
	result=fail
fi
rp_print_summary "$result"
[[ $result == pass ]] || exit 1
exit 0
