#!/usr/bin/env bash
# run-knot.sh - run Knot DNS (knotd, kzonecheck) on 127.0.0.1, optionally
# with an LD_PRELOAD library (the lockdep-rcu checker), and check that the
# server still answers every query right.
#
# Usage: tests/knot/run-knot.sh [--preload PATH] [--queries N] WORKDIR
#
#   --preload PATH  LD_PRELOAD=PATH is set for knotd and kzonecheck only
#                   (never for kdig, dnsperf or knotc).  An empty PATH means
#                   no preload.  LOCKDEP_RCU_OPTIONS is passed through from
#                   the caller's environment unchanged.  Any LD_PRELOAD that
#                   the caller itself has set is dropped: --preload is the
#                   only way in.
#   --queries N     total number of dnsperf queries, 1..1000000 (default
#                   2000); dnsperf is also limited to 10 seconds.
#   WORKDIR         created if missing; must be empty (never share one).
#
# Needs (Debian 12): knot (knotd, knotc), knot-dnsutils (kdig),
# knot-dnssecutils (kzonecheck), dnsperf, util-linux (flock, setpriv), coreutils.
#
# Files left in WORKDIR:
#   knot.conf, zones/example.test.zone, zones/bad.example.test.zone,
#   knotd.stderr (knotd's stderr: the preload's reports go here),
#   knotd.stdout, knotd.log (knotd's own log),
#   kdig.log (every query with expected and actual answer), kdig.stderr,
#   knotc.out, run/ and db/ (knotd's rundir and storage),
#   queries.txt, dnsperf.out, dnsperf.stderr,
#   kzonecheck.stdout, kzonecheck.stderr (valid zone),
#   kzonecheck-bad.stdout, kzonecheck-bad.stderr (zone with a syntax error),
#   run-info.txt.
#
# stdout carries only the summary, one key=value per line:
#   port= kdig_checked= kdig_wrong= dnsperf_sent= dnsperf_completed=
#   dnsperf_lost= knotd_exit= kzonecheck_exit=
# followed by extra keys: dnsperf_requested= dnsperf_noerror=
#   knotd_started= knotd_stop= kzonecheck_bad_exit= preload= result=
# knotd_exit / kzonecheck_exit / kzonecheck_bad_exit are -1 when the program
# was not run (or could not be waited for), 128+N when killed by signal N,
# 124 when `timeout` had to stop kzonecheck.  knotd_stop says how knotd
# ended: knotc, sigterm, sigkill, exited (before the stop), exited-early
# (before it answered), cleanup (script interrupted), none (never started).
# kdig_checked is 26 (13 RRsets over UDP and over TCP); if knotd never
# answered, kdig_checked=0 and kdig_wrong=26.  result= is pass, fail, or
# error (the script was interrupted or hit a setup error after starting).
#
# kzonecheck_bad_exit: kzonecheck on a zone file with a syntax error; it is
# expected to be 1.  That run is there because Knot's logger takes
# urcu_memb_read_lock() on kzonecheck's main thread, which never calls
# urcu_memb_register_thread(); a valid zone logs nothing, so the plain run
# takes no RCU read side at all.
#
# Exit status: 0 if the server answered every kdig and dnsperf query right
# (every query dnsperf sent was completed with NOERROR, none lost; if the
# 10 s limit stopped dnsperf before it sent them all, dnsperf_sent is less
# than dnsperf_requested and that alone is not a failure), 1 otherwise, 2 on
# a usage or setup error.  knotd_exit and the kzonecheck
# exit codes are reported but do not change the exit status.
#
# Only 127.0.0.1 is ever used.  The port is chosen here: below the ephemeral
# range, not used by any socket, and reserved against concurrent runs of
# this script by a lock file in /tmp/lockdep-rcu-knot-ports.  knotd never
# outlives this script (EXIT trap).

set -euo pipefail

unset LD_PRELOAD

readonly PROG=run-knot
readonly ZONE=example.test.
readonly START_TIMEOUT=10      # seconds to wait for knotd's first answer
readonly STOP_TIMEOUT=10       # seconds to wait for knotd to exit after stop
readonly DNSPERF_SECONDS=10    # dnsperf -l
readonly LOCK_DIR=/tmp/lockdep-rcu-knot-ports
readonly MAX_START_ATTEMPTS=5

log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
die() { log "error: $*"; exit 2; }
usage() {
	printf 'usage: %s [--preload PATH] [--queries N] WORKDIR\n' "$0" >&2
	exit 2
}

# ---------------------------------------------------------------- arguments
preload=""
queries=2000
workdir=""
while (($# > 0)); do
	case $1 in
	--preload) (($# >= 2)) || usage; preload=$2; shift 2 ;;
	--preload=*) preload=${1#*=}; shift ;;
	--queries) (($# >= 2)) || usage; queries=$2; shift 2 ;;
	--queries=*) queries=${1#*=}; shift ;;
	-h | --help) usage ;;
	--) shift; break ;;
	-*) log "unknown option: $1"; usage ;;
	*) [[ -z $workdir ]] || usage; workdir=$1; shift ;;
	esac
done
if (($# > 0)); then
	[[ -z $workdir && $# -eq 1 ]] || usage
	workdir=$1
fi
[[ -n $workdir ]] || usage
if ! [[ $queries =~ ^[1-9][0-9]{0,6}$ ]] || ((queries > 1000000)); then
	die "--queries must be an integer in 1..1000000"
fi

for tool in knotd knotc kdig dnsperf kzonecheck flock timeout; do
	command -v "$tool" >/dev/null 2>&1 || {
		log "skipped: $tool is not installed (bash tools/install-deps.sh servers)"
		exit 77   # automake's "skipped"
	}
done

if [[ -n $preload ]]; then
	[[ -f $preload && -r $preload ]] || die "preload library not found: $preload"
	preload=$(realpath -- "$preload")
fi

mkdir -p -- "$workdir" || die "cannot create $workdir"
workdir=$(realpath -- "$workdir")
[[ -z $(ls -A -- "$workdir") ]] || die "WORKDIR is not empty: $workdir"
# The path goes into knot.conf between double quotes, and '%' would be
# expanded by Knot's path formatters.
case $workdir in
*'"'* | *\\* | *'%'* | *[[:cntrl:]]*) die "unsupported character in WORKDIR: $workdir" ;;
esac

# ------------------------------------------------------------------- state
port=0
kdig_checked=0
kdig_wrong=0
dnsperf_sent=0
dnsperf_completed=0
dnsperf_lost=0
dnsperf_noerror=0
knotd_exit=-1
knotd_started=0
knotd_stop=none
kzonecheck_exit=-1
kzonecheck_bad_exit=-1
knotd_pid=""
fg_pid=""
lock_fd=""
ctl_dir=""
summary_done=0

conf=$workdir/knot.conf
zonefile=$workdir/zones/example.test.zone
badzonefile=$workdir/zones/bad.example.test.zone

preload_env=()
if [[ -n $preload ]]; then
	preload_env=(env "LD_PRELOAD=$preload")
fi
# knotd (and dnsperf, kzonecheck) get SIGTERM if this script dies, even by
# SIGKILL.
deathsig=()
if setpriv --pdeathsig TERM true >/dev/null 2>&1; then
	deathsig=(setpriv --pdeathsig TERM)
fi

# ------------------------------------------------------------ process utils
# True while PID is a live process (a zombie child counts as gone).
alive() {
	local pid=$1 stat
	[[ -r /proc/$pid/stat ]] || return 1
	stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != Z ]]
}

# wait_gone PID SECONDS: true once PID has exited, false on timeout.
wait_gone() {
	local pid=$1 deadline=$((SECONDS + $2))
	while alive "$pid"; do
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
	return 0
}

# run_waited OUT ERR CMD...: run CMD (stdin /dev/null, stdout to OUT,
# stderr to ERR) in the background and wait for it, so that a signal to this
# script is acted on at once (cleanup then stops CMD).  The redirections are
# not put on the function call: a trap running meanwhile would inherit them.
run_waited() {
	local rc=0 out=$1 err=$2
	shift 2
	"${deathsig[@]}" "$@" </dev/null >"$out" 2>"$err" &
	fg_pid=$!
	wait "$fg_pid" || rc=$?
	fg_pid=""
	return "$rc"
}

# Reap knotd (already exited) and record its exit status.
reap_knotd() {
	local rc=0
	wait "$knotd_pid" 2>/dev/null || rc=$?
	knotd_exit=$rc
	knotd_pid=""
}

# Stop knotd: knotc stop, then SIGTERM, then SIGKILL.  Bounded.
stop_knotd() {
	[[ -n $knotd_pid ]] || return 0
	if alive "$knotd_pid"; then
		knotd_stop=knotc
		timeout -k 2 15 knotc -s "$ctl_sock" -t 5 stop \
			>>"$workdir/knotc.out" 2>&1 || log "knotc stop failed (see knotc.out)"
		if ! wait_gone "$knotd_pid" "$STOP_TIMEOUT"; then
			log "knotd still running after knotc stop; sending SIGTERM"
			knotd_stop=sigterm
			kill -TERM "$knotd_pid" 2>/dev/null || true
			if ! wait_gone "$knotd_pid" "$STOP_TIMEOUT"; then
				log "knotd ignores SIGTERM; sending SIGKILL"
				knotd_stop=sigkill
				kill -KILL "$knotd_pid" 2>/dev/null || true
				wait_gone "$knotd_pid" 5 || true
			fi
		fi
	else
		knotd_stop=exited
	fi
	reap_knotd
}

release_port() {
	if [[ -n $lock_fd ]]; then
		exec {lock_fd}>&-
		lock_fd=""
	fi
}

print_summary() {
	local result=$1
	((summary_done == 0)) || return 0
	summary_done=1
	cat <<EOF
port=$port
kdig_checked=$kdig_checked
kdig_wrong=$kdig_wrong
dnsperf_sent=$dnsperf_sent
dnsperf_completed=$dnsperf_completed
dnsperf_lost=$dnsperf_lost
knotd_exit=$knotd_exit
kzonecheck_exit=$kzonecheck_exit
dnsperf_requested=$queries
dnsperf_noerror=$dnsperf_noerror
knotd_started=$knotd_started
knotd_stop=$knotd_stop
kzonecheck_bad_exit=$kzonecheck_bad_exit
preload=${preload:-none}
result=$result
EOF
}

# Invoked through the EXIT trap only.
# shellcheck disable=SC2317
cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	if [[ -n $fg_pid ]]; then
		kill -TERM "$fg_pid" 2>/dev/null || true
	fi
	if [[ -n $knotd_pid ]]; then
		if alive "$knotd_pid"; then
			knotd_stop=cleanup
			kill -TERM "$knotd_pid" 2>/dev/null || true
			wait_gone "$knotd_pid" 5 || kill -KILL "$knotd_pid" 2>/dev/null || true
			wait_gone "$knotd_pid" 5 || true
		fi
		reap_knotd
	fi
	release_port
	if [[ -n $ctl_dir ]]; then
		rm -rf -- "$ctl_dir"
	fi
	if ((summary_done == 0)); then
		print_summary error
		((rc != 0)) || rc=2
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --------------------------------------------------------------- zone data
# owner TYPE rdata, rdata written exactly as `kdig +short` prints it, so the
# same table gives the zone file and the expected answers.
records=(
	"example.test. SOA ns1.example.test. hostmaster.example.test. 2024010101 3600 900 604800 300"
	"example.test. NS ns1.example.test."
	"example.test. NS ns2.example.test."
	"example.test. MX 10 mail.example.test."
	"example.test. MX 20 mail2.example.test."
	"example.test. TXT \"v=lockdep-rcu test zone\""
	"ns1.example.test. A 192.0.2.1"
	"ns1.example.test. AAAA 2001:db8::1"
	"ns2.example.test. A 192.0.2.2"
	"www.example.test. A 192.0.2.10"
	"www.example.test. A 192.0.2.11"
	"www.example.test. AAAA 2001:db8::10"
	"mail.example.test. A 192.0.2.25"
	"mail.example.test. AAAA 2001:db8::25"
	"mail2.example.test. A 192.0.2.26"
	"txt.example.test. TXT \"hello world\""
	"txt.example.test. TXT \"second string\""
)

declare -A expected=()
qkeys=() # "owner TYPE", in first-seen order
for rr in "${records[@]}"; do
	read -r owner type rdata <<<"$rr"
	key="$owner $type"
	if [[ -z ${expected[$key]+set} ]]; then
		qkeys+=("$key")
		expected[$key]=$rdata
	else
		expected[$key]+=$'\n'$rdata
	fi
done

mkdir -p "$workdir/zones" "$workdir/run" "$workdir/db"
{
	printf '%s %s\n%s 300\n' "\$ORIGIN" "$ZONE" "\$TTL"
	for rr in "${records[@]}"; do
		read -r owner type rdata <<<"$rr"
		printf '%s\t300\tIN\t%s\t%s\n' "$owner" "$type" "$rdata"
	done
} >"$zonefile"
{
	printf '%s %s\n%s 300\n' "\$ORIGIN" "$ZONE" "\$TTL"
	printf '@\tIN\tSOA\tns1 hostmaster 1 3600 900 604800 300\n'
	printf '@\tIN\tNS\tns1\n'
	printf 'ns1\tIN\tA\t192.0.2.1\n'
	printf 'broken\tIN\tA\t999.0.2.1\n'
} >"$badzonefile"

# -------------------------------------------------------------- port choice
# Ports below the ephemeral range, so that no client socket (kdig, dnsperf,
# anything else on the machine) is handed the same number.
read -r eph_lo eph_hi </proc/sys/net/ipv4/ip_local_port_range || { eph_lo=32768; eph_hi=60999; }
if ((eph_lo > 21024)); then
	port_lo=20000 port_hi=$((eph_lo - 1))
elif ((eph_hi < 64000)); then
	port_lo=$((eph_hi + 1)) port_hi=65000
else
	port_lo=20000 port_hi=30000
fi

# True if any IPv4/IPv6 TCP or UDP socket, in any state, has local port $1.
port_in_use() {
	local hex
	hex=$(printf '%04X' "$1")
	awk -v h=":$hex" 'FNR > 1 { if (substr($2, length($2) - 4) == h) found = 1 }
		END { exit !found }' /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6 2>/dev/null
}

# Inodes of listening TCP / unconnected UDP sockets on local port $1.
port_socket_inodes() {
	local hex
	hex=$(printf '%04X' "$1")
	awk -v h=":$hex" 'FNR > 1 && substr($2, length($2) - 4) == h {
			if ((FILENAME ~ /tcp/ && $4 == "0A") || (FILENAME ~ /udp/ && $4 == "07")) print $10
		}' /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6 2>/dev/null | sort -u
}

# Socket inodes open in process $1.
pid_socket_inodes() {
	local fd link
	for fd in /proc/"$1"/fd/*; do
		link=$(readlink "$fd" 2>/dev/null) || continue
		[[ $link == socket:\[*\] ]] || continue
		link=${link#socket:[}
		printf '%s\n' "${link%]}"
	done | sort -u
}

# Pick a free port and hold its lock (lock_fd) until release_port.
reserve_port() {
	local i p span=$((port_hi - port_lo + 1))
	mkdir -p "$LOCK_DIR" 2>/dev/null || true
	chmod 1777 "$LOCK_DIR" 2>/dev/null || true
	for ((i = 0; i < 200; i++)); do
		p=$((port_lo + (RANDOM * 32768 + RANDOM + $$ + i * 7919) % span))
		port_in_use "$p" && continue
		exec {lock_fd}>"$LOCK_DIR/$p.lock" || { lock_fd=""; continue; }
		if flock -n "$lock_fd"; then
			# Checked again now that the lock is ours.
			if ! port_in_use "$p"; then
				port=$p
				return 0
			fi
		fi
		release_port
	done
	return 1
}

# ------------------------------------------------------------ knotd config
ctl_sock=$workdir/run/knot.sock
if ((${#ctl_sock} > 100)); then
	# sun_path holds at most 107 bytes.
	ctl_dir=$(mktemp -d /tmp/lockdep-rcu-knotctl.XXXXXX)
	ctl_sock=$ctl_dir/knot.sock
fi

write_conf() {
	cat >"$conf" <<EOF
# Generated by tests/knot/run-knot.sh
server:
    rundir: "$workdir/run"
    pidfile: "$workdir/run/knot.pid"
    user: $(id -un):$(id -gn)
    listen: 127.0.0.1@$port
    udp-workers: 2
    tcp-workers: 2
    background-workers: 2

control:
    listen: "$ctl_sock"

log:
  - target: "$workdir/knotd.log"
    any: info

database:
    storage: "$workdir/db"

template:
  - id: default
    storage: "$workdir/zones"
    semantic-checks: on
    zonefile-load: whole
    zonefile-sync: -1
    journal-content: none

zone:
  - domain: $ZONE
    file: "$zonefile"
EOF
}

# kdig_short NAME TYPE [kdig options...]: answer section, one RR a line.
kdig_short() {
	local name=$1 type=$2
	shift 2
	timeout -k 2 10 kdig -p "$port" @127.0.0.1 "$name" "$type" +short \
		+timeout=2 +retry=1 "$@" 2>>"$workdir/kdig.stderr"
}

# Start knotd on the reserved port and wait for it to serve the zone.
# Returns 0 when up, 1 on a fatal failure, 3 if the port turned out taken.
start_knotd() {
	write_conf
	touch "$workdir/knotd.log" "$workdir/knotd.stderr"
	local log_off stderr_off
	log_off=$(stat -c %s "$workdir/knotd.log")
	stderr_off=$(stat -c %s "$workdir/knotd.stderr")
	log "starting knotd on 127.0.0.1@$port${preload:+ with LD_PRELOAD=$preload}"
	"${deathsig[@]}" "${preload_env[@]}" knotd -c "$conf" </dev/null \
		>>"$workdir/knotd.stdout" 2>>"$workdir/knotd.stderr" &
	knotd_pid=$!
	local deadline=$((SECONDS + START_TIMEOUT)) answer
	while :; do
		if ! alive "$knotd_pid"; then
			reap_knotd
			knotd_stop=exited-early
			# Only what this attempt wrote.
			if { tail -c +$((log_off + 1)) "$workdir/knotd.log"
				tail -c +$((stderr_off + 1)) "$workdir/knotd.stderr"; } |
				grep -qiE 'cannot bind|address already in use'; then
				log "port $port was taken (knotd exit $knotd_exit); trying another"
				return 3
			fi
			log "knotd exited early with status $knotd_exit (see knotd.log, knotd.stderr)"
			return 1
		fi
		answer=$(timeout -k 1 3 kdig -p "$port" @127.0.0.1 "$ZONE" SOA +short \
			+timeout=1 +retry=0 2>/dev/null) || answer=""
		[[ -z $answer ]] || break
		if ((SECONDS >= deadline)); then
			log "knotd did not answer within ${START_TIMEOUT}s"
			return 1
		fi
		sleep 0.2
	done
	# Every listening socket on the port must be knotd's: another process
	# sharing it through SO_REUSEPORT would take part of the queries.
	local foreign
	foreign=$(comm -23 <(port_socket_inodes "$port") <(pid_socket_inodes "$knotd_pid"))
	if [[ -n $foreign ]]; then
		log "another process listens on port $port too; trying another port"
		return 3
	fi
	return 0
}

# ------------------------------------------------------------------- run
{
	printf 'date=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	printf 'preload=%s\n' "${preload:-none}"
	printf 'LOCKDEP_RCU_OPTIONS=%s\n' "${LOCKDEP_RCU_OPTIONS-<unset>}"
	printf 'knotd=%s\n' "$(knotd -V 2>&1 | head -n 1)"
	printf 'queries=%s\n' "$queries"
} >"$workdir/run-info.txt"

started=0
for ((attempt = 1; attempt <= MAX_START_ATTEMPTS; attempt++)); do
	reserve_port || die "no free port in $port_lo..$port_hi"
	rc=0
	start_knotd || rc=$?
	if ((rc == 0)); then
		started=1
		break
	fi
	stop_knotd
	release_port
	((rc == 3)) || break
	knotd_exit=-1
	knotd_stop=none
done
printf 'port=%s\n' "$port" >>"$workdir/run-info.txt"

if ((started)); then
	knotd_started=1

	# Every RRset over UDP and over TCP.
	for proto in udp tcp; do
		opts=()
		[[ $proto == udp ]] || opts=(+tcp)
		for key in "${qkeys[@]}"; do
			read -r name type <<<"$key"
			kdig_checked=$((kdig_checked + 1))
			krc=0
			got=$(kdig_short "$name" "$type" "${opts[@]}") || krc=$?
			got_sorted=$(printf '%s\n' "$got" | sed '/^$/d' | LC_ALL=C sort)
			want_sorted=$(printf '%s\n' "${expected[$key]}" | LC_ALL=C sort)
			if ((krc == 0)) && [[ $got_sorted == "$want_sorted" ]]; then
				verdict=ok
			else
				verdict=WRONG
				kdig_wrong=$((kdig_wrong + 1))
				log "wrong answer ($proto) for $name $type: got [${got//$'\n'/ | }] (kdig exit $krc)"
			fi
			printf '%s %s %s %s kdig_exit=%s\n  want: %s\n  got:  %s\n' "$verdict" "$proto" "$name" \
				"$type" "$krc" "${want_sorted//$'\n'/ | }" "${got_sorted//$'\n'/ | }" >>"$workdir/kdig.log"
		done
	done

	# dnsperf: $queries queries in one pass over a file of that many lines.
	qfile=$workdir/queries.txt
	printf '%s\n' "${qkeys[@]}" |
		awk -v n="$queries" '{ q[NR - 1] = $0 } END { for (i = 0; i < n; i++) print q[i % NR] }' >"$qfile"
	log "dnsperf: $queries queries, at most ${DNSPERF_SECONDS}s"
	dnsperf_rc=0
	run_waited "$workdir/dnsperf.out" "$workdir/dnsperf.stderr" \
		timeout -k 5 $((DNSPERF_SECONDS + 20)) dnsperf -s 127.0.0.1 -p "$port" -d "$qfile" \
		-n 1 -l "$DNSPERF_SECONDS" -t 5 -q 50 || dnsperf_rc=$?
	perf_field() {
		sed -n "s/^[[:space:]]*$1:[[:space:]]*\([0-9][0-9]*\).*/\1/p" "$workdir/dnsperf.out" | head -n 1
	}
	dnsperf_sent=$(perf_field 'Queries sent')
	dnsperf_completed=$(perf_field 'Queries completed')
	dnsperf_lost=$(perf_field 'Queries lost')
	dnsperf_interrupted=$(perf_field 'Queries interrupted')
	dnsperf_noerror=$(sed -n 's/^[[:space:]]*Response codes:.*NOERROR \([0-9][0-9]*\).*/\1/p' \
		"$workdir/dnsperf.out" | head -n 1)
	: "${dnsperf_sent:=0}" "${dnsperf_completed:=0}" "${dnsperf_lost:=0}"
	: "${dnsperf_interrupted:=0}" "${dnsperf_noerror:=0}"
	if ((dnsperf_rc != 0)); then
		log "dnsperf exited with status $dnsperf_rc (see dnsperf.out, dnsperf.stderr)"
	fi
	if ((dnsperf_sent < queries)); then
		log "note: dnsperf sent $dnsperf_sent of $queries queries within ${DNSPERF_SECONDS}s"
	fi
else
	kdig_wrong=$((${#qkeys[@]} * 2))
	dnsperf_rc=-1
	dnsperf_interrupted=0
fi

stop_knotd
release_port
log "knotd exit status $knotd_exit (stopped by: $knotd_stop)"

# kzonecheck, with the preload if any.
kzonecheck_exit=0
run_waited "$workdir/kzonecheck.stdout" "$workdir/kzonecheck.stderr" \
	timeout -k 5 60 "${preload_env[@]}" kzonecheck -o "$ZONE" "$zonefile" || kzonecheck_exit=$?
kzonecheck_bad_exit=0
run_waited "$workdir/kzonecheck-bad.stdout" "$workdir/kzonecheck-bad.stderr" \
	timeout -k 5 60 "${preload_env[@]}" kzonecheck -o "$ZONE" "$badzonefile" || kzonecheck_bad_exit=$?
log "kzonecheck exit status $kzonecheck_exit (bad zone: $kzonecheck_bad_exit, expected 1)"

result=pass
if ((!started)); then
	result=fail
elif ((kdig_wrong != 0 || kdig_checked != ${#qkeys[@]} * 2)); then
	result=fail
elif ((dnsperf_rc != 0 || dnsperf_sent == 0 || dnsperf_lost != 0 || dnsperf_interrupted != 0 ||
	dnsperf_completed != dnsperf_sent || dnsperf_noerror != dnsperf_completed)); then
	result=fail
fi

print_summary "$result"
[[ $result == pass ]] || exit 1
exit 0
