/* A fixed array of slots; registration and removal take the registry
 * lock, which is a leaf (nothing else is taken under it). */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>
#include "runtime/thread_registry.h"
#include "runtime/sandbox.h"
#include "runtime/tracer_lock.h"
#include "runtime/wait_state.h"
#include "runtime/log_output.h"

static struct thread_state *threads[MAX_REGISTERED_THREADS];
static unsigned nr_slots;   /* slots in use are below this */
static struct tracer_lock registry = TRACER_LOCK_INITIALIZER(TRACER_LOCK_THREADS, "threads");

void thread_registry_add(struct thread_state *ts)
{
	/* a thread started inside a seccomp sandbox may not ask (sandbox.h) */
	ts->tid = thread_tid();
	if (!in_sandbox())
		sandbox_learn_tid(ts->tid);
	if (!tracer_lock_acquire(&registry, ts))
		return;
	unsigned i;
	for (i = 0; i < nr_slots && threads[i]; i++)
		;
	if (i < MAX_REGISTERED_THREADS) {
		threads[i] = ts;
		if (i == nr_slots)
			nr_slots++;
		ts->listed = 1;
	}
	tracer_lock_release(&registry);
	if (!ts->listed)
		log_output_limit_once("MAX_REGISTERED_THREADS too low!",
				  "some threads are not listed: a lock they hold is not found when another thread releases it");
}

void thread_registry_remove(struct thread_state *ts)
{
	if (!ts->listed || !tracer_lock_acquire(&registry, ts))
		return;
	for (unsigned i = 0; i < nr_slots; i++)
		if (threads[i] == ts) {
			threads[i] = 0;
			break;
		}
	while (nr_slots && !threads[nr_slots - 1])
		nr_slots--;
	ts->listed = 0;
	tracer_lock_release(&registry);
}

int thread_registry_find(struct thread_state *self,
			 int (*fn)(struct thread_state *other, void *arg), void *arg)
{
	if (!tracer_lock_acquire(&registry, self))
		return -1;
	int ret = 0;
	for (unsigned i = 0; i < nr_slots && !ret; i++)
		if (threads[i] && threads[i] != self)
			ret = fn(threads[i], arg);
	tracer_lock_release(&registry);
	return ret;
}

size_t thread_registry_count(void)
{
	size_t n = 0;
	unsigned slots = __atomic_load_n(&nr_slots, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < slots; i++)
		n += __atomic_load_n(&threads[i], __ATOMIC_RELAXED) != NULL;
	return n;
}

static void snapshot_one(const struct thread_state *t, struct thread_snapshot *s)
{
	s->ts = t;
	s->tid = t->tid;
	/* Its thread publishes a wait by storing kind last and ends it by
	 * clearing kind first; seq tells one wait from the next. A copy whose
	 * kind and seq did not move meanwhile is one wait, whole. */
	uint8_t kind = __atomic_load_n(&t->wait.kind, __ATOMIC_ACQUIRE);
	uint32_t seq = __atomic_load_n(&t->wait.seq, __ATOMIC_ACQUIRE);
	s->wait = t->wait;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (kind == WAIT_NONE || __atomic_load_n(&t->wait.kind, __ATOMIC_RELAXED) != kind ||
	    __atomic_load_n(&t->wait.seq, __ATOMIC_RELAXED) != seq)
		memset(&s->wait, 0, sizeof(s->wait));
	else
		s->wait.kind = kind;
	unsigned depth = __atomic_load_n(&t->depth, __ATOMIC_RELAXED);
	s->depth = depth < MAX_LOCK_DEPTH ? depth : MAX_LOCK_DEPTH;
	s->untracked = t->untracked;
	for (unsigned i = 0; i < s->depth; i++)
		s->held[i] = t->held[i];
	memcpy(s->nesting, t->nesting, sizeof(s->nesting));
	memcpy(s->registered, t->registered, sizeof(s->registered));
	s->qsbr_since_ip = __atomic_load_n(&t->qsbr_since_ip, __ATOMIC_RELAXED);
	s->qsbr_since_what = __atomic_load_n(&t->qsbr_since_what, __ATOMIC_RELAXED);
}

size_t thread_registry_snapshot(struct thread_state *self, struct thread_snapshot *out, size_t max,
				void (*more)(const struct thread_state *t, struct thread_snapshot *s))
{
	if (!tracer_lock_acquire(&registry, self))
		return 0;
	size_t n = 0;
	for (unsigned i = 0; i < nr_slots && n < max; i++)
		if (threads[i]) {
			snapshot_one(threads[i], &out[n]);
			if (more)
				more(threads[i], &out[n]);
			n++;
		}
	tracer_lock_release(&registry);
	return n;
}

void thread_registry_fork_prepare(struct thread_state *self)
{
	tracer_lock_fork_prepare(&registry, self);
}

void thread_registry_fork_parent(void)
{
	tracer_lock_fork_parent(&registry);
}

/* The child has one thread: the one that forked. */
void thread_registry_fork_child(struct thread_state *self)
{
	tracer_lock_fork_child(&registry, self);
	for (unsigned i = 0; i < nr_slots; i++)
		threads[i] = 0;
	nr_slots = 0;
	self->listed = 0;
	thread_registry_add(self);
}

static int same_tid(struct thread_state *other, void *arg)
{
	return other->tid == *(const int *)arg;
}

int thread_registry_has_tid(struct thread_state *self, int tid)
{
	return self->tid == tid || thread_registry_find(self, same_tid, &tid) > 0;
}

static uint32_t start_seq;

uint32_t thread_start_seq_next(void)
{
	return __atomic_add_fetch(&start_seq, 1, __ATOMIC_RELAXED);
}

uint32_t thread_start_seq_now(void)
{
	return __atomic_load_n(&start_seq, __ATOMIC_RELAXED);
}
