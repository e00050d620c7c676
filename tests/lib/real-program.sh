# real-program.sh - common part of the real-program harnesses
# (tests/<prog>/run-<prog>.sh).  Sourced, never run.  The model is
# tests/knot/run-knot.sh: loopback only, a port below the ephemeral range
# reserved with a lock file, every server killed by an EXIT trap, a WORKDIR
# that must be empty, key=value summary on stdout, exit 0 / 1 / 2.
#
# The sourcing script sets before sourcing:
#   PROG          name used in messages (run-unbound, ...)
#   LOAD_DEFAULT  default of --load (the workload size; each script says what
#                 it counts), LOAD_MAX its upper bound
#   REQUIRED_TOOLS  commands that must exist (else exit 2)
#   INSTALL_HINT    the Debian packages that provide them
# and may define rp_extra_option NAME VALUE (returns 0 when it took the
# option) for its own options, all of the form --name VALUE.
#
# Common options: --preload PATH (LD_PRELOAD for the program under test only,
# never for its clients; empty = none), --load N, WORKDIR.
#
# The tracer's reports: the program under test gets
#   LOCKDEP_RCU_OPTIONS=<caller's LOCKDEP_RCU_OPTIONS>:log_path=WORKDIR/tracer/lockdep-rcu.%p.log
# (the README's documented log_path, one file per process, reopened by forked
# children), so that daemons that close or redirect their stderr, fork, or
# drop privileges still leave their reports.  WORKDIR/tracer is mode 1777.
# Anything the tracer had to print on stderr instead is in the program's
# stderr file, also in WORKDIR.

unset LD_PRELOAD

readonly RP_LOCK_DIR=/tmp/lockdep-rcu-real-ports

rp_log() { printf '%s: %s\n' "$PROG" "$*" >&2; }
rp_die() { rp_log "error: $*"; exit 2; }
rp_usage() {
	printf 'usage: %s [--preload PATH] [--load N]%s WORKDIR\n' "$0" "${EXTRA_USAGE:-}" >&2
	exit 2
}

# ---------------------------------------------------------------- arguments
preload=""
load=${LOAD_DEFAULT:-100}
workdir=""
tracer_dir=/nonexistent
under_test=()
deathsig=()
rp_parse_args() {
	while (($# > 0)); do
		case $1 in
		--preload) (($# >= 2)) || rp_usage; preload=$2; shift 2 ;;
		--preload=*) preload=${1#*=}; shift ;;
		--load) (($# >= 2)) || rp_usage; load=$2; shift 2 ;;
		--load=*) load=${1#*=}; shift ;;
		-h | --help) rp_usage ;;
		--) shift; break ;;
		--*=*)
			declare -F rp_extra_option >/dev/null && rp_extra_option "${1%%=*}" "${1#*=}" ||
				{ rp_log "unknown option: $1"; rp_usage; }
			shift ;;
		--*)
			(($# >= 2)) || rp_usage
			declare -F rp_extra_option >/dev/null && rp_extra_option "$1" "$2" ||
				{ rp_log "unknown option: $1"; rp_usage; }
			shift 2 ;;
		*) [[ -z $workdir ]] || rp_usage; workdir=$1; shift ;;
		esac
	done
	if (($# > 0)); then
		[[ -z $workdir && $# -eq 1 ]] || rp_usage
		workdir=$1
	fi
	[[ -n $workdir ]] || rp_usage
	if ! [[ $load =~ ^[1-9][0-9]{0,6}$ ]] || ((load > ${LOAD_MAX:-1000000})); then
		rp_die "--load must be an integer in 1..${LOAD_MAX:-1000000}"
	fi
	local tool
	for tool in ${REQUIRED_TOOLS:-} flock timeout setpriv; do
		# 77, automake's "skipped": the servers are an install tier of
		# their own (bash tools/install-deps.sh servers)
		command -v "$tool" >/dev/null 2>&1 || [[ -x $tool ]] || {
			rp_log "skipped: $tool is not installed (bash tools/install-deps.sh servers)"
			exit 77
		}
	done
	if [[ -n $preload ]]; then
		[[ -f $preload && -r $preload ]] || rp_die "preload library not found: $preload"
		preload=$(realpath -- "$preload")
	fi
	mkdir -p -- "$workdir" || rp_die "cannot create $workdir"
	workdir=$(realpath -- "$workdir")
	[[ -z $(ls -A -- "$workdir") ]] || rp_die "WORKDIR is not empty: $workdir"
	case $workdir in
	*[[:space:]]* | *'"'* | *"'"* | *\\* | *'%'* | *'$'* | *[[:cntrl:]]*)
		rp_die "unsupported character in WORKDIR: $workdir" ;;
	esac
	tracer_dir=$workdir/tracer
	mkdir -p "$tracer_dir"
	chmod 1777 "$tracer_dir"
	tracer_options="${LOCKDEP_RCU_OPTIONS:+$LOCKDEP_RCU_OPTIONS:}log_path=$tracer_dir/lockdep-rcu.%p.log"
	# The command prefix that starts the program under test.
	if [[ -n $preload ]]; then
		under_test=(env "LD_PRELOAD=$preload" "LOCKDEP_RCU_OPTIONS=$tracer_options")
	else
		under_test=(env -u LD_PRELOAD -u LOCKDEP_RCU_OPTIONS)
	fi
	deathsig=()
	if setpriv --pdeathsig TERM true >/dev/null 2>&1; then
		deathsig=(setpriv --pdeathsig TERM)
	fi
	{
		printf 'date=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		printf 'preload=%s\n' "${preload:-none}"
		printf 'LOCKDEP_RCU_OPTIONS=%s\n' "${LOCKDEP_RCU_OPTIONS-<unset>}"
		printf 'load=%s\n' "$load"
	} >"$workdir/run-info.txt"
}

# ------------------------------------------------------------ process utils
# True while PID is a live process (a zombie counts as gone).
alive() {
	local pid=$1 stat
	[[ -n $pid && -r /proc/$pid/stat ]] || return 1
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

# Processes to kill on exit: pids, and pid files read at cleanup time (for
# daemons that fork away from us).
rp_pids=()
rp_pidfiles=()
fg_pid=""
rp_track_pid() { rp_pids+=("$1"); }
rp_track_pidfile() { rp_pidfiles+=("$1"); }

# run_waited OUT ERR CMD...: run CMD (stdin /dev/null) in the background and
# wait for it, so that a signal to this script is acted on at once.
run_waited() {
	local rc=0 out=$1 err=$2
	shift 2
	"${deathsig[@]}" "$@" </dev/null >"$out" 2>"$err" &
	fg_pid=$!
	wait "$fg_pid" || rc=$?
	fg_pid=""
	return "$rc"
}

# spawn CMD...: run CMD in the background (the caller takes $!) without the
# port lock descriptors, which must not leak into the servers: they would show
# in their descriptor tables, and keep the ports locked after we are gone.
# Every other inherited descriptor above 2 is closed too (a test runner's
# arena and pipes, a terminal's leftovers), so that the servers start with the
# same table wherever the harness runs.
spawn() {
	local fd
	for fd in /proc/self/fd/*; do
		fd=${fd##*/}
		((fd > 2 && fd != 255)) || continue
		exec {fd}>&- 2>/dev/null || true
	done
	exec "${deathsig[@]}" "$@"
}

# wait_status VAR PID: VAR becomes the exit status of our child PID (128+N
# if killed by N). Never in a $(...) subshell: a subshell cannot wait for
# its parent's child, and bash then answers -1 when the child had not been
# reaped yet (a race seen with slow exits).
wait_status() {
	local __rc=0
	wait "$2" 2>/dev/null || __rc=$?
	printf -v "$1" '%s' "$__rc"
}

# stop_pid PID SIGNAL SECONDS: send SIGNAL, wait, then SIGKILL.  Prints how
# it ended: signal name, sigkill, or exited (it was gone already).
stop_pid() {
	local pid=$1 sig=$2 secs=$3
	if ! alive "$pid"; then
		echo exited
		return 0
	fi
	kill -"$sig" "$pid" 2>/dev/null || true
	if wait_gone "$pid" "$secs"; then
		echo "$sig"
		return 0
	fi
	rp_log "pid $pid ignores SIG$sig; sending SIGKILL"
	kill -KILL "$pid" 2>/dev/null || true
	wait_gone "$pid" 5 || true
	echo sigkill
}

rp_summary_done=0
rp_port_fds=()
# Invoked through the EXIT trap only.
# shellcheck disable=SC2317
rp_cleanup() {
	local rc=$? pid f
	trap - EXIT INT TERM HUP
	[[ -z $fg_pid ]] || kill -TERM "$fg_pid" 2>/dev/null || true
	if declare -F rp_cleanup_hook >/dev/null; then
		rp_cleanup_hook || true
	fi
	for f in "${rp_pidfiles[@]}"; do
		[[ -r $f ]] || continue
		pid=$(head -n 1 "$f" 2>/dev/null | tr -dc 0-9) || continue
		[[ -n $pid ]] && rp_pids+=("$pid")
	done
	for pid in "${rp_pids[@]}"; do
		alive "$pid" && kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${rp_pids[@]}"; do
		wait_gone "$pid" 5 || kill -KILL "$pid" 2>/dev/null || true
	done
	for pid in "${rp_pids[@]}"; do
		wait_gone "$pid" 3 || true
	done
	rp_release_ports
	if ((rp_summary_done == 0)); then
		rp_print_summary error
		((rc != 0)) || rc=2
	fi
	exit "$rc"
}
trap rp_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# -------------------------------------------------------------- port choice
# Ports below the ephemeral range, so that no client socket is handed the
# same number.
read -r rp_eph_lo rp_eph_hi </proc/sys/net/ipv4/ip_local_port_range || { rp_eph_lo=32768; rp_eph_hi=60999; }
if ((rp_eph_lo > 21024)); then
	rp_port_lo=20000 rp_port_hi=$((rp_eph_lo - 1))
elif ((rp_eph_hi < 64000)); then
	rp_port_lo=$((rp_eph_hi + 1)) rp_port_hi=65000
else
	rp_port_lo=20000 rp_port_hi=30000
fi

# True if any IPv4/IPv6 TCP or UDP socket, in any state, has local port $1.
port_in_use() {
	local hex
	hex=$(printf '%04X' "$1")
	awk -v h=":$hex" 'FNR > 1 { if (substr($2, length($2) - 4) == h) found = 1 }
		END { exit !found }' /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6 2>/dev/null
}

# reserve_port VAR: pick a free port, hold its lock until rp_release_ports,
# and store it in VAR.
reserve_port() {
	local var=$1 i p fd span=$((rp_port_hi - rp_port_lo + 1))
	mkdir -p "$RP_LOCK_DIR" 2>/dev/null || true
	chmod 1777 "$RP_LOCK_DIR" 2>/dev/null || true
	for ((i = 0; i < 200; i++)); do
		p=$((rp_port_lo + (RANDOM * 32768 + RANDOM + $$ + i * 7919) % span))
		port_in_use "$p" && continue
		exec {fd}>"$RP_LOCK_DIR/$p.lock" || continue
		if flock -n "$fd" && ! port_in_use "$p"; then
			rp_port_fds+=("$fd")
			printf -v "$var" '%s' "$p"
			return 0
		fi
		exec {fd}>&-
	done
	rp_die "no free port in $rp_port_lo..$rp_port_hi"
}

rp_release_ports() {
	local fd
	for fd in "${rp_port_fds[@]}"; do
		exec {fd}>&- || true
	done
	rp_port_fds=()
}

# wait_tcp PORT SECONDS [PID]: true once 127.0.0.1:PORT accepts connections;
# false on timeout or when PID is gone.
wait_tcp() {
	local port=$1 deadline=$((SECONDS + $2)) pid=${3:-}
	while :; do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			return 0
		fi
		[[ -z $pid ]] || alive "$pid" || return 1
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

# ------------------------------------------------------- what we compare
# fd_snapshot PID FILE: the process's descriptors, one "fd kind" a line, with
# what changes from run to run (socket/pipe inodes, pids, the workdir)
# normalized, so a preloaded and a plain run can be diffed. The tracer's own
# log descriptors are left out when they sit at a high number (where the
# tracer moves them, out of the way of the program's lowest-free-number
# open()s); one at a low number is listed, so the comparison catches it.
fd_snapshot() {
	local pid=$1 out=$2 fd link
	{
		for fd in /proc/"$pid"/fd/*; do
			link=$(readlink "$fd" 2>/dev/null) || continue
			if [[ -n ${tracer_dir-} && ($link == "$tracer_dir"/* || $link == "$tracer_dir") ]] &&
				((${fd##*/} >= 100)); then
				continue
			fi
			case $link in
			socket:*) link=socket ;;
			pipe:*) link=pipe ;;
			anon_inode:*) ;;
			"$workdir"/*) link=WORKDIR/${link#"$workdir"/} ;;
			esac
			link=${link//$pid/PID}
			printf '%s %s\n' "${fd##*/}" "$link"
		done | sort -n
	} >"$out" 2>/dev/null || true
}

# A one-line digest of a snapshot for the summary: how many descriptors of
# each kind, "kind*count" sorted by kind ("/dev/null*3,WORKDIR/x.log*1,
# pipe*10,socket*9").  Counts, not numbers: threads open theirs in any order.
# fd_snapshot once the descriptors stopped changing: connections a load
# just closed are let go when the server gets to them, later on a loaded
# machine. Two snapshots 0.1 s apart that agree, within 10 s (then the last).
fd_snapshot_settled() {
	local pid=$1 out=$2 previous=none now deadline=$((SECONDS + 10))
	while :; do
		fd_snapshot "$pid" "$out"
		now=$(fd_digest "$out")
		[[ $now == "$previous" ]] && return
		((SECONDS < deadline)) || return
		previous=$now
		sleep 0.1
	done
}

fd_digest() {
	[[ -s $1 ]] || { echo none; return; }
	awk '{ n[$2]++ } END { for (k in n) print k "*" n[k] }' "$1" | LC_ALL=C sort | paste -sd, -
}

# Reports the tracer left: its log files plus any stderr files given.
tracer_report_count() {
	local n
	n=$(cat "$tracer_dir"/lockdep-rcu.*.log "$@" 2>/dev/null | grep -cE '^(WARNING|BUG): ') || true
	echo "${n:-0}"
}
tracer_log_count() {
	local n
	n=$(find "$tracer_dir" -maxdepth 1 -name 'lockdep-rcu.*.log' -type f 2>/dev/null | wc -l)
	echo "$n"
}

# ------------------------------------------------------------------ summary
# The sourcing script fills summary_keys (names of variables, in order).
summary_keys=()
rp_print_summary() {
	local result=$1 k
	((rp_summary_done == 0)) || return 0
	rp_summary_done=1
	for k in "${summary_keys[@]}"; do
		printf '%s=%s\n' "$k" "${!k-}"
	done
	printf 'tracer_logs=%s\n' "$(tracer_log_count 2>/dev/null || echo 0)"
	printf 'tracer_reports=%s\n' "$(tracer_report_count "${stderr_files[@]}" 2>/dev/null || echo 0)"
	printf 'preload=%s\n' "${preload:-none}"
	printf 'result=%s\n' "$result"
}
stderr_files=()
