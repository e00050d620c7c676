/* debug_file.h - finds and maps the separate debug file of an object the way
 * gdb and libdw look for it on local disk (never debuginfod: no network in a
 * splat): by GNU build-id under /usr/lib/debug/.build-id, then by the
 * .gnu_debuglink name next to the object, in its .debug/ subdirectory, and
 * under /usr/lib/debug/<its directory>. A candidate counts only when it is
 * the object's: same build-id, or, for objects without one, the CRC-32 the
 * debuglink records. */
#ifndef LOCKDEP_RCU_DEBUG_FILE_H
#define LOCKDEP_RCU_DEBUG_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "symbolize/elf_image.h"

#define DEBUG_FILE_ROOT "/usr/lib/debug"

/* Maps the debug file into *debug. object_path and object (may be NULL or
 * empty when the object's own file is unusable) give the debuglink; build_id
 * is the object's as loaded (len 0: none). False when there is none. */
bool debug_file_open(struct elf_image *debug, const char *object_path,
		     const struct elf_image *object, const unsigned char *build_id,
		     size_t build_id_len);

#endif
