/*
 * floor_preload.c - the least any lock-order checker does on a mutex: an
 * LD_PRELOAD that forwards pthread_mutex_lock/trylock/unlock to glibc and
 * keeps a per-thread stack of the mutexes held (the lock, the caller, one
 * word), pushed after a lock is taken and popped before it is released.
 * No class, no graph, no check.  `make bench-floor` runs the bench workloads
 * under it, so that a ratio of the tracer can be read against what merely
 * knowing the held locks costs on the same machine (docs/performance.md).
 *
 * Only mutexes: rwlocks, spinlocks, condition variables and liburcu go
 * straight to glibc, so the workloads without mutexes measure ~1x.  A
 * measuring instrument, not a tool: a thread holding more than
 * FLOOR_DEPTH mutexes stops recording the deeper ones.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#define FLOOR_DEPTH 48

struct floor_entry {
	const void *lock;
	uintptr_t ip;
	uint64_t word;		/* what a checker would keep: class, count, kind */
};

static __thread struct floor_entry held[FLOOR_DEPTH] __attribute__((tls_model("initial-exec")));
static __thread unsigned depth __attribute__((tls_model("initial-exec")));

typedef int (*mutex_fn)(pthread_mutex_t *);
static mutex_fn real_lock, real_trylock, real_unlock;

/* glibc's dlsym() takes no pthread mutex through the public symbols, so
 * resolving on the first call cannot recurse. */
static mutex_fn resolve(mutex_fn *slot, const char *name)
{
	mutex_fn fn = __atomic_load_n(slot, __ATOMIC_RELAXED);
	if (__builtin_expect(fn == NULL, 0)) {
		fn = (mutex_fn)dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, fn, __ATOMIC_RELAXED);
	}
	return fn;
}

static void push(const void *lock, uintptr_t ip)
{
	unsigned d = depth;
	if (d < FLOOR_DEPTH) {
		held[d].lock = lock;
		held[d].ip = ip;
		held[d].word = 1;
	}
	depth = d + 1;
}

static void pop(const void *lock)
{
	unsigned d = depth;
	if (d == 0)
		return;		/* taken before the preload saw it: nothing to drop */
	if (d > FLOOR_DEPTH) {
		depth = d - 1;	/* an unrecorded deeper lock: assume the innermost */
		return;
	}
	for (unsigned i = d; i-- > 0;) {
		if (held[i].lock == lock) {
			for (unsigned j = i; j + 1 < d; j++)
				held[j] = held[j + 1];
			held[d - 1].word = 0;
			depth = d - 1;
			return;
		}
	}
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	int ret = resolve(&real_lock, "pthread_mutex_lock")(m);
	if (ret == 0)
		push(m, (uintptr_t)__builtin_return_address(0));
	return ret;
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	int ret = resolve(&real_trylock, "pthread_mutex_trylock")(m);
	if (ret == 0)
		push(m, (uintptr_t)__builtin_return_address(0));
	return ret;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	pop(m);
	return resolve(&real_unlock, "pthread_mutex_unlock")(m);
}
