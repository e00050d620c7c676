#!/usr/bin/env bash
# shellcheck disable=SC2317  # the servers' functions are called by name
# run-bench-real.sh - the lockdep-rcu checker's cost on real servers: each
# server is started twice, plain and preloaded, side by side on 127.0.0.1,
# and loaded in turn, alternating (plain, preloaded, plain, ...), so that
# drift of the machine hits both alike.  Prints one table: throughput plain
# and preloaded (medians) and the slowdown: the median of the paired ratios,
# each plain load's throughput over the preloaded load's after it.
#
# Usage: tests/bench/run-bench-real.sh [--preload PATH] [--runs R] [--seconds S]
#                                      [--only nginx|gdnsd]... [--verbose] WORKDIR
#
#   nginx  a master and one worker, file reads in a 4-thread pool ("aio
#          threads", sendfile off), 16 files of 1 KiB, driven by wrk (one
#          thread, 16 keep-alive connections, the files in turn), or by ab
#          (16 keep-alive connections, one file) when wrk is missing.
#          Requests per second.  The worker's threads hand every read over
#          through a mutex and a condition variable: those calls are the
#          tracer's.
#   gdnsd  an authoritative DNS server on liburcu QSBR (its read side is
#          inlined: the tracer sees its locks, not its reads), one UDP
#          thread, driven by dnsperf (100 queries outstanding) over the
#          names of a small zone.  Queries per second.
#
#   --preload PATH  the tracer (default build/liblockdep-rcu.so), for the
#                   preloaded instance only, never for the clients
#   --runs R        loads per instance (default 5; the median is taken)
#   --seconds S     length of each load (default 5), after one warm-up load
#                   of 1 s per instance
#   --only SERVER   only this server (repeatable)
#   WORKDIR         created if missing; must be empty; for nginx, reachable
#                   by www-data when run as root
#
# With two or more CPUs the servers run on CPU 1 and the clients on CPU 0
# (taskset): the number is then the server's own cost per request, not a
# share of two cores the client competes for.  The caller's
# LOCKDEP_RCU_OPTIONS is passed to the preloaded instance, with log_path in
# WORKDIR/<server>-preloaded/tracer; the reports it left are counted.
#
# Needs (Debian 12): nginx, wrk (or apache2-utils for ab), gdnsd, dnsperf,
# knot-dnsutils (kdig, to see gdnsd answer; gdnsdctl stops it).  A server whose programs are
# missing is skipped with a line naming the packages to install.
#
# Exit status: 0 every server measured; 1 a server or a client failed (the
# table says which); 2 usage error, or a server skipped.

set -euo pipefail

PROG=run-bench-real
# shellcheck source-path=SCRIPTDIR source=../lib/real-program.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/../lib/real-program.sh"
# shellcheck source-path=SCRIPTDIR source=bench-lib.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/bench-lib.sh"
# The table is this script's summary, not real-program.sh's key=value one.
rp_summary_done=1
prog=$PROG
RUN_TIMEOUT=60
export RUN_TIMEOUT

usage() {
	sed -n '3,/^$/{s/^# \{0,1\}//;p}' "$0"
}

preload=build/liblockdep-rcu.so
runs=5
seconds=5
verbose=0
workdir=
only=()
while (($# > 0)); do
	case $1 in
	--preload) (($# >= 2)) || die 2 "--preload needs a value"; preload=$2; shift 2 ;;
	--preload=*) preload=${1#*=}; shift ;;
	--runs) (($# >= 2)) || die 2 "--runs needs a value"; runs=$2; shift 2 ;;
	--runs=*) runs=${1#*=}; shift ;;
	--seconds) (($# >= 2)) || die 2 "--seconds needs a value"; seconds=$2; shift 2 ;;
	--seconds=*) seconds=${1#*=}; shift ;;
	--only) (($# >= 2)) || die 2 "--only needs a value"; only+=("$2"); shift 2 ;;
	--only=*) only+=("${1#*=}"); shift ;;
	-v | --verbose) verbose=1; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) die 2 "unknown option: $1 (try --help)" ;;
	*) [[ -z $workdir ]] || die 2 "only one WORKDIR expected"; workdir=$1; shift ;;
	esac
done
[[ -n $workdir ]] || die 2 "missing WORKDIR (try --help)"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die 2 "--runs must be a positive integer"
[[ $seconds =~ ^[1-9][0-9]*$ ]] || die 2 "--seconds must be a positive integer"
servers=(nginx gdnsd)
if ((${#only[@]} > 0)); then
	for s in "${only[@]}"; do
		[[ " ${servers[*]} " == *" $s "* ]] || die 2 "no server named $s (nginx, gdnsd)"
	done
	servers=("${only[@]}")
fi
preload=$(check_preload "$preload") || exit $?
mkdir -p -- "$workdir" || die 2 "cannot create $workdir"
workdir=$(realpath -- "$workdir")
[[ -z $(ls -A -- "$workdir") ]] || die 2 "WORKDIR is not empty: $workdir"
case $workdir in
*[[:space:]]* | *'"'* | *"'"* | *\\* | *'%'* | *'$'* | *[[:cntrl:]]*)
	die 2 "unsupported character in WORKDIR: $workdir" ;;
esac
chmod 755 "$workdir"
if setpriv --pdeathsig TERM true >/dev/null 2>&1; then
	deathsig=(setpriv --pdeathsig TERM)
fi

# Servers on CPU 1, clients on CPU 0, when there are two.
server_cpu=() client_cpu=() pinning="not pinned (one CPU)"
if (($(nproc) >= 2)) && command -v taskset >/dev/null 2>&1; then
	server_cpu=(taskset -c 1) client_cpu=(taskset -c 0)
	pinning="servers on CPU 1, clients on CPU 0"
fi

# instance_env SIDE DIR: the environment prefix of one instance, in env_cmd.
instance_env() {
	if [[ $1 == preloaded ]]; then
		mkdir -p "$2/tracer"
		chmod 1777 "$2/tracer"
		env_cmd=(env "LD_PRELOAD=$preload"
			"LOCKDEP_RCU_OPTIONS=${LOCKDEP_RCU_OPTIONS:+$LOCKDEP_RCU_OPTIONS:}log_path=$2/tracer/lockdep-rcu.%p.log")
	else
		env_cmd=(env -u LD_PRELOAD -u LOCKDEP_RCU_OPTIONS)
	fi
}

# Per server and side: pid, port, directory, samples, how it ended.
declare -A pid=() port=() dir=() samples=() errors=()
rows=()
status=0
rate=
skip_reason=
server_port=

# ---------------------------------------------------------------- nginx
nginx_client=""
nginx_start() {	# nginx_start SIDE
	local side=$1 d=$workdir/nginx-$1 p user=""
	dir[nginx $side]=$d
	mkdir -p "$d/htdocs" "$d/tmp"
	for ((k = 1; k <= 16; k++)); do
		head -c 768 /dev/urandom | base64 -w 64 >"$d/htdocs/f$k.html"
	done
	chmod -R a+rX "$d"
	if (($(id -u) == 0)); then
		user="user www-data;"
		chown www-data: "$d/tmp"
	fi
	reserve_port server_port	# (not a local: reserve_port has its own p)
	p=$server_port
	port[nginx $side]=$p
	cat >"$d/nginx.conf" <<EOF
# Generated by tests/bench/run-bench-real.sh
$user
worker_processes 1;
pid $d/nginx.pid;
error_log $d/error.log warn;
thread_pool default threads=4 max_queue=65536;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $d/tmp/body;
    proxy_temp_path $d/tmp/proxy;
    fastcgi_temp_path $d/tmp/fastcgi;
    uwsgi_temp_path $d/tmp/uwsgi;
    scgi_temp_path $d/tmp/scgi;
    types { text/html html; }
    sendfile off;
    aio threads;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$p;
        root $d/htdocs;
    }
}
EOF
	instance_env "$side" "$d"
	spawn "${env_cmd[@]}" "${server_cpu[@]}" nginx -p "$d" -c "$d/nginx.conf" -g 'daemon off;' \
		</dev/null >"$d/nginx.stdout" 2>"$d/nginx.stderr" &
	pid[nginx $side]=$!
	rp_track_pid "$!"
	wait_tcp "$p" 15 "$!"
}

# nginx_load SIDE SECONDS OUT: sets rate, requests per second ("" on
# failure), and notes what went wrong in errors.
nginx_load() {
	local p=${port[nginx $1]} out=$3 rc=0 bad
	if [[ $nginx_client == wrk ]]; then
		timeout -k 5 $(($2 + 30)) "${client_cpu[@]}" wrk -t1 -c16 -d"$2s" -s "$workdir/files.lua" \
			"http://127.0.0.1:$p/" >"$out" 2>&1 </dev/null || rc=$?
		rate=$(sed -n 's/^Requests\/sec:[[:space:]]*\([0-9.]*\).*/\1/p' "$out")
		bad=$(sed -n 's/^[[:space:]]*\(Non-2xx or 3xx responses\|Socket errors\): *\(.*\)/\2/p' "$out")
	else
		timeout -k 5 $(($2 + 30)) "${client_cpu[@]}" ab -q -k -c 16 -t "$2" -n 100000000 \
			"http://127.0.0.1:$p/f1.html" >"$out" 2>&1 </dev/null || rc=$?
		rate=$(sed -n 's/^Requests per second:[[:space:]]*\([0-9.]*\).*/\1/p' "$out")
		bad=$(sed -n 's/^\(Failed requests\|Non-2xx responses\):[[:space:]]*\([1-9][0-9]*\).*/\1 \2/p' "$out")
	fi
	if ((rc != 0)) || [[ -n $bad ]]; then
		errors[nginx $1]+="${errors[nginx $1]:+; }client exit $rc${bad:+, $bad}"
	fi
}

# *_prepare: checks what the server needs; sets skip_reason and fails when
# something is missing.
nginx_prepare() {
	command -v nginx >/dev/null || { skip_reason="missing nginx (apt-get install nginx)"; return 1; }
	if command -v wrk >/dev/null; then
		nginx_client=wrk
		cat >"$workdir/files.lua" <<'EOF'
-- 16 small files in turn
local n = 0
request = function()
    n = n % 16 + 1
    return wrk.format("GET", "/f" .. n .. ".html")
end
EOF
	elif command -v ab >/dev/null; then
		nginx_client=ab
		rp_log "wrk is missing (apt-get install wrk): driving nginx with ab, one file"
	else
		skip_reason="missing wrk or ab (apt-get install wrk)"
		return 1
	fi
	if (($(id -u) == 0)); then
		id www-data >/dev/null 2>&1 || { skip_reason="no user www-data"; return 1; }
		setpriv --reuid=www-data --regid=www-data --clear-groups test -r "$workdir" ||
			{ skip_reason="www-data cannot reach $workdir (make every directory above it searchable)"; return 1; }
	fi
}
nginx_label() { echo "$nginx_client req/s"; }

# ---------------------------------------------------------------- gdnsd
gdnsd_start() {	# gdnsd_start SIDE
	local side=$1 d=$workdir/gdnsd-$1 p
	dir[gdnsd $side]=$d
	(( ${#d} < 90 )) || { rp_log "WORKDIR path too long for gdnsd's control socket: $d"; return 1; }
	mkdir -p "$d/etc/zones" "$d/run" "$d/state"
	reserve_port server_port
	p=$server_port
	port[gdnsd $side]=$p
	cat >"$d/etc/config" <<EOF
# Generated by tests/bench/run-bench-real.sh
options => {
    listen => [ 127.0.0.1 ]
    dns_port => $p
    udp_threads => 1
    tcp_threads => 1
    run_dir => "$d/run"
    state_dir => "$d/state"
}
EOF
	{
		# shellcheck disable=SC2016  # $TTL is the zone file's
		printf '$TTL 300\n@\tSOA\tns1.example.lan. hostmaster.example.lan. 2024010101 3600 900 604800 300\n'
		printf '@\tNS\tns1.example.lan.\n@\tMX\t10 mail.example.lan.\nns1\tA\t192.0.2.1\n'
		printf 'mail\tA\t192.0.2.25\nwww\tA\t192.0.2.10\nwww\tA\t192.0.2.11\nwww\tAAAA\t2001:db8::10\n'
		for ((k = 1; k <= 32; k++)); do printf 'h%d\tA\t192.0.2.%d\n' "$k" $((100 + k)); done
	} >"$d/etc/zones/example.lan"
	instance_env "$side" "$d"
	spawn "${env_cmd[@]}" "${server_cpu[@]}" gdnsd -c "$d/etc" start \
		</dev/null >"$d/gdnsd.stdout" 2>"$d/gdnsd.stderr" &
	pid[gdnsd $side]=$!
	rp_track_pid "$!"
	local deadline=$((SECONDS + 20)) a
	while :; do
		alive "${pid[gdnsd $side]}" || return 1
		a=$(timeout -k 1 3 kdig -p "$p" @127.0.0.1 www.example.lan. A +short +timeout=1 +retry=0 \
			2>/dev/null) || a=""
		[[ -z $a ]] || return 0
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
}

# gdnsd_load SIDE SECONDS OUT: sets rate, queries per second ("" on
# failure), and notes what went wrong in errors.
gdnsd_load() {
	local p=${port[gdnsd $1]} out=$3 rc=0 lost
	timeout -k 5 $(($2 + 30)) "${client_cpu[@]}" dnsperf -s 127.0.0.1 -p "$p" -d "$workdir/queries.txt" \
		-l "$2" -c 1 -T 1 -q 100 >"$out" 2>&1 </dev/null || rc=$?
	rate=$(sed -n 's/^[[:space:]]*Queries per second:[[:space:]]*\([0-9.]*\).*/\1/p' "$out")
	lost=$(sed -n 's/^[[:space:]]*Queries lost:[[:space:]]*\([0-9]*\).*/\1/p' "$out")
	# A few queries in flight when the run stops may be counted lost.
	if ((rc != 0)) || [[ -z $lost ]] || ((lost > 100)); then
		errors[gdnsd $1]+="${errors[gdnsd $1]:+; }dnsperf exit $rc, ${lost:-?} queries lost"
	fi
}

gdnsd_prepare() {
	local missing=() t
	for t in gdnsd gdnsdctl dnsperf kdig; do
		command -v "$t" >/dev/null || missing+=("$t")
	done
	if ((${#missing[@]} > 0)); then
		skip_reason="missing ${missing[*]} (apt-get install gdnsd dnsperf knot-dnsutils)"
		return 1
	fi
	{
		for n in www ns1 mail; do printf '%s.example.lan. A\n' "$n"; done
		printf 'www.example.lan. AAAA\nexample.lan. MX\nexample.lan. NS\nexample.lan. SOA\n'
		for ((k = 1; k <= 32; k++)); do printf 'h%d.example.lan. A\n' "$k"; done
	} >"$workdir/queries.txt"
}
gdnsd_label() { echo "dnsperf q/s"; }

# ---------------------------------------------------------------- the runs
for s in "${servers[@]}"; do
	skip_reason=
	if ! "${s}_prepare"; then
		rows+=("$s: skipped: $skip_reason")
		status=2
		continue
	fi
	rp_log "$s: starting plain and preloaded instances ($pinning)"
	started=1
	for side in plain preloaded; do
		if ! "${s}_start" "$side"; then
			rp_log "$s ($side) did not start: see ${dir[$s $side]}"
			started=0
		fi
	done
	if ((started)); then
		for side in plain preloaded; do	# warm-up, not counted
			"${s}_load" "$side" 1 "${dir[$s $side]}/warmup.out"
		done
		rp_log "$s: $runs x $seconds s per instance, alternating"
		for ((i = 1; i <= runs; i++)); do
			for side in plain preloaded; do
				"${s}_load" "$side" "$seconds" "${dir[$s $side]}/load-$i.out"
				[[ -n $rate ]] || errors[$s $side]+="${errors[$s $side]:+; }run $i: no rate"
				samples[$s $side]+=" ${rate:-0}"
				sample_busy
			done
		done
	fi
	for side in plain preloaded; do
		[[ -n ${pid[$s $side]:-} ]] || continue
		# gdnsd's own way out exits 0; SIGTERM kills it
		if [[ $s == gdnsd ]] && alive "${pid[$s $side]}"; then
			timeout -k 2 30 gdnsdctl -c "${dir[$s $side]}/etc" -t 20 stop \
				>"${dir[$s $side]}/gdnsdctl.log" 2>&1 </dev/null || true
			wait_gone "${pid[$s $side]}" 20 || true
		fi
		how=$(stop_pid "${pid[$s $side]}" TERM 20)
		wait_status st "${pid[$s $side]}"
		[[ $how != sigkill ]] || errors[$s $side]+="${errors[$s $side]:+; }ignored SIGTERM"
		((st == 0)) || errors[$s $side]+="${errors[$s $side]:+; }exit status $st"
	done
	reports=$(cat "${dir[$s preloaded]}"/tracer/lockdep-rcu.*.log "${dir[$s preloaded]}/$s.stderr" 2>/dev/null |
		grep -cE '^={4,}$') || true
	if ((!started)); then
		rows+=("$s: failed to start (see $workdir/$s-*)")
		status=1
		continue
	fi
	read -r client unit <<<"$("${s}_label")"
	# The slowdown is the median of the paired ratios, load i plain over
	# load i preloaded (neighbours in time see the same machine).
	# shellcheck disable=SC2046,SC2086  # the sample lists split on purpose
	rows+=("$(LC_ALL=C awk -v s="$s" -v c="$client" -v u="$unit" \
		-v a="$(median ${samples[$s plain]})" -v b="$(median ${samples[$s preloaded]})" -v r="$reports" \
		-v x="$(median $(LC_ALL=C awk -v a="${samples[$s plain]}" -v b="${samples[$s preloaded]}" 'BEGIN {
			n = split(a, p, " "); split(b, q, " ")
			for (i = 1; i <= n; i++) printf "%.6f\n", (q[i] > 0) ? p[i] / q[i] : 0 }'))" 'BEGIN {
		printf "%-7s %-8s %12.0f %-5s %12.0f %-5s %7.2fx %8d", s, c, a, u, b, u, x, r }')")
	for side in plain preloaded; do
		if [[ -n ${errors[$s $side]:-} ]]; then
			rows+=("  $s $side: ${errors[$s $side]} (see ${dir[$s $side]})")
			status=1
		fi
	done
done
rp_release_ports

printf '%-7s %-8s %18s %18s %8s %8s\n' server client plain preloaded slowdown reports
printf '%s\n' "${rows[@]}"
printf '(medians of %d alternating loads of %d s per instance; %s;\n slowdown: median of the ratios plain / preloaded throughput of each pair of loads)\n' \
	"$runs" "$seconds" "$pinning"
busy_note
if ((verbose)); then
	for s in "${servers[@]}"; do
		for side in plain preloaded; do
			[[ -n ${samples[$s $side]:-} ]] && printf '  %s %s:%s\n' "$s" "$side" "${samples[$s $side]}"
		done
	done
	printf 'preload: %s\n' "$preload"
fi
exit "$status"
