# dns.sh - DNS checks shared by the real-program harnesses of DNS servers
# (unbound, named, gdnsd).  Sourced after real-program.sh.  The caller sets
# port (the server's) before querying.
#
#   add_expected "owner TYPE rdata"...   rdata as `kdig +short` prints it;
#                                        fills expected[] and qkeys[]
#   check_rrset PROTO NAME TYPE WANT     one kdig query, logged in kdig.log
#   check_all                            every qkey over UDP and over TCP
#   wait_answer NAME SECONDS [PID]       until NAME A gets an answer
#   run_dnsperf N                        N queries over the qkeys, 10 s at most;
#                                        sets dnsperf_{sent,completed,lost,noerror,rc}

declare -A expected=()
qkeys=()
kdig_checked=0 kdig_wrong=0
dnsperf_sent=0 dnsperf_completed=0 dnsperf_lost=0 dnsperf_noerror=0 dnsperf_rc=-1

add_expected() {
	local rr owner type rdata key
	for rr in "$@"; do
		read -r owner type rdata <<<"$rr"
		key="$owner $type"
		if [[ -z ${expected[$key]+set} ]]; then
			qkeys+=("$key")
			expected[$key]=$rdata
		else
			expected[$key]+=$'\n'$rdata
		fi
	done
}

kdig_short() {
	local name=$1 type=$2
	shift 2
	timeout -k 2 10 kdig -p "$port" @127.0.0.1 "$name" "$type" +short \
		+timeout=2 +retry=1 "$@" 2>>"$workdir/kdig.stderr"
}

check_rrset() {
	local proto=$1 name=$2 type=$3 want=$4 got krc=0 got_sorted want_sorted verdict opts=()
	[[ $proto == udp ]] || opts=(+tcp)
	kdig_checked=$((kdig_checked + 1))
	got=$(kdig_short "$name" "$type" "${opts[@]}") || krc=$?
	got_sorted=$(printf '%s\n' "$got" | sed '/^$/d' | LC_ALL=C sort)
	want_sorted=$(printf '%s\n' "$want" | sed '/^$/d' | LC_ALL=C sort)
	if ((krc == 0)) && [[ $got_sorted == "$want_sorted" ]]; then
		verdict=ok
	else
		verdict=WRONG
		kdig_wrong=$((kdig_wrong + 1))
		rp_log "wrong answer ($proto) for $name $type: got [${got//$'\n'/ | }] (kdig exit $krc)"
	fi
	printf '%s %s %s %s kdig_exit=%s\n  want: %s\n  got:  %s\n' "$verdict" "$proto" "$name" "$type" \
		"$krc" "${want_sorted//$'\n'/ | }" "${got_sorted//$'\n'/ | }" >>"$workdir/kdig.log"
}

check_all() {
	local proto key name type
	for proto in udp tcp; do
		for key in "${qkeys[@]}"; do
			read -r name type <<<"$key"
			check_rrset "$proto" "$name" "$type" "${expected[$key]}"
		done
	done
}

wait_answer() {
	local name=$1 deadline=$((SECONDS + $2)) pid=${3:-} a
	while :; do
		[[ -z $pid ]] || alive "$pid" || return 1
		a=$(timeout -k 1 3 kdig -p "$port" @127.0.0.1 "$name" A +short +timeout=1 +retry=0 \
			2>/dev/null) || a=""
		[[ -z $a ]] || return 0
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
}

run_dnsperf() {
	local n=$1 qfile=$workdir/queries.txt
	printf '%s\n' "${qkeys[@]}" |
		awk -v n="$n" '{ q[NR - 1] = $0 } END { for (i = 0; i < n; i++) print q[i % NR] }' >"$qfile"
	rp_log "dnsperf: $n queries, at most 10s"
	dnsperf_rc=0
	run_waited "$workdir/dnsperf.out" "$workdir/dnsperf.stderr" \
		timeout -k 5 30 dnsperf -s 127.0.0.1 -p "$port" -d "$qfile" -n 1 -l 10 -t 5 -q 50 || dnsperf_rc=$?
	dnsperf_sent=$(sed -n 's/^[[:space:]]*Queries sent:[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$workdir/dnsperf.out" | head -n 1)
	dnsperf_completed=$(sed -n 's/^[[:space:]]*Queries completed:[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$workdir/dnsperf.out" | head -n 1)
	dnsperf_lost=$(sed -n 's/^[[:space:]]*Queries lost:[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$workdir/dnsperf.out" | head -n 1)
	dnsperf_noerror=$(sed -n 's/^[[:space:]]*Response codes:.*NOERROR \([0-9][0-9]*\).*/\1/p' "$workdir/dnsperf.out" | head -n 1)
	: "${dnsperf_sent:=0}" "${dnsperf_completed:=0}" "${dnsperf_lost:=0}" "${dnsperf_noerror:=0}"
	((dnsperf_rc == 0)) || rp_log "dnsperf exited with status $dnsperf_rc"
}

# True when dnsperf sent something and every query was answered NOERROR.
dnsperf_ok() {
	((dnsperf_rc == 0 && dnsperf_sent > 0 && dnsperf_lost == 0 &&
		dnsperf_completed == dnsperf_sent && dnsperf_noerror == dnsperf_completed))
}
