/* symbolize.h - names code and data addresses of the current process for
 * kernel-style splats ("function+0xoff/0xsize [module] file:line"), from inside
 * the LD_PRELOAD library, with our own ELF, DWARF line table and zlib readers
 * (module_list.c and the files it uses; zlib's inflate() and libiberty's
 * demangler, linked in statically), safe inside any interposed call.
 *
 * NOT thread-safe: the module list and its tables are shared, unlocked state.
 * Callers serialize every call (the tracer's internal lock). Other threads
 * may dlopen/dlclose meanwhile: the list comes from dl_iterate_phdr and is
 * re-read when its load/unload counters moved.
 *
 * Names come from the object's .symtab, else from its separate debug file's
 * (found on local disk by build-id, then by .gnu_debuglink; compressed
 * sections are inflated), else from its .dynsym; the vDSO's from its ELF image
 * in memory. A file whose build-id differs from the loaded object's (rebuilt
 * or upgraded since it was loaded) is ignored: such frames print raw.
 *
 * What a call may do, and what it never does: it never calls malloc or any
 * allocator of the host (memory comes from anonymous mmap()s, see
 * tracer_arena.h), never uses stdio streams (only snprintf into buffers),
 * never dlopen()s, takes no lock of its own and no pthread lock, and has no
 * thread-local state. It opens a file only to map it (O_RDONLY | O_CLOEXEC,
 * regular files only) and closes it before returning: no descriptor is kept,
 * and no descriptor it did not open is touched. It uses no recursion.
 *
 * Cost, measured by tests/bench/symbolize_bench.c (-O2, thread CPU time, on a
 * 2-core VM where a fresh anonymous page costs ~17 us): listing the loaded
 * objects ~0.15 ms; the first lookup in a module maps its files and reads its
 * symbols, the first file:line in it decodes its line tables: under 1 ms for
 * a small program, ~29 ms for libc.so.6 with libc6-dbg (8k symbols; 1.3 MB of
 * .debug_line inflated and decoded into 2k sequences), which then keeps ~5 MB.
 * Later lookups: symbolize_code (function + file:line) ~170 ns,
 * symbolize_function and symbolize_data ~40 ns. Stack: at most 4.7 KiB
 * measured (the first libc lookup, glibc's snprintf and dl_iterate_phdr
 * included), 0.8 KiB for later lookups. A C++ name is demangled on the
 * stack by libiberty, which recurses and sizes its arrays by the name: up
 * to ~50 KiB for the longest of libLLVM's 39k names (604 characters), and
 * names over 1 KiB stay mangled (contrived nesting, 765 characters of
 * templates within templates: 195 KiB of the 1 MiB tracer stack). The
 * symbolizer itself has no recursion and no local array over 512 bytes. A library loaded or unloaded since the last call makes the next
 * call re-list the objects; objects beyond MAX_MODULES (module_list.h) print
 * as bare addresses.
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

/* file:line of an exact code address (no -1 adjustment): the file is printed
 * as in symbolize_code (relative to the compilation directory when below it).
 * Returns 1 and sets *line when found; else 0, file "" and *line 0. */
int symbolize_source(uintptr_t addr, char *file, size_t size, int *line);

/* Start address of the function symbol enclosing the return address pc
 * (looked up at pc - 1; a code symbol: STT_FUNC, STT_GNU_IFUNC, or an untyped
 * assembly label), 0 when none encloses it (no symbol, or a data object). */
uintptr_t symbolize_function_start(uintptr_t pc);

/* The full path of the loaded object containing addr and the ELF file address
 * of addr in it (addr - load bias: what "addr2line -e path" takes). Returns 1
 * when found and the path fits in size; 0 for unmapped addresses and for the
 * vDSO, which has no file. */
int symbolize_module(uintptr_t addr, char *path, size_t size, uintptr_t *file_offset);

/* An object in [lo, hi) is being unloaded (dlclose): drops its module data
 * (its mappings and tables), so that a later object at the same address is
 * not named with stale data. The next call re-lists the loaded objects. */
void symbolize_forget_range(uintptr_t lo, uintptr_t hi);

/* Optional: lists the loaded objects now, so the first splat does not. */
void symbolize_warm_up(void);

#endif
