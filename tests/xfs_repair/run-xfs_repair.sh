#!/usr/bin/env bash
# run-xfs_repair.sh - run xfs_repair (xfsprogs: its buffer cache with a
# mutex per buffer, prefetch threads, a worker per allocation group, liburcu
# linked in) on a small XFS image made here, optionally with an LD_PRELOAD
# library (the lockdep-rcu checker), and check that it repairs nothing and
# says so the same way.
#
# Usage: tests/xfs_repair/run-xfs_repair.sh [--preload PATH] [--load N] WORKDIR
#
#   --preload PATH  LD_PRELOAD=PATH for xfs_repair only (never for
#                   mkfs.xfs); empty = none.  The caller's
#                   LOCKDEP_RCU_OPTIONS is passed on, with log_path added.
#   --load N        files in the image (default 300), in 4 allocation
#                   groups, half of them in a subdirectory.
#   WORKDIR         created if missing; must be empty.
#
# Needs (Debian 12): xfsprogs.
#
# Files left in WORKDIR: image (sparse, 512 MiB), proto (mkfs.xfs's
# protofile), mkfs.out, repair.out and repair.err (xfs_repair's stdout and
# stderr), tracer/, run-info.txt.
#
# stdout: key=value lines: repair_exit= phases= output_sha= tracer_logs=
# tracer_reports= preload= result=.  output_sha is the SHA-256 of
# repair.out and repair.err: the same in a plain and a preloaded run when the tracer
# changed nothing the program says (its reports go to tracer/).
#
# Exit status: 0 if xfs_repair ran its seven phases and exited 0; 1
# otherwise; 2 on a usage or setup error.

set -euo pipefail

PROG=run-xfs_repair
LOAD_DEFAULT=300
LOAD_MAX=100000
REQUIRED_TOOLS="xfs_repair mkfs.xfs sha256sum"
INSTALL_HINT="xfsprogs"
# shellcheck source=../lib/real-program.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/../lib/real-program.sh"
rp_parse_args "$@"

repair_exit=-1 phases=0 output_sha=none
summary_keys=(repair_exit phases output_sha)
stderr_files=("$workdir/repair.err")

# A protofile (mkfs.xfs -p): the root with --load regular files, half of
# them in a subdirectory; every file a copy of this script.
self=$(realpath -- "${BASH_SOURCE[0]}")
{
	printf 'lockdep-rcu\n0 0\nd--755 0 0\n'
	for i in $(seq $((load - load / 2))); do printf 'f%d ---644 0 0 %s\n' "$i" "$self"; done
	printf 'sub d--755 0 0\n'
	for i in $(seq $((load / 2))); do printf 'g%d ---644 0 0 %s\n' "$i" "$self"; done
	printf '$\n$\n'
} >"$workdir/proto"
truncate -s 512M "$workdir/image"
mkfs.xfs -q -f -d agcount=4 -p "$workdir/proto" "$workdir/image" >"$workdir/mkfs.out" 2>&1 ||
	rp_die "mkfs.xfs failed (see mkfs.out)"

rp_log "running xfs_repair${preload:+ with LD_PRELOAD=$preload}"
rc=0
run_waited "$workdir/repair.out" "$workdir/repair.err" timeout -k 5 300 \
	"${under_test[@]}" xfs_repair -f "$workdir/image" || rc=$?
repair_exit=$rc
phases=$(cat "$workdir/repair.out" "$workdir/repair.err" | grep -c '^Phase [1-7] - ') || true
# The allocation groups' workers print "- agno = N" as each starts, in
# whatever order they run (plain too, under load): each run of those
# lines is hashed in order of N.
output_sha=$(cat "$workdir/repair.out" "$workdir/repair.err" |
	awk 'function agno(line) { sub(/.*= /, "", line); return line + 0 }
	     function flush(  i, j, t) {
		for (i = 1; i < n; i++)
			for (j = i; j > 0 && agno(run[j - 1]) > agno(run[j]); j--) {
				t = run[j]; run[j] = run[j - 1]; run[j - 1] = t
			}
		for (i = 0; i < n; i++) print run[i]
		n = 0
	     }
	     /^ *- agno = [0-9]+$/ { run[n++] = $0; next }
	     { flush(); print }
	     END { flush() }' |
	sha256sum | cut -c1-16)

result=pass
((repair_exit == 0 && phases == 7)) || result=fail
rp_print_summary "$result"
[[ $result == pass ]] || exit 1
exit 0
