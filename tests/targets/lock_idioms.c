/* Idioms of real programs that are correct but look like lock bugs
 * (each seen in a real program), beside the bugs they must not hide:
 * fork children, cleanup handlers, recursive descent, allocators' atfork
 * handlers, re-initialized locks, mutexes used as semaphores, and the
 * held-lock depth limit. */
#include "target.h"
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t worker_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t never_locked = PTHREAD_MUTEX_INITIALIZER;

/* ---- fork: the child inherits what the forking thread held ---------------- */

static int child_status(pid_t pid)
{
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* lttng's run-as worker: forked while worker_lock is held; the child
 * serves and returns from main, or its main thread calls pthread_exit(). */
SCENARIO ok_fork_child_inherits(void)
{
	pthread_mutex_lock(&worker_lock);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		printf("child serves\n");
		exit(3);
	}
	printf("child exit %d\n", child_status(pid));
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		pthread_exit(NULL);   /* the child's last thread ends: status 0 */
	printf("child pthread_exit %d\n", child_status(pid));
	pthread_mutex_unlock(&worker_lock);
}

/* ---- pthread_exit with a cleanup handler that unlocks ---------------------- */

static void unlock_cleanup(void *m)
{
	pthread_mutex_unlock(m);
}

static void *exits_with_cleanup(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&worker_lock);
	pthread_cleanup_push(unlock_cleanup, &worker_lock);
	pthread_exit(NULL);
	pthread_cleanup_pop(0);
	return NULL;
}

SCENARIO ok_cleanup_handler_unlocks(void)
{
	in_thread(exits_with_cleanup);
	printf("done\n");
}

/* ---- recursive mutexes ---------------------------------------------------- */

static pthread_mutex_t tree_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t leaf_lock = PTHREAD_MUTEX_INITIALIZER;

static void descend(int depth)
{
	pthread_mutex_lock(&tree_lock);
	if (depth > 0) {
		descend(depth - 1);
	} else {
		pthread_mutex_lock(&leaf_lock);   /* something taken at the bottom */
		pthread_mutex_unlock(&leaf_lock);
	}
	pthread_mutex_unlock(&tree_lock);
}

SCENARIO ok_recursive_descent(void)
{
	descend(60);
	printf("done\n");
}

/* One unlock more than locks: glibc says EPERM, and it is a bug. */
SCENARIO bug_recursive_extra_unlock(void)
{
	pthread_mutex_lock(&tree_lock);
	pthread_mutex_lock(&tree_lock);
	pthread_mutex_unlock(&tree_lock);
	pthread_mutex_unlock(&tree_lock);
	printf("site %d\n", __LINE__ + 1);
	int ret = pthread_mutex_unlock(&tree_lock);
	printf("extra unlock %d\n", ret);
}

/* ---- an allocator's atfork handlers take all its arena locks --------------- */

#define NR_ARENAS 44
static pthread_mutex_t arenas[256];
static int nr_arenas = NR_ARENAS;

static void arenas_prepare(void)
{
	for (int i = 0; i < nr_arenas; i++)
		pthread_mutex_lock(&arenas[i]);
}

static void arenas_parent(void)
{
	for (int i = nr_arenas - 1; i >= 0; i--)
		pthread_mutex_unlock(&arenas[i]);
}

/* jemalloc's child handler re-initializes instead of unlocking. */
static void arenas_child(void)
{
	for (int i = 0; i < nr_arenas; i++)
		pthread_mutex_init(&arenas[i], NULL);
}

static void init_arena(pthread_mutex_t *m)
{
	pthread_mutex_init(m, NULL);   /* one init site: one class */
}

SCENARIO ok_allocator_atfork(void)
{
	for (int i = 0; i < nr_arenas; i++)
		init_arena(&arenas[i]);
	pthread_atfork(arenas_prepare, arenas_parent, arenas_child);
	for (int round = 0; round < 3; round++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			/* the child uses an arena, and ends a thread of its own */
			pthread_mutex_lock(&arenas[0]);
			pthread_mutex_unlock(&arenas[0]);
			in_thread(exits_with_cleanup);
			exit(0);
		}
		printf("child %d\n", child_status(pid));
	}
}

/* 256 arenas on a 64-CPU machine: more locks of one class held at once
 * than MAX_LOCK_DEPTH. They count as references of one entry. */
SCENARIO ok_allocator_atfork_many_arenas(void)
{
	nr_arenas = 256;
	ok_allocator_atfork();
}

/* Re-initializing a lock this thread holds releases it. */
static void *reinits_held_lock(void *arg)
{
	(void)arg;
	static pthread_mutex_t m;
	pthread_mutex_init(&m, NULL);
	pthread_mutex_lock(&m);
	pthread_mutex_init(&m, NULL);
	return NULL;
}

SCENARIO ok_reinit_held_lock(void)
{
	in_thread(reinits_held_lock);
	printf("done\n");
}

/* ---- the depth limit -------------------------------------------------------- */

#define DEEP 52
/* 52 static locks of distinct classes: distinct variables (an array would
 * be one class, whose locks held at once count as one entry). */
#define LOCK8(n) static pthread_mutex_t d##n##0, d##n##1, d##n##2, d##n##3, d##n##4, d##n##5, d##n##6, d##n##7;
LOCK8(0) LOCK8(1) LOCK8(2) LOCK8(3) LOCK8(4) LOCK8(5) LOCK8(6)
#define REF8(n) &d##n##0, &d##n##1, &d##n##2, &d##n##3, &d##n##4, &d##n##5, &d##n##6, &d##n##7
static pthread_mutex_t *const chain[56] = { REF8(0), REF8(1), REF8(2), REF8(3), REF8(4), REF8(5), REF8(6) };

/* 52 locks of distinct classes nested: past MAX_LOCK_DEPTH. One notice,
 * every release accounted for, and a genuine bad unlock afterwards still
 * seen. */
SCENARIO bug_deeper_than_the_limit(void)
{
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < DEEP; i++)
			pthread_mutex_lock(chain[i]);
		for (int i = DEEP - 1; i >= 0; i--)
			pthread_mutex_unlock(chain[i]);
	}
	printf("site %d\n", __LINE__ + 1);
	pthread_mutex_unlock(&never_locked);
	printf("done\n");
}

/* ---- a mutex used as a semaphore (xfs_repair's buffer lock) ----------------- */

static pthread_mutex_t buffer_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t handoff = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t handoff_cond = PTHREAD_COND_INITIALIZER;
static int buffer_taken;   /* 1: the reader took buffer_lock for the writer to release */

/* arg non-NULL: after its rounds the reader takes buffer_lock once more
 * and ends, leaving the release to the writer (xfs_repair's prefetch
 * threads end so: the buffers they locked are released by the main
 * thread after they are gone). */
static void *buffer_reader(void *arg)
{
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&buffer_lock);   /* taken here, released by the writer */
		pthread_mutex_lock(&handoff);
		buffer_taken = 1;
		pthread_cond_broadcast(&handoff_cond);
		while (buffer_taken)
			pthread_cond_wait(&handoff_cond, &handoff);
		pthread_mutex_unlock(&handoff);
	}
	if (arg)
		pthread_mutex_lock(&buffer_lock);
	return NULL;
}

static void handoff_rounds(void *end_holding)
{
	pthread_t reader;
	pthread_create(&reader, NULL, buffer_reader, end_holding);
	printf("site %d\n", __LINE__ + 6);
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&handoff);
		while (!buffer_taken)
			pthread_cond_wait(&handoff_cond, &handoff);
		pthread_mutex_unlock(&handoff);
		pthread_mutex_unlock(&buffer_lock);   /* the release by another thread */
		pthread_mutex_lock(&handoff);
		buffer_taken = 0;
		pthread_cond_broadcast(&handoff_cond);
		pthread_mutex_unlock(&handoff);
	}
	pthread_join(reader, NULL);
}

SCENARIO bug_mutex_as_semaphore(void)
{
	handoff_rounds(NULL);
	printf("done\n");
}

/* The reader ends holding the buffer lock it took for the writer, which
 * releases it after the join: the same idiom, still one report. */
SCENARIO bug_mutex_as_semaphore_taker_ends(void)
{
	handoff_rounds("end holding");
	pthread_mutex_unlock(&buffer_lock);
	printf("done\n");
}

/* After the same hand-offs (the reader ending holding it, the writer
 * releasing it after the join), the writer releases it once more: a
 * release of a lock nobody holds, reported whatever its class. */
SCENARIO bug_unheld_release_after_handoffs(void)
{
	handoff_rounds("end holding");
	pthread_mutex_unlock(&buffer_lock);
	printf("site %d\n", __LINE__ + 1);
	pthread_mutex_unlock(&buffer_lock);
	printf("done\n");
}

/* After the same hand-offs, a thread ends holding a lock of another class
 * that nobody ever releases: that one is a leak, reported. */
static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static void *config_leaker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&config_lock);
	return NULL;
}

SCENARIO bug_leak_after_handoffs(void)
{
	handoff_rounds("end holding");
	pthread_mutex_unlock(&buffer_lock);
	pthread_t leaker;
	pthread_create(&leaker, NULL, config_leaker, NULL);
	pthread_join(leaker, NULL);
	printf("done\n");
}

static const struct scenario scenarios[] = {
	{ "ok-fork-child-inherits", ok_fork_child_inherits },
	{ "ok-cleanup-handler-unlocks", ok_cleanup_handler_unlocks },
	{ "ok-recursive-descent", ok_recursive_descent },
	{ "bug-recursive-extra-unlock", bug_recursive_extra_unlock },
	{ "ok-allocator-atfork", ok_allocator_atfork },
	{ "ok-allocator-atfork-many-arenas", ok_allocator_atfork_many_arenas },
	{ "ok-reinit-held-lock", ok_reinit_held_lock },
	{ "bug-deeper-than-the-limit", bug_deeper_than_the_limit },
	{ "bug-mutex-as-semaphore", bug_mutex_as_semaphore },
	{ "bug-mutex-as-semaphore-taker-ends", bug_mutex_as_semaphore_taker_ends },
	{ "bug-leak-after-handoffs", bug_leak_after_handoffs },
	{ "bug-unheld-release-after-handoffs", bug_unheld_release_after_handoffs },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	return run_scenario(argc, argv, scenarios);
}
