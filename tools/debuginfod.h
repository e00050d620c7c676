/* Separate debug information fetched by GNU build-id from debuginfod servers,
 * for modules that carry none of their own (a stripped program, a
 * distribution's library without its -dbgsym package).
 *
 * Only when DEBUGINFOD_URLS is set and not empty, the convention gdb,
 * elfutils and valgrind follow: report asks no server otherwise.
 * libdebuginfod.so.1 (Debian: libdebuginfod1) is dlopen()ed then, and not
 * linked: a machine without it builds and reports as before, with a note.
 * The library's own variables (DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXTIME,
 * DEBUGINFOD_CACHE_PATH, ...) apply; on top of them one report run spends
 * at most DEBUGINFOD_BUDGET_SECONDS in it in all, so a slow or unreachable
 * server delays a report by a bounded time. Each build-id is asked once per
 * run. The fetched file is read with addr2line like the module itself: a
 * separate debug file keeps the module's section addresses, so the file
 * addresses of the frames (PIE or not) look up the same in it. */
#ifndef LOCKDEP_RCU_DEBUGINFOD_H
#define LOCKDEP_RCU_DEBUGINFOD_H

#include <stddef.h>

#define DEBUGINFOD_BUDGET_SECONDS 120.0

struct symbolizer;
struct sym_request;
struct debuginfod_cache;

/* The debug file for the module at path (the file addr2line just read for
 * reqs), when some request still has no file:line, the module has no DWARF
 * of its own and a server has its build-id. The requests without a file:line
 * are then reset, to be resolved again from the returned file, which the
 * cache in s owns. NULL otherwise (with a note when a server was asked and
 * had nothing). */
const char *debuginfod_debug_file(struct symbolizer *s, const char *path, struct sym_request *reqs, size_t n);

void debuginfod_cache_free(struct debuginfod_cache *cache);

/* The GNU build-id of a 64-bit ELF file, from its PT_NOTE segments (which
 * strip keeps), in id (at most max bytes). Its length, 0 if none. Also
 * tells whether the file has DWARF (a .debug_info section). */
size_t elf_file_build_id(const char *path, unsigned char *id, size_t max, int *has_dwarf);

#endif
