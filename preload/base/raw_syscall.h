/* raw_syscall.h - the tracer's own system calls, made with the syscall
 * instruction itself (sanitizer_common's internal_syscall()).
 *
 * Why not libc: the preload exports syscall(), prctl(), mmap(), munmap()
 * and friends to watch the program's calls. A call to those names from
 * inside the tracer binds to the tracer's own wrapper, so the runtime would
 * watch itself (and a wrapper may take tracer locks or report). These
 * never touch errno either: a failure comes back as -errno, as the kernel
 * returns it, and the program's errno is never clobbered.
 *
 * This header includes nothing of the tracer: every layer may use it. */
#ifndef LOCKDEP_RCU_RAW_SYSCALL_H
#define LOCKDEP_RCU_RAW_SYSCALL_H

#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <linux/futex.h>

#if defined(__x86_64__)
static inline long raw_syscall6(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
static inline long raw_syscall6(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long x8 __asm__("x8") = nr;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	register long x5 __asm__("x5") = a6;
	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
}
#else
#error "raw_syscall.h: no raw system call for this architecture"
#endif

/* Fewer arguments: the rest are zero (the kernel ignores them). */
#define RAW_SYSCALL_ARGS(nr, a, b, c, d, e, f, ...) \
	raw_syscall6((long)(nr), (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))
#define raw_syscall(...) RAW_SYSCALL_ARGS(__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)

/* A kernel result is an error when it is in [-4095, -1]. */
static inline int raw_failed(long ret) { return (unsigned long)ret > -4096UL; }

static inline void *raw_mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
	long ret = raw_syscall(SYS_mmap, addr, length, prot, flags, fd, offset);
	return raw_failed(ret) ? MAP_FAILED : (void *)ret;
}

static inline int raw_munmap(void *addr, size_t length)
{
	return raw_failed(raw_syscall(SYS_munmap, addr, length)) ? -1 : 0;
}

/* The futex word's value was `expected`: sleep until woken or timeout. */
static inline long raw_futex_wait(int *word, int expected, const struct timespec *timeout)
{
	return raw_syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, timeout);
}

static inline long raw_futex_wake(int *word, int how_many)
{
	return raw_syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, how_many);
}

static inline pid_t raw_gettid(void) { return (pid_t)raw_syscall(SYS_gettid); }
static inline pid_t raw_getpid(void) { return (pid_t)raw_syscall(SYS_getpid); }

/* 1 when thread tid of this process is gone (tgkill answers ESRCH). */
static inline int raw_thread_gone(pid_t tid)
{
	return raw_syscall(SYS_tgkill, raw_getpid(), tid, 0) == -3 /* -ESRCH */;
}

/* prctl(PR_GET_NAME): the calling thread's name, 16 bytes with the NUL. */
static inline void raw_thread_name(char name[16])
{
	if (raw_failed(raw_syscall(SYS_prctl, PR_GET_NAME, name)))
		name[0] = 0;
}

static inline __attribute__((noreturn)) void raw_exit_group(int status)
{
	for (;;)
		raw_syscall(SYS_exit_group, status);
}

#endif
