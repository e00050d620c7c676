/* symbolize.h - names code and data addresses of the current process for
 * kernel-style splats ("function+0xoff/0xsize [module] file:line"), from inside
 * the LD_PRELOAD library, using ELF symbol tables and DWARF via a private libdw. */

/* NOT thread-safe: the module cache and libdw session are shared, unlocked state.
 * Callers serialize every call (the tracer's internal lock) and hold a reentrancy
 * guard: these functions malloc, open files, dlopen() libdw.so.1 on first use,
 * and libelf inside it takes pthread_rwlocks (rdlock/wrlock/unlock), which an
 * interposing tracer will see. Other threads may dlopen/dlclose meanwhile.
 *
 * Cost: the first call loads libdw (~0.5 ms); the first lookup in a module reads
 * its symbols and DWARF (sub-ms for a small program; ~70 ms and ~16 MB for libc
 * with libc6-dbg installed); later lookups take well under 1 us. A library loaded
 * or unloaded since the last call makes the next call re-list the modules.
 *
 * Every function writes at most size bytes, always NUL-terminates when size > 0,
 * and returns the number of characters actually stored (strlen(buf), never more
 * than size - 1), so "write(fd, buf, n)" is safe even after truncation.
 * Any address is accepted (0, unmapped, huge): unknown ones just name less.
 * "[module+0xoff]" offsets are file addresses, what "addr2line -e module" takes:
 * the offset from the module start for PIE and shared objects, and the absolute
 * address for -no-pie executables (which are not relocated). */
#ifndef LOCKDEP_RCU_SYMBOLIZE_H
#define LOCKDEP_RCU_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

/* Formats the frame at return address pc as
 *   "function+0xoff/0xsize [module] file:line"
 * (file:line only when DWARF line info exists; "[module]" is the basename of the
 *  object, e.g. "[demo]" or "[libc.so.6]"; an address with no symbol prints as
 *  "0x<hex> [module+0x<offset-in-module>]"; unknown module "0x<hex>").
 * pc is a RETURN address: look up file:line and the symbol at pc-1 (the call
 * instruction), but print the offset relative to pc like the kernel does.
 * Returns the length written (like snprintf, always NUL-terminated, truncates). */
size_t symbolize_code(uintptr_t pc, char *buf, size_t size);

/* Same but for an exact code address (not a return address): no -1 adjustment. */
size_t symbolize_code_exact(uintptr_t pc, char *buf, size_t size);

/* Name of the data object containing addr (e.g. a global or static
 * `pthread_mutex_t stats_lock` -> "stats_lock", with "+0x10" appended when addr is
 * inside it but not at its start). Returns 0 and writes "" when none (heap, stack). */
size_t symbolize_data(uintptr_t addr, char *buf, size_t size);

/* Only the function name for pc (return address semantics), "" if unknown. */
size_t symbolize_function(uintptr_t pc, char *buf, size_t size);

#endif
