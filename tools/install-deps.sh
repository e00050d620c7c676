#!/bin/bash
# Installs the Debian packages lockdep-rcu builds, tests and demonstrates
# with. Quick when they are already there (no apt-get update then).
set -euo pipefail

packages=(
	build-essential     # gcc, make
	liburcu-dev         # the RCU library we check programs of
	libcriterion-dev    # the test suite
	libunwind8          # backtraces (dlopen()ed by the preload)
	binutils            # objcopy/strip/addr2line: symbolizer tests, report's file:line
	libc6-dbg           # file:line of libc frames (separate, compressed debug file)
	knot knot-dnsutils knot-dnssecutils dnsperf   # a real liburcu program in the suite
	procps              # pkill/ps used by the Knot harness
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
