#!/bin/bash
# check-layers.sh [DIR] - the tracer's layering, checked over its #include
# lines (make check-layers; docs/design.md draws the map).
#
# Each folder of preload/ is a layer; LAYERS lists them bottom first. A file
# may include the headers of its own folder and of the folders listed before
# it, never of one listed after it (an include that goes up) and never of a
# folder that is not a layer. Headers of the tracer are named with their
# folder ("runtime/thread_state.h"), so each include says which layer it
# reaches. Within a folder, the modules (a .c with its .h) must not include
# each other in a circle either.
#
# Prints each offending include as FILE:LINE and exits 1; exits 0 when the
# house stands as declared.
set -u
LAYERS=(base runtime symbolize unwind rcu classes report graph watchdog checks intercept)

dir=${1:-$(dirname "$0")}
cd "$dir" || exit 2

declare -A rank
for i in "${!LAYERS[@]}"; do rank[${LAYERS[$i]}]=$i; done

status=0
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT

for layer in "${LAYERS[@]}"; do
	[ -d "$layer" ] || { echo "check-layers: layer $layer/ is missing"; status=1; }
done
for f in *.c *.h; do
	[ -e "$f" ] && { echo "check-layers: $f is in no layer (files live in a layer folder)"; status=1; }
done

for file in */*.c */*.h; do
	[ -e "$file" ] || continue
	layer=${file%%/*}
	if [ -z "${rank[$layer]+x}" ]; then
		echo "check-layers: $file: folder $layer/ is not a layer (LAYERS in $0)"
		status=1
		continue
	fi
	# '#include "x/y.h"' lines, with their numbers
	while IFS=: read -r line target; do
		case "$target" in
		../*) continue ;;                 # the public header (include/)
		*/*) ;;
		*)
			echo "$file:$line: #include \"$target\": name the layer (\"$layer/$target\")"
			status=1
			continue ;;
		esac
		to=${target%%/*}
		if [ -z "${rank[$to]+x}" ]; then
			echo "$file:$line: #include \"$target\": $to/ is not a layer"
			status=1
		elif [ "${rank[$to]}" -gt "${rank[$layer]}" ]; then
			echo "$file:$line: #include \"$target\" goes up: $layer/ is below $to/"
			status=1
		elif [ ! -e "$target" ]; then
			echo "$file:$line: #include \"$target\": no such file"
			status=1
		fi
		# module graph: a .c and its .h are one module
		from_module=${file%.*}
		to_module=${target%.*}
		[ "$from_module" = "$to_module" ] || echo "$from_module $to_module" >> "$edges"
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" |
		 sed -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1:\2/')
done

# Modules that include each other in a circle (tsort names one of them).
if ! loop=$(tsort "$edges" 2>&1 >/dev/null) || [ -n "$loop" ]; then
	echo "check-layers: the includes go in a circle:"
	echo "$loop" | grep -v 'input contains a loop' | sed -n 's/^tsort: /  /p' | head -n 12
	status=1
fi

[ "$status" -eq 0 ] && echo "check-layers: ${#LAYERS[@]} layers, no include goes up, no circle"
exit "$status"
