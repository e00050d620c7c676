#!/usr/bin/env bash
# run-varnish.sh - run the Varnish HTTP cache (varnishd: a manager process
# that closes every inherited descriptor and binds the listen socket, and a
# forked cache child with its thread pools, both jailed to the varnish users)
# on 127.0.0.1 in front of a small backend, optionally with an LD_PRELOAD
# library (the lockdep-rcu checker), and check that it serves right.
#
# Usage: tests/varnish/run-varnish.sh [--preload PATH] [--load N] WORKDIR
#
#   --preload PATH  LD_PRELOAD=PATH for varnishd only (never for the backend,
#                   curl, ab or varnishadm); empty = none.  The caller's
#                   LOCKDEP_RCU_OPTIONS is passed on, with log_path appended.
#   --load N        ab requests through varnish (default 2000).
#   WORKDIR         created if missing; must be empty, and reachable by the
#                   varnish users (the jailed processes write their reports
#                   there).
#
# Needs (Debian 12): varnish, python3 (the backend: python3 -m http.server,
# never preloaded), apache2-utils (ab), curl.
#
# Workload: every page through varnish (miss, then hit), ab, varnishadm
# status / param.show / ban (a ban on one URL, written with [.] since the
# ban syntax rejects \.) / ban.list, a page changed on the backend that must
# be fetched again after the ban and stay cached before it, then varnishd is
# stopped with SIGTERM (manager exit status 0).
#
# Files left in WORKDIR: htdocs/, secret, varnishd.stderr, varnishd.stdout,
# backend.stderr, checks.log, ab.out, varnishadm.log, varnishd.fds and
# varnish-child.fds (descriptors of the manager and the cache child after the
# workload, normalized), n/ (varnishd's working directory), tracer/,
# run-info.txt.
#
# stdout: key=value lines: port= admin_port= backend_port= checks=
# checks_wrong= ab_requests= ab_failed= ab_non2xx= admin_ok= admin_failed=
# cache_hits= varnishd_exit= varnishd_stop= fds= child_fds= tracer_logs=
# tracer_reports= preload= result=
#
# Exit status: 0 if every check passed, ab had no failure, every varnishadm
# command succeeded and varnishd exited 0; 1 otherwise; 2 on a usage or setup
# error.

set -euo pipefail

PROG=run-varnish
LOAD_DEFAULT=2000
REQUIRED_TOOLS="varnishd varnishadm ab curl python3"
INSTALL_HINT="varnish apache2-utils curl python3"
# shellcheck source=../lib/real-program.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/../lib/real-program.sh"
rp_parse_args "$@"

readonly START_TIMEOUT=30 STOP_TIMEOUT=20

port=0 admin_port=0 backend_port=0
checks=0 checks_wrong=0
ab_requests=0 ab_failed=0 ab_non2xx=0
admin_ok=0 admin_failed=0 cache_hits=0
varnishd_exit=-1 varnishd_stop=none varnishd_pid="" backend_pid="" fds=none child_fds=none
summary_keys=(port admin_port backend_port checks checks_wrong ab_requests ab_failed ab_non2xx
	admin_ok admin_failed cache_hits varnishd_exit varnishd_stop fds child_fds)
stderr_files=("$workdir/varnishd.stderr")
rp_cleanup_hook() {
	if [[ -n $varnishd_pid ]] && alive "$varnishd_pid"; then
		varnishd_stop=cleanup
		kill -TERM "$varnishd_pid" 2>/dev/null || true
		wait_gone "$varnishd_pid" 10 || kill -KILL "$varnishd_pid" 2>/dev/null || true
	fi
}

for u in varnish vcache; do
	id "$u" >/dev/null 2>&1 || rp_die "no user $u (apt-get install -y varnish)"
	setpriv --reuid="$u" --regid=varnish --clear-groups test -w "$tracer_dir" -a -x "$workdir" ||
		rp_die "$u cannot write to $tracer_dir (make every directory above WORKDIR searchable)"
done

htdocs=$workdir/htdocs
mkdir -p "$htdocs"
printf '<html><body>lockdep-rcu varnish test</body></html>\n' >"$htdocs/index.html"
head -c 60000 /dev/urandom | base64 >"$htdocs/big.txt"
printf 'version 1\n' >"$htdocs/page.txt"
chmod -R a+rX "$htdocs"
head -c 32 /dev/urandom | base64 >"$workdir/secret"
chmod 600 "$workdir/secret"

check() {
	checks=$((checks + 1))
	if [[ $2 == "$3" ]]; then
		printf 'ok %s\n' "$1" >>"$workdir/checks.log"
	else
		checks_wrong=$((checks_wrong + 1))
		printf 'WRONG %s\n  want: %s\n  got:  %s\n' "$1" "$2" "$3" >>"$workdir/checks.log"
		rp_log "wrong: $1: want [$2], got [$3]"
	fi
}
sha() { sha256sum | cut -c1-64; }
fetch() { timeout -k 2 20 curl -sS --max-time 10 "$@" 2>>"$workdir/curl.stderr" || true; }
# X-Varnish carries two ids on a hit, one on a miss.
hit_or_miss() {
	local ids
	ids=$(fetch -o /dev/null -D - "$1" | tr -d '\r' | sed -n 's/^[Xx]-[Vv]arnish: //p')
	set -- $ids
	case $# in 1) echo miss ;; 2) echo hit ;; *) echo "none" ;; esac
}
admin() {
	local rc=0
	printf '== varnishadm %s\n' "$*" >>"$workdir/varnishadm.log"
	timeout -k 2 20 varnishadm -T "127.0.0.1:$admin_port" -S "$workdir/secret" -t 10 "$@" \
		>>"$workdir/varnishadm.log" 2>&1 </dev/null || rc=$?
	if ((rc == 0)); then
		admin_ok=$((admin_ok + 1))
	else
		admin_failed=$((admin_failed + 1))
		rp_log "varnishadm $* failed ($rc)"
	fi
	return "$rc"
}
children_of() {
	local p
	for p in /proc/[0-9]*; do
		[[ $(awk '{ print $4 }' "$p/stat" 2>/dev/null) == "$1" ]] && printf '%s\n' "${p#/proc/}"
	done | sort -n
}

start_all() {
	reserve_port port
	reserve_port admin_port
	reserve_port backend_port
	spawn python3 -m http.server --bind 127.0.0.1 --directory "$htdocs" "$backend_port" \
		</dev/null >"$workdir/backend.stdout" 2>"$workdir/backend.stderr" &
	backend_pid=$!
	rp_track_pid "$backend_pid"
	wait_tcp "$backend_port" 10 "$backend_pid" || { rp_log "the backend did not start"; return 1; }
	rp_log "starting varnishd on 127.0.0.1:$port${preload:+ with LD_PRELOAD=$preload}"
	spawn "${under_test[@]}" varnishd -F -n "$workdir/n" -a "127.0.0.1:$port" \
		-T "127.0.0.1:$admin_port" -S "$workdir/secret" -b "127.0.0.1:$backend_port" \
		-s malloc,64m -p thread_pools=2 -p thread_pool_min=8 -p thread_pool_max=64 \
		</dev/null >>"$workdir/varnishd.stdout" 2>>"$workdir/varnishd.stderr" &
	varnishd_pid=$!
	rp_track_pid "$varnishd_pid"
	local deadline=$((SECONDS + START_TIMEOUT)) code
	while :; do
		if ! alive "$varnishd_pid"; then
			wait_status varnishd_exit "$varnishd_pid"
			varnishd_stop=exited-early
			rp_log "varnishd exited early with status $varnishd_exit (see varnishd.stderr)"
			return 1
		fi
		code=$(timeout -k 1 3 curl -s -o /dev/null -w '%{http_code}' --max-time 2 \
			"http://127.0.0.1:$port/index.html" 2>/dev/null) || code=""
		[[ $code != 200 ]] || return 0
		if ((SECONDS >= deadline)); then
			rp_log "varnishd did not answer within ${START_TIMEOUT}s"
			return 1
		fi
		sleep 0.2
	done
}

started=0
start_all && started=1
printf 'port=%s\nadmin_port=%s\nbackend_port=%s\n' "$port" "$admin_port" "$backend_port" >>"$workdir/run-info.txt"

if ((started)); then
	base=http://127.0.0.1:$port
	check "GET /" "$(sha <"$htdocs/index.html")" "$(fetch "$base/" | sha)"
	check "GET /big.txt" "$(sha <"$htdocs/big.txt")" "$(fetch "$base/big.txt" | sha)"
	check "GET /page.txt" "version 1" "$(fetch "$base/page.txt")"
	check "GET /page.txt again is a hit" hit "$(hit_or_miss "$base/page.txt")"
	check "GET /missing status" 404 "$(fetch -o /dev/null -w '%{http_code}' "$base/missing")"

	rc=0
	run_waited "$workdir/ab.out" "$workdir/ab.stderr" timeout -k 5 120 ab -q -k -n "$load" -c 8 \
		"$base/big.txt" || rc=$?
	ab_requests=$(sed -n 's/^Complete requests:[[:space:]]*\([0-9]*\).*/\1/p' "$workdir/ab.out")
	ab_failed=$(sed -n 's/^Failed requests:[[:space:]]*\([0-9]*\).*/\1/p' "$workdir/ab.out")
	ab_non2xx=$(sed -n 's/^Non-2xx responses:[[:space:]]*\([0-9]*\).*/\1/p' "$workdir/ab.out")
	: "${ab_requests:=0}" "${ab_failed:=0}" "${ab_non2xx:=0}"
	((rc == 0)) || { rp_log "ab exited $rc"; ab_failed=$((ab_failed + 1)); }

	admin status || true
	admin param.show thread_pools || true
	# The backend changes; the cache keeps the old page until the ban.
	printf 'version 2\n' >"$htdocs/page.txt"
	check "GET /page.txt before the ban is the cached one" "version 1" "$(fetch "$base/page.txt")"
	admin ban 'req.url ~ ^/page[.]txt$' || true
	admin ban.list || true
	check "GET /page.txt after the ban is fetched again" "version 2" "$(fetch "$base/page.txt")"
	check "GET /big.txt still a hit" hit "$(hit_or_miss "$base/big.txt")"
	cache_hits=$(varnishstat -n "$workdir/n" -1 -f MAIN.cache_hit 2>/dev/null | awk '{ print $2 }') || true
	: "${cache_hits:=0}"

	fd_snapshot_settled "$varnishd_pid" "$workdir/varnishd.fds"
	fds=$(fd_digest "$workdir/varnishd.fds")
	mapfile -t kids < <(children_of "$varnishd_pid")
	if ((${#kids[@]} > 0)); then
		fd_snapshot "${kids[-1]}" "$workdir/varnish-child.fds"
		child_fds=$(fd_digest "$workdir/varnish-child.fds")
	fi

	varnishd_stop=$(stop_pid "$varnishd_pid" TERM "$STOP_TIMEOUT")
	wait_status varnishd_exit "$varnishd_pid"
	varnishd_pid=""
	for k in "${kids[@]}"; do
		wait_gone "$k" 5 || { rp_log "child $k outlived the manager"; kill -KILL "$k" 2>/dev/null || true; }
	done
fi
if [[ -n $backend_pid ]]; then
	stop_pid "$backend_pid" TERM 5 >/dev/null
	wait "$backend_pid" 2>/dev/null || true
	backend_pid=""
fi
rp_release_ports
rp_log "varnishd exit status $varnishd_exit (stopped by: $varnishd_stop)"

result=pass
if ((!started || checks_wrong != 0 || checks != 8)); then
	result=fail
elif ((ab_failed != 0 || ab_non2xx != 0 || ab_requests != load || admin_failed != 0 || admin_ok != 4)); then
	result=fail
elif ((varnishd_exit != 0)) || [[ $varnishd_stop != TERM ]]; then
	result=fail
fi
rp_print_summary "$result"
[[ $result == pass ]] || exit 1
exit 0
