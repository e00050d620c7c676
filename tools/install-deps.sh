#!/bin/bash
# Installs the Debian packages lockdep-rcu builds, tests and demonstrates
# with, by tier (below). Quick when they are already there (no apt-get
# update then).
set -euo pipefail

# The tiers, each for one job; no argument means all of them (what CI and
# the README's test command install):
#   demo     the preload and the demo program: a compiler and liburcu
#   test     the command line and the Criterion suite, on top of demo
#   servers  the real programs the real-program tests start (their tests
#            are skipped when these are missing)
demo=(
	build-essential     # gcc, make
	zlib1g-dev          # libz.a: the symbolizer inflates compressed debug sections with it
	libiberty-dev       # libiberty.a: the C++ demangler (preload and command)
	liburcu-dev         # the RCU library we check programs of
)
test=(
	libjansson-dev      # jansson: the command reads the tracer's JSON records with it
	libcriterion-dev    # the test suite
	libunwind8          # a test host linked with libunwind (the tracer unwinds with libgcc)
	binutils            # objcopy/strip/addr2line: symbolizer tests, report's file:line
	groff-base          # groff: make check-docs renders the man pages, warnings on
	libc6-dbg           # file:line of libc frames (separate, compressed debug file)
	graphviz            # dot: lockdep-rcu graph renders the dependency graph as SVG
	procps              # pkill/ps used by the harnesses
	libdebuginfod1      # report fetches a stripped module's debug file by build-id (dlopen()ed)
	debuginfod          # the local server tests/test_cli_debuginfod.c starts (skipped without it)
)
servers=(
	# The real-program harnesses (tests/<prog>/run-<prog>.sh): the programs
	# and their clients.  util-linux (flock, setpriv) is essential already.
	knot knot-dnsutils knot-dnssecutils dnsperf   # a real liburcu program
	unbound
	apache2 apache2-utils curl openssl   # apache2, ab (also for varnish, nginx)
	varnish python3                      # python3: varnish's backend, memcached's client
	bind9
	gdnsd
	redis-server redis-tools
	memcached
	nginx
	lttng-tools
	glusterfs-server
	mariadb-server mariadb-client sysbench
	xfsprogs
)

tiers=("$@")
[ ${#tiers[@]} -gt 0 ] || tiers=(demo test servers)
packages=()
for tier in "${tiers[@]}"; do
	case $tier in
	demo) packages+=("${demo[@]}") ;;
	test) packages+=("${demo[@]}" "${test[@]}") ;;
	servers) packages+=("${servers[@]}") ;;
	*) echo "usage: $0 [demo|test|servers]...  (none: all of them)" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
# Installing the servers must not start them (apache2 on :80, unbound and
# named on :53, ...): the tests start their own on loopback ports.  A
# policy-rc.d is put in place for the install unless the machine has one.
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
	"${sudo[@]}" chmod 755 "$policy"
	own_policy=1
fi
rc=0
"${sudo[@]}" apt-get update -qq || rc=$?
[ "$rc" -ne 0 ] || "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || rc=$?
[ "$own_policy" -eq 0 ] || "${sudo[@]}" rm -f "$policy"
exit "$rc"
