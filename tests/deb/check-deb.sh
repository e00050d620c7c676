#!/bin/bash
# check-deb.sh [--install] - builds the Debian package (make deb) and checks it.
#
# Always: its control fields and file list (dpkg-deb), and lintian's verdict
# when lintian is installed (an error fails; warnings are printed).
# With --install, for CI on a machine thrown away afterwards (root; it
# changes the system): dpkg -i, then the installed command runs the demo and
# a program built against the installed header through pkg-config, the man
# pages are read, and dpkg -r removes the package again, also on failure.
# It refuses to run when lockdep-rcu is installed already, so that it never
# removes a package it did not install.
#
# Needs what make needs (tools/install-deps.sh demo) and dpkg-dev; --install
# also needs man-db and pkg-config. Exits 0 when every check passed.
# "test && pass ... || fail ..." throughout: pass only prints.
# shellcheck disable=SC2015
set -euo pipefail
cd "$(dirname "$0")/../.."

install=0
case "${1:-}" in
--install) install=1 ;;
"") ;;
*) echo "usage: $0 [--install]" >&2; exit 2 ;;
esac

failures=0
fail() { echo "check-deb: FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { echo "check-deb: ok: $*"; }

make deb
version=$(dpkg-parsechangelog -l packaging/deb/changelog -SVersion)
deb=build/lockdep-rcu_${version}_$(dpkg-architecture -qDEB_HOST_ARCH).deb
[ -f "$deb" ] || { echo "check-deb: make deb made no $deb" >&2; exit 1; }
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# ---- the package as built -------------------------------------------------
[ "$(dpkg-deb -f "$deb" Package)" = lockdep-rcu ] && pass "Package: lockdep-rcu" || fail "Package field"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] && pass "Version: $version" || fail "Version field"
tool_version=$(build/lockdep-rcu --version | awk '{ print $NF; exit }')
[ "${version%-*}" = "$tool_version" ] && pass "upstream version $tool_version is the command's" ||
	fail "version $version, but the command says $tool_version"
depends=$(dpkg-deb -f "$deb" Depends)
# The preload links nothing but libc (docs/libraries.md); the command, jansson.
for d in libc6 libjansson4; do
	[[ ", $depends" == *", $d "* ]] && pass "Depends on $d" || fail "Depends ($depends) lacks $d"
done
[[ "$depends" != *liburcu* ]] && pass "no liburcu dependency (the programs checked bring their own)" ||
	fail "Depends ($depends) names liburcu"
for field in Maintainer Section Priority Description Installed-Size; do
	[ -n "$(dpkg-deb -f "$deb" "$field")" ] && pass "$field set" || fail "$field missing"
done

# Every file, its mode and owner: exactly these (directories aside).
expected=$(LC_ALL=C sort <<EOF
./usr/bin/lockdep-rcu -rwxr-xr-x root/root
./usr/include/lockdep-rcu.h -rw-r--r-- root/root
./usr/lib/$multiarch/pkgconfig/lockdep-rcu.pc -rw-r--r-- root/root
./usr/lib/lockdep-rcu/liblockdep-rcu.so -rw-r--r-- root/root
./usr/share/doc/lockdep-rcu/changelog.Debian.gz -rw-r--r-- root/root
./usr/share/doc/lockdep-rcu/copyright -rw-r--r-- root/root
./usr/share/lintian/overrides/lockdep-rcu -rw-r--r-- root/root
./usr/share/man/man1/lockdep-rcu.1.gz -rw-r--r-- root/root
./usr/share/man/man7/liblockdep-rcu.7.gz -rw-r--r-- root/root
EOF
)
actual=$(dpkg-deb --contents "$deb" | awk '$1 !~ /^d/ { print $6, $1, $2 }' | LC_ALL=C sort)
if [ "$actual" = "$expected" ]; then
	pass "file list, modes and owners"
else
	fail "file list differs (- expected, + in the package):"
	diff <(echo "$expected") <(echo "$actual") >&2 || true
fi
bad_dirs=$(dpkg-deb --contents "$deb" | awk '$1 ~ /^d/ && ($1 != "drwxr-xr-x" || $2 != "root/root")')
[ -z "$bad_dirs" ] && pass "directories 0755 root/root" || fail "directories: $bad_dirs"

# Binaries stripped, and what each one loads.
unpacked=$(mktemp -d)
trap 'rm -rf "$unpacked"' EXIT
dpkg-deb -x "$deb" "$unpacked"
for f in usr/bin/lockdep-rcu usr/lib/lockdep-rcu/liblockdep-rcu.so; do
	if readelf -S "$unpacked/$f" | grep -q '\.symtab'; then fail "$f is not stripped"; else pass "$f stripped"; fi
done
needed=$(readelf -d "$unpacked/usr/lib/lockdep-rcu/liblockdep-rcu.so" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
[ "$needed" = libc.so.6 ] && pass "the preload needs libc.so.6 only" || fail "the preload needs: $needed"
# The command looks for the tracer beside itself, then in the directory
# compiled in: that must be where the package puts it.
grep -qa '/usr/lib/lockdep-rcu/liblockdep-rcu.so' "$unpacked/usr/bin/lockdep-rcu" &&
	pass "the command has /usr/lib/lockdep-rcu compiled in" ||
	fail "the command's compiled-in tracer directory is not /usr/lib/lockdep-rcu"
[ "$(sed -n 's/^prefix=//p' "$unpacked/usr/lib/$multiarch/pkgconfig/lockdep-rcu.pc")" = /usr ] &&
	pass "lockdep-rcu.pc has prefix=/usr" || fail "lockdep-rcu.pc's prefix is not /usr"
for page in man1/lockdep-rcu.1.gz man7/liblockdep-rcu.7.gz; do
	warnings=$(zcat "$unpacked/usr/share/man/$page" | groff -man -ww -z 2>&1)
	[ -z "$warnings" ] && pass "$page renders without warnings" || fail "$page: $warnings"
done

if command -v lintian >/dev/null; then
	# lintian exits non-zero when it reports an error (its default --fail-on),
	# an overridden one aside (packaging/deb/lintian-overrides says why).
	if lintian_out=$(lintian --pedantic -I "$deb" 2>&1); then
		pass "lintian: no errors"
	else
		fail "lintian reports errors"
	fi
	echo "$lintian_out" | grep -v '^running with root privileges' || true
else
	echo "check-deb: lintian not installed: its checks skipped (apt-get install lintian)"
fi

# ---- installed ------------------------------------------------------------
if [ $install -eq 1 ]; then
	[ "$(id -u)" -eq 0 ] || { echo "check-deb: --install needs root (dpkg -i)" >&2; exit 1; }
	if dpkg-query -W -f='${Status}' lockdep-rcu 2>/dev/null | grep -q 'ok installed'; then
		echo "check-deb: lockdep-rcu is installed already; this check installs and removes it: dpkg -r lockdep-rcu first" >&2
		exit 1
	fi
	make build/targets/demo_buggy_cache.memb
	work=$(mktemp -d)
	trap 'dpkg -r lockdep-rcu >/dev/null || true; rm -rf "$unpacked" "$work"' EXIT
	dpkg -i "$deb"

	# Found through /usr/bin/../lib/lockdep-rcu; unset, an environment's
	# LOCKDEP_RCU_PRELOAD would pick another tracer, an LD_PRELOAD would be kept.
	unset LOCKDEP_RCU_PRELOAD LOCKDEP_RCU_OPTIONS LD_PRELOAD
	# shellcheck disable=SC2016 # the program's shell expands it
	show_preload='echo "$LD_PRELOAD"'
	seen=$(/usr/bin/lockdep-rcu run -- /bin/sh -c "$show_preload" 2>/dev/null)
	[ "$seen" = /usr/lib/lockdep-rcu/liblockdep-rcu.so ] && pass "run preloads the installed tracer" ||
		fail "run preloaded '$seen'"
	# A copy elsewhere has no tracer beside it: the compiled-in directory finds it.
	cp /usr/bin/lockdep-rcu "$work/lockdep-rcu"
	seen=$("$work/lockdep-rcu" run -- /bin/sh -c "$show_preload" 2>/dev/null)
	[ "$seen" = /usr/lib/lockdep-rcu/liblockdep-rcu.so ] && pass "a copy of the command finds the installed tracer" ||
		fail "a copy of the command preloaded '$seen'"

	# The demo: three reports, exit status 66 (a run with reports).
	status=0
	/usr/bin/lockdep-rcu run -o "$work/demo" -- build/targets/demo_buggy_cache.memb >"$work/demo.out" 2>&1 || status=$?
	[ $status -eq 66 ] && pass "the demo under the installed command exits 66" ||
		{ fail "the demo exited $status"; cat "$work/demo.out" >&2; }
	status=0
	/usr/bin/lockdep-rcu report "$work/demo" >"$work/report.out" 2>&1 || status=$?
	grep -q 'suspicious RCU usage' "$work/report.out" && grep -q 'still has locks held' "$work/report.out" &&
		pass "report groups the demo's reports (status $status)" ||
		{ fail "report (status $status) lacks the demo's reports"; cat "$work/report.out" >&2; }

	# A program built against the installed header with pkg-config's flags:
	# a failed lockdep_assert_held() is reported with the program's file:line.
	cat >"$work/assert.c" <<'EOF'
#include <pthread.h>
#include <urcu.h>
#include <lockdep-rcu.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int main(void)
{
	lockdep_assert_held(&lock);
	return 0;
}
EOF
	cflags=$(pkg-config --cflags lockdep-rcu)
	pass "pkg-config --cflags lockdep-rcu: '$cflags'"
	libdir=$(pkg-config --variable=libdir lockdep-rcu)
	[ -f "$libdir/liblockdep-rcu.so" ] && pass "pkg-config's libdir $libdir holds the tracer" ||
		fail "pkg-config's libdir $libdir has no liblockdep-rcu.so"
	# shellcheck disable=SC2086 # the flags are words
	if cc $cflags -pthread "$work/assert.c" -o "$work/assert" -lurcu-memb; then
		status=0
		/usr/bin/lockdep-rcu run -- "$work/assert" >"$work/assert.out" 2>&1 || status=$?
		[ $status -eq 66 ] && grep -q "assert.c:9" "$work/assert.out" &&
			pass "a program built with the installed header reports its failed assertion at assert.c:9" ||
			{ fail "the header's program (status $status) did not report assert.c:9"; cat "$work/assert.out" >&2; }
	else
		fail "a program including <lockdep-rcu.h> with pkg-config's flags does not compile"
	fi

	for page in lockdep-rcu liblockdep-rcu; do
		text=$(MANWIDTH=80 man "$page" 2>&1) || true
		[[ "$text" == *"$page"* && "$text" == *NAME* ]] && pass "man $page" || fail "man $page: $text"
	done

	dpkg -r lockdep-rcu
	trap 'rm -rf "$unpacked" "$work"' EXIT
	[ ! -e /usr/bin/lockdep-rcu ] && [ ! -e /usr/lib/lockdep-rcu ] && pass "dpkg -r removes it" ||
		fail "files left after dpkg -r"
fi

[ $failures -eq 0 ] && echo "check-deb: all checks passed" || echo "check-deb: $failures checks failed" >&2
[ $failures -eq 0 ]
