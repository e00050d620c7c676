/* memory_calls.h - the program's memory calls made through syscall()
 * (intercept_sandbox.c sees them): told to intercept_memory.c, which
 * follows mmap() and munmap() made the usual way. */
#ifndef LOCKDEP_RCU_MEMORY_CALLS_H
#define LOCKDEP_RCU_MEMORY_CALLS_H

#include <stddef.h>

/* syscall(SYS_mmap, ...) returned `result` (an address, or -errno). */
void memory_mapped_by_syscall(long result, size_t len, int flags);
/* syscall(SYS_munmap, addr, len) returned `result`. */
void memory_unmapped_by_syscall(long result, void *addr, size_t len);

#endif
