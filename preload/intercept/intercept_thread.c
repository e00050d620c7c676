/* Thread lifetime: the thread-end checks (locks and read-side sections
 * still held, liburcu registrations left behind), and the stack bounds the
 * tracer needs to know how much of a thread's stack it may use. */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>
#include "runtime/sandbox.h"
#include "runtime/tracer_stack.h"
#include "checks/lock_tracking.h"
#include "runtime/real_functions.h"
#include "report/report.h"
#include "runtime/thread_registry.h"
#include "rcu/urcu_calls.h"
#include "checks/rcu_tracking.h"
#include "rcu/rcu_deref_set.h"

INTERPOSE(pthread_create);
INTERPOSE(pthread_exit);
INTERPOSE(thrd_create);

struct thread_start {
	void *(*start_routine)(void *);
	void *arg;
	size_t stack_size;      /* 0: unknown (the default, which is large) */
	int urcu_worker;        /* started in liburcu (a call_rcu worker) */
	uintptr_t stack_addr;   /* the lowest address, when the caller gave the stack */
	uint32_t start_seq;     /* its place in the order of creation */
};

/* A pthread key whose destructor runs after the start routine and its TLS
 * destructors: programs may unregister from liburcu in a destructor of
 * their own, so the registration check waits for the last round. */
static pthread_key_t thread_end_key;
static pthread_once_t thread_end_key_once = PTHREAD_ONCE_INIT;

static void thread_ends(void *unused);

static void registration_check_at_key_destruction(void *value)
{
	uintptr_t round = (uintptr_t)value;
	struct thread_state *ts = thread_state();
	/* Re-arm once: the next round runs after every other key's destructor
	 * of this round (glibc runs up to PTHREAD_DESTRUCTOR_ITERATIONS). */
	if (round == 1) {
		/* The main thread's pthread_exit() has no trampoline cleanup:
		 * its locks are checked here, after its cleanup handlers. */
		thread_ends(NULL);
		pthread_setspecific(thread_end_key, (void *)2);
		return;
	}
	check_registered_at_thread_end(ts);
	thread_registry_remove(ts);
	check_stack_release(ts);
	lock_stat_thread_end(ts);
	rcu_deref_set_release(ts);
}

static void create_thread_end_key(void)
{
	pthread_key_create(&thread_end_key, registration_check_at_key_destruction);
}

/* The start routine returned, called pthread_exit, or was cancelled. */
static void thread_ends(void *unused)
{
	(void)unused;
	struct thread_state *ts = thread_state();
	if (ts->thread_ended)
		return;
	ts->thread_ended = 1;
	if (ts->foreign_pending)
		foreign_releases_apply(ts);
	check_locks_held_at_thread_end(ts);
}

/* A thread made without a size: what a sandboxed thread's stack is
 * guessed to be (too small a guess only sends deep checks to the check
 * stack). */
#define DEFAULT_STACK_GUESS ((size_t)2 << 20)

/* Notes the calling thread's stack (ts->stack_limit, ts->stack_top): what
 * the tracer's checks and stack capture must stay within, and what tells
 * a stack the program made (a coroutine's) from the thread's own. glibc
 * carves the thread's TLS and descriptor out of the top of its size, so
 * the frame here is kilobytes below the block's top and "frame - size"
 * lies below the block (a 16 KiB thread crashed in the capture): asked of
 * glibc instead. In a seccomp sandbox (where that asks the kernel for the
 * thread's affinity) half of `size` (0: not known, nothing is noted) is
 * assumed taken above the frame, and the top a page above it: every frame
 * of the program's is below its caller's. */
static void note_thread_stack(struct thread_state *ts, size_t size)
{
	uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
	pthread_attr_t attr;
	if (!in_sandbox() && pthread_getattr_np(pthread_self(), &attr) == 0) {
		void *low = NULL;
		size_t got = 0;
		int ok = pthread_attr_getstack(&attr, &low, &got) == 0 && (uintptr_t)low < frame &&
			 frame - (uintptr_t)low < got;
		pthread_attr_destroy(&attr);
		if (ok) {
			ts->stack_limit = (uintptr_t)low;
			ts->stack_top = (uintptr_t)low + got;
			return;
		}
	}
	if (size) {
		ts->stack_limit = frame - size / 2;
		ts->stack_top = frame + 4096;
	}
}

void thread_stack_note_main(void)
{
	/* glibc reads the main thread's from /proc/self/maps and the stack
	 * limit: at start-up, where the tracer may allocate. */
	note_thread_stack(thread_state(), 0);
}

/* What the start trampolines do before the start routine. */
static struct thread_start thread_begins(void *p)
{
	struct thread_start start = *(struct thread_start *)p;
	free(p);
	struct thread_state *ts = thread_state();
	thread_registry_add(ts);
	note_thread_stack(ts, start.stack_size ? start.stack_size : DEFAULT_STACK_GUESS);
	if (start.stack_addr && (!ts->stack_limit || ts->stack_limit < start.stack_addr))
		ts->stack_limit = start.stack_addr;   /* the program's own block */
	ts->urcu_worker = (uint8_t)start.urcu_worker;
	ts->start_seq = start.start_seq;
	pthread_setspecific(thread_end_key, (void *)1);
	return start;
}

static void *thread_trampoline(void *p)
{
	struct thread_start start = thread_begins(p);
	void *ret;
	pthread_cleanup_push(thread_ends, NULL);
	ret = start.start_routine(start.arg);
	pthread_cleanup_pop(1);
	return ret;
}

/* A C11 thread's: glibc calls it as the int (*)(void *) it was given
 * (thrd_create() marks the thread C11 for its own pthread_create), and
 * thrd_exit() unwinds through the cleanup as pthread_exit() does. */
static int c11_thread_trampoline(void *p)
{
	struct thread_start start = thread_begins(p);
	int ret;
	pthread_cleanup_push(thread_ends, NULL);
	ret = ((int (*)(void *))(void (*)(void))start.start_routine)(start.arg);
	pthread_cleanup_pop(1);
	return ret;
}

/* What the tracer takes of a thread's stack: glibc carves every module's
 * static TLS out of the size the program asked for, ours too (the thread
 * state, ~2 KiB), and the wrapper frames under the start routine. A
 * program that sized a small stack exactly (16 KiB) would overflow it. */
static int tls_of_tracer(struct dl_phdr_info *info, size_t size, void *out)
{
	(void)size;
	uintptr_t self = (uintptr_t)&tls_of_tracer;
	size_t tls = 0;
	int ours = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && self >= lo && self < lo + ph->p_memsz)
			ours = 1;
		if (ph->p_type == PT_TLS)
			tls = ph->p_memsz + (ph->p_align > 1 ? ph->p_align : 0);
	}
	if (ours)
		*(size_t *)out = tls;
	return ours;
}

/* Sizes below this are the ones a program sized to what it uses. */
#define SMALL_STACK ((size_t)1 << 20)

static size_t stack_taken_by_tracer(void)
{
	static size_t taken;
	if (!__atomic_load_n(&taken, __ATOMIC_RELAXED)) {
		size_t tls = 0;
		dl_iterate_phdr(tls_of_tracer, &tls);
		__atomic_store_n(&taken, tls + 4096, __ATOMIC_RELAXED);   /* + its frames (validation, not unwinding) */
	}
	return taken;
}

int pthread_create(pthread_t *restrict thread, const pthread_attr_t *restrict attr,
		   void *(*start_routine)(void *), void *restrict arg)
{
	struct thread_state *ts = thread_state();
	if (ts->in_tracer)
		return REAL(pthread_create)(thread, attr, start_routine, arg);
	pthread_once(&thread_end_key_once, create_thread_end_key);
	struct thread_start *start = malloc(sizeof(*start));
	if (!start)   /* keep the program's semantics: create it untraced */
		return REAL(pthread_create)(thread, attr, start_routine, arg);
	start->start_routine = start_routine;
	start->arg = arg;
	start->stack_size = 0;
	start->stack_addr = 0;
	start->urcu_worker = is_urcu_code((uintptr_t)start_routine);
	start->start_seq = thread_start_seq_next();
	if (attr) {
		void *addr = NULL;
		size_t size = 0;
		/* glibc's getstack answers "0 - size" for an attribute with no
		 * stack of the caller's (it subtracts the size from a NULL top):
		 * that stack_limit let a 16 KiB thread's capture run off its end */
		if (!pthread_attr_getstack(attr, &addr, &size) && addr && (uintptr_t)addr + size != 0)
			start->stack_addr = (uintptr_t)addr;
		else if (!pthread_attr_getstacksize(attr, &size))
			start->stack_size = size;
	}
	/* A small size the program chose (not the 8 MiB default an attribute
	 * reports when none was set) is given back what the tracer takes of it:
	 * asked of a copy of the attribute (glibc's is plain data but for a
	 * pointer to its affinity and signal mask, which the copy shares and
	 * pthread_create() only reads; the copy is never destroyed). */
	pthread_attr_t grown;
	if (start->stack_size && start->stack_size < SMALL_STACK) {
		memcpy(&grown, attr, sizeof(grown));
		if (pthread_attr_setstacksize(&grown, start->stack_size + stack_taken_by_tracer()) == 0) {
			start->stack_size += stack_taken_by_tracer();
			attr = &grown;
		}
	}
	int ret = REAL(pthread_create)(thread, attr, thread_trampoline, start);
	if (ret != 0)
		free(start);
	return ret;
}

/* C11 thrd_create(): glibc starts the thread with its internal
 * pthread_create, past the wrapper above. Default attributes: no stack
 * of the program's to size. */
int thrd_create(thrd_t *thread, thrd_start_t start_routine, void *arg)
{
	struct thread_state *ts = thread_state();
	if (ts->in_tracer)
		return REAL(thrd_create)(thread, start_routine, arg);
	pthread_once(&thread_end_key_once, create_thread_end_key);
	struct thread_start *start = calloc(1, sizeof(*start));
	if (!start)
		return REAL(thrd_create)(thread, start_routine, arg);
	start->start_routine = (void *(*)(void *))(void (*)(void))start_routine;
	start->arg = arg;
	start->urcu_worker = is_urcu_code((uintptr_t)start_routine);
	int ret = REAL(thrd_create)(thread, c11_thread_trampoline, start);
	if (ret != thrd_success)
		free(start);
	return ret;
}

void pthread_exit(void *retval)
{
	struct thread_state *ts = thread_state();
	if (!ts->in_tracer) {
		/* The main thread has no trampoline: arm the key for it too. */
		pthread_once(&thread_end_key_once, create_thread_end_key);
		if (!pthread_getspecific(thread_end_key))
			pthread_setspecific(thread_end_key, (void *)1);
	}
	REAL(pthread_exit)(retval);
}
