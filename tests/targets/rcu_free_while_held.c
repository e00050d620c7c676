/* The bug RCU exists to prevent: an updater unpublishes an object and frees
 * it without waiting for a grace period, while a reader that dereferenced it
 * is still inside its read-side critical section. Each buggy updater sits
 * beside its correct twins (a grace period, call_rcu(), defer_rcu()).
 *
 * Pipes make every interleaving deterministic: the reader dereferences and
 * tells the updater; the updater unpublishes and frees (or waits, when it is
 * the correct twin) and tells the reader; only then does the reader leave.
 * The reader never touches the object after the free: the bug is the free.
 *
 * Built for every flavor without the header (rcu_dereference() is liburcu's
 * exported rcu_dereference_sym()), and with _LGPL_SOURCE through
 * <lockdep-rcu.h> (everything inlined; the header tells the tracer). Each
 * scenario prints "site <line>" for the lines the report must name. */
#include "target.h"
#ifdef _LGPL_SOURCE
#include <lockdep-rcu.h>
#endif
#include <limits.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SITE(stmt) do { printf("site %d\n", __LINE__); stmt; } while (0)


/* QSBR has no read-side sections (rcu_read_lock() is empty): an online
 * thread is a reader until it announces a quiescent state. */
#if defined(TARGET_QSBR)
#define READER_QUIESCENT() rcu_quiescent_state()
#else
#define READER_QUIESCENT() do { } while (0)
#endif

struct config {
	int value;
	struct rcu_head rcu;
};

static struct config *gp;       /* the RCU-protected pointer */
static struct config *other;    /* another one, for readers busy elsewhere */
static int to_updater[2], to_reader[2];
static volatile int sink;

static struct config *config_new(int value)
{
	struct config *c = calloc(1, sizeof(*c));
	c->value = value;
	return c;
}

static void free_config(struct rcu_head *head)
{
	free(caa_container_of(head, struct config, rcu));
}

static void free_plain(void *p)
{
	free(p);
}

/* ---- readers ------------------------------------------------------------- */

/* Dereferences gp inside a read-side section and stays there until the
 * updater says it is done. */
static void *reader_holds_config(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	REGISTER();
	struct config *c;
	SITE(rcu_read_lock());
	SITE(c = rcu_dereference(gp));
	sink = c->value;
	say(to_updater);
	hear(to_reader);
	rcu_read_unlock();
	READER_QUIESCENT();
	UNREGISTER();
	return NULL;
}

/* Dereferences gp in a first section, which ends; then stays in a second
 * section holding another object. */
static void *reader_moved_on(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	REGISTER();
	rcu_read_lock();
	sink = rcu_dereference(gp)->value;
	rcu_read_unlock();
	READER_QUIESCENT();
	rcu_read_lock();
	sink = rcu_dereference(other)->value;
	say(to_updater);
	hear(to_reader);
	rcu_read_unlock();
	READER_QUIESCENT();
	UNREGISTER();
	return NULL;
}

static pthread_t start_reader(void *(*fn)(void *))
{
	pthread_t t;
	if (pipe(to_updater) || pipe(to_reader) || pthread_create(&t, NULL, fn, NULL))
		exit(3);
	return t;
}

static void finish(pthread_t reader)
{
	pthread_join(reader, NULL);
	printf("done\n");
}

/* ---- buggy updaters --------------------------------------------------------- */

static volatile int updates;

__attribute__((noinline)) static void update_without_grace_period(void)
{
	struct config *old = gp;
	rcu_assign_pointer(gp, config_new(2));
	SITE(free(old));   /* the bug: no synchronize_rcu() before the free */
	updates++;
}

SCENARIO bug_free_after_assign(void)
{
	gp = config_new(1);
	pthread_t r = start_reader(reader_holds_config);
	hear(to_updater);
	update_without_grace_period();
	say(to_reader);
	finish(r);
}

__attribute__((noinline)) static void replace_without_grace_period(void)
{
	struct config *old = rcu_xchg_pointer(&gp, config_new(2));
	SITE(free(old));
	updates++;
}

SCENARIO bug_free_after_xchg(void)
{
	gp = config_new(1);
	pthread_t r = start_reader(reader_holds_config);
	hear(to_updater);
	replace_without_grace_period();
	say(to_reader);
	finish(r);
}

/* realloc() that moves the block frees the old one. */
__attribute__((noinline)) static void grow_without_grace_period(void)
{
	struct config *old = gp;
	rcu_assign_pointer(gp, config_new(2));
	void *bigger;
	SITE(bigger = realloc(old, 1 << 20));
	free(bigger);   /* never dereferenced by anyone: silent */
}

SCENARIO bug_realloc(void)
{
	gp = config_new(1);
	pthread_t r = start_reader(reader_holds_config);
	hear(to_updater);
	grow_without_grace_period();
	say(to_reader);
	finish(r);
}

__attribute__((noinline)) static void unmap_without_grace_period(struct config *mapped)
{
	rcu_assign_pointer(gp, config_new(2));
	SITE(munmap(mapped, 4096));
	updates++;
}

SCENARIO bug_munmap(void)
{
	struct config *mapped = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mapped == MAP_FAILED)
		exit(3);
	gp = mapped;
	pthread_t r = start_reader(reader_holds_config);
	hear(to_updater);
	unmap_without_grace_period(mapped);
	say(to_reader);
	finish(r);
}

/* The reader runs on the smallest stack a thread may have: what it
 * dereferences is remembered outside its stack. */
SCENARIO bug_small_stack_reader(void)
{
	gp = config_new(1);
	if (pipe(to_updater) || pipe(to_reader))
		exit(3);
	pthread_attr_t attr;
	pthread_t r;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
	if (pthread_create(&r, &attr, reader_holds_config, NULL))
		exit(3);
	hear(to_updater);
	update_without_grace_period();
	say(to_reader);
	finish(r);
}

/* A section that dereferences more objects than a thread remembers (64):
 * the oldest are forgotten. A free of the last one is reported, saying how
 * many were not remembered; a free of the first one is missed (silent),
 * never reported wrongly. */
#define MANY 100
static struct config *many[MANY];

static void *reader_of_many(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	REGISTER();
	rcu_read_lock();
	for (int i = 0; i < MANY; i++)
		sink = rcu_dereference(many[i])->value;
	say(to_updater);
	hear(to_reader);
	rcu_read_unlock();
	READER_QUIESCENT();
	UNREGISTER();
	return NULL;
}

__attribute__((noinline)) static void free_the_last(void)
{
	struct config *last = many[MANY - 1];
	rcu_assign_pointer(many[MANY - 1], NULL);
	SITE(free(last));
	updates++;
}

__attribute__((noinline)) static void free_the_first(void)
{
	struct config *first = many[0];
	rcu_assign_pointer(many[0], NULL);
	free(first);
	updates++;
}

SCENARIO bug_many_dereferences(void)
{
	for (int i = 0; i < MANY; i++)
		many[i] = config_new(i);
	pthread_t r = start_reader(reader_of_many);
	hear(to_updater);
	free_the_first();
	free_the_last();
	say(to_reader);
	finish(r);
}

/* ---- correct twins ------------------------------------------------------------ */

/* The reader must leave before the grace period can end: the updater lets
 * it go first, then waits, then frees. */
__attribute__((noinline)) static void update_after_grace_period(void)
{
	struct config *old = gp;
	rcu_assign_pointer(gp, config_new(2));
	say(to_reader);
	synchronize_rcu();
	free(old);
	updates++;
}

SCENARIO ok_synchronize_rcu(void)
{
	gp = config_new(1);
	pthread_t r = start_reader(reader_holds_config);
	hear(to_updater);
	update_after_grace_period();
	finish(r);
}

/* call_rcu() needs a registered (QSBR: online) caller; the callback frees on
 * liburcu's worker thread once the reader has left. */
SCENARIO ok_call_rcu(void)
{
	gp = config_new(1);
	pthread_t r = start_reader(reader_holds_config);
	hear(to_updater);
	REGISTER();
	struct config *old = gp;
	rcu_assign_pointer(gp, config_new(2));
	call_rcu(&old->rcu, free_config);
	UNREGISTER();
	say(to_reader);
	pthread_join(r, NULL);
	rcu_barrier();
	printf("done\n");
}

/* defer_rcu() frees in rcu_defer_barrier() (or liburcu's defer thread),
 * after a grace period. */
SCENARIO ok_defer_rcu(void)
{
	gp = config_new(1);
	pthread_t r = start_reader(reader_holds_config);
	hear(to_updater);
	REGISTER();
	rcu_defer_register_thread();
	struct config *old = gp;
	rcu_assign_pointer(gp, config_new(2));
	defer_rcu(free_plain, old);
	say(to_reader);
	pthread_join(r, NULL);
	rcu_defer_barrier();
	rcu_defer_unregister_thread();
	UNREGISTER();
	printf("done\n");
}

/* The reader dereferenced gp in a section that ended: it holds `other`
 * now, not the old gp. (No grace period: legal here only because no
 * reader can hold it, which this scenario makes sure of.) */
SCENARIO ok_earlier_section(void)
{
	gp = config_new(1);
	other = config_new(10);
	pthread_t r = start_reader(reader_moved_on);
	hear(to_updater);
	struct config *old = gp;
	rcu_assign_pointer(gp, config_new(2));
	free(old);
	say(to_reader);
	finish(r);
}

/* A reader holds gp; the updater frees memory no reader dereferenced. */
SCENARIO ok_not_dereferenced(void)
{
	gp = config_new(1);
	struct config *unrelated = config_new(3);
	pthread_t r = start_reader(reader_holds_config);
	hear(to_updater);
	free(unrelated);
	say(to_reader);
	finish(r);
}

/* The reader frees what it dereferenced itself: not another thread's
 * reader, not this check's business. */
SCENARIO ok_own_dereference(void)
{
	REGISTER();
	gp = config_new(1);
	rcu_read_lock();
	struct config *c = rcu_dereference(gp);
	rcu_assign_pointer(gp, NULL);
	free(c);
	rcu_read_unlock();
	UNREGISTER();
	printf("done\n");
}

/* The object is protected by a lock as well: the reader dereferences it
 * under the lock (inside a read-side section for other reasons), the
 * updater replaces it under the same lock and frees it once the reader
 * released the lock. Lock-protected, so legal: a dereference under a lock
 * is the update side's (the article's rule 2), and is not remembered. */
static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;

static void *reader_under_lock(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	REGISTER();
	rcu_read_lock();
	pthread_mutex_lock(&config_lock);
	sink = rcu_dereference(gp)->value;
	pthread_mutex_unlock(&config_lock);
	say(to_updater);
	hear(to_reader);
	rcu_read_unlock();
	READER_QUIESCENT();
	UNREGISTER();
	return NULL;
}

SCENARIO ok_dereference_under_lock(void)
{
	gp = config_new(1);
	pthread_t r = start_reader(reader_under_lock);
	hear(to_updater);
	pthread_mutex_lock(&config_lock);
	struct config *old = gp;
	rcu_assign_pointer(gp, config_new(2));
	pthread_mutex_unlock(&config_lock);
	free(old);
	say(to_reader);
	finish(r);
}

/* A forked child has no reader: the parent's reader holds the parent's
 * copy, and the child may free its own. */
SCENARIO ok_fork_child(void)
{
	gp = config_new(1);
	pthread_t r = start_reader(reader_holds_config);
	hear(to_updater);
	pid_t child = fork();
	if (child == 0) {
		struct config *old = gp;
		gp = NULL;
		free(old);
		_exit(0);
	}
	int status;
	if (child < 0 || waitpid(child, &status, 0) != child || status != 0)
		exit(5);
	say(to_reader);
	finish(r);
}

/* Readers come and go (their sets go back to the pool and are taken
 * again); once they are all gone, nobody holds anything. */
static void *short_reader(void *arg)
{
	(void)arg;
	REGISTER();
	rcu_read_lock();
	sink = rcu_dereference(gp)->value;
	rcu_read_unlock();
	READER_QUIESCENT();
	UNREGISTER();
	return NULL;
}

SCENARIO ok_readers_gone(void)
{
	gp = config_new(1);
	for (int round = 0; round < 20; round++) {
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			if (pthread_create(&t[i], NULL, short_reader, NULL))
				exit(3);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	}
	struct config *old = gp;
	rcu_assign_pointer(gp, config_new(2));
	free(old);
	printf("done\n");
}

/* Correct RCU under load: readers in tight loops, an updater that waits
 * for a grace period before each free, and frees of memory nobody reads,
 * all racing: never a report (a racing scan may only miss). */
#define BUSY_READERS 2
#define BUSY_UPDATES 200

static volatile int busy_done;

static void *busy_reader(void *arg)
{
	(void)arg;
	REGISTER();
	while (!busy_done) {
		rcu_read_lock();
		struct config *c = rcu_dereference(gp);
		sink = c->value;
		sink = rcu_dereference(other)->value;
		rcu_read_unlock();
		READER_QUIESCENT();
	}
	UNREGISTER();
	return NULL;
}

SCENARIO ok_busy_correct(void)
{
	gp = config_new(1);
	other = config_new(10);
	pthread_t r[BUSY_READERS];
	for (int i = 0; i < BUSY_READERS; i++)
		if (pthread_create(&r[i], NULL, busy_reader, NULL))
			exit(3);
	for (int i = 0; i < BUSY_UPDATES; i++) {
		struct config *old = rcu_xchg_pointer(&gp, config_new(i + 2));
		free(malloc(64));
		synchronize_rcu();
		free(old);
	}
	busy_done = 1;
	for (int i = 0; i < BUSY_READERS; i++)
		pthread_join(r[i], NULL);
	printf("done\n");
}

/* ---- the header's flavors: SRCU and RCU-sched readers ------------------------ */

#ifdef LOCKDEP_RCU_H
static DEFINE_SRCU(config_srcu);

static void *srcu_reader(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	REGISTER();
	int idx;
	SITE(idx = srcu_read_lock(&config_srcu));
	SITE(sink = srcu_dereference(gp, &config_srcu)->value);
	say(to_updater);
	hear(to_reader);
	srcu_read_unlock(&config_srcu, idx);
	READER_QUIESCENT();
	UNREGISTER();
	return NULL;
}

SCENARIO bug_srcu(void)
{
	gp = config_new(1);
	pthread_t r = start_reader(srcu_reader);
	hear(to_updater);
	update_without_grace_period();
	say(to_reader);
	finish(r);
}

static void *sched_reader(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	REGISTER();
	SITE(rcu_read_lock_sched());
	SITE(sink = rcu_dereference_sched(gp)->value);
	say(to_updater);
	hear(to_reader);
	rcu_read_unlock_sched();
	READER_QUIESCENT();
	UNREGISTER();
	return NULL;
}

SCENARIO bug_sched(void)
{
	gp = config_new(1);
	pthread_t r = start_reader(sched_reader);
	hear(to_updater);
	update_without_grace_period();
	say(to_reader);
	finish(r);
}
#endif

/* ---- racy: for lockdep-rcu stress --perturb --------------------------------- */

/* A configuration reloaded now and then with the bug (no grace period), read
 * in short sections by a thread that mostly does other work: the free hits
 * a reader inside its section only when the timing is right, which perturb's
 * delays at read-side unlock make likely. */
#define RACY_READS 4000
#define RACY_RELOADS 40

static volatile int racy_done;

static void busy_work(void)
{
	for (volatile int i = 0; i < 2000; i++)
		;
}

static void *racy_reader(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	REGISTER();
	for (int i = 0; i < RACY_READS && !racy_done; i++) {
		rcu_read_lock();
		sink = rcu_dereference(gp)->value;
		rcu_read_unlock();
		READER_QUIESCENT();
		busy_work();
	}
	UNREGISTER();
	return NULL;
}

__attribute__((noinline)) static void reload_without_grace_period(int value)
{
	struct config *old = rcu_xchg_pointer(&gp, config_new(value));
	free(old);
	updates++;
}

SCENARIO racy(void)
{
	gp = config_new(1);
	pthread_t r;
	if (pthread_create(&r, NULL, racy_reader, NULL))
		exit(3);
	for (int i = 0; i < RACY_RELOADS; i++) {
		struct timespec t = { 0, 100 * 1000L };
		nanosleep(&t, NULL);
		reload_without_grace_period(i + 2);
	}
	racy_done = 1;
	pthread_join(r, NULL);
	printf("done\n");
}

static const struct scenario scenarios[] = {
	{ "bug-free-after-assign", bug_free_after_assign },
	{ "bug-free-after-xchg", bug_free_after_xchg },
	{ "bug-realloc", bug_realloc },
	{ "bug-munmap", bug_munmap },
	{ "bug-small-stack-reader", bug_small_stack_reader },
	{ "bug-many-dereferences", bug_many_dereferences },
	{ "ok-synchronize-rcu", ok_synchronize_rcu },
	{ "ok-call-rcu", ok_call_rcu },
	{ "ok-defer-rcu", ok_defer_rcu },
	{ "ok-earlier-section", ok_earlier_section },
	{ "ok-not-dereferenced", ok_not_dereferenced },
	{ "ok-own-dereference", ok_own_dereference },
	{ "ok-dereference-under-lock", ok_dereference_under_lock },
	{ "ok-fork-child", ok_fork_child },
	{ "ok-readers-gone", ok_readers_gone },
	{ "ok-busy-correct", ok_busy_correct },
#ifdef LOCKDEP_RCU_H
	{ "bug-srcu", bug_srcu },
	{ "bug-sched", bug_sched },
#endif
	{ "racy", racy },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	return run_scenario(argc, argv, scenarios);
}
