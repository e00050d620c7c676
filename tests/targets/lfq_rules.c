/* liburcu's RCU lock-free queue (urcu/rculfqueue.h) and stack
 * (urcu/rculfstack.h) used as their headers ask (enqueue, dequeue and pop
 * in a read-side critical section; for QSBR, online; push anywhere), and
 * the mistakes their users make: each call outside a read side (QSBR:
 * offline), from a line of its own that the scenario prints as "site N".
 * Built for every flavor, and with _LGPL_SOURCE (the queue and stack then
 * inlined from liburcu's static headers). */
#include "target.h"
#include <unistd.h>
#include <urcu/rculfqueue.h>
/* The RCU stack is deprecated in favour of urcu/lfstack.h; programs still
 * use it, and this one must build warning-free. */
#define CDS_LFS_RCU_DEPRECATED
#include <urcu/rculfstack.h>

/* Outside any read side: for QSBR, an offline thread. */
#if defined(TARGET_QSBR)
#define OUTSIDE_BEGIN() rcu_thread_offline()
#define OUTSIDE_END() rcu_thread_online()
#else
#define OUTSIDE_BEGIN() do { } while (0)
#define OUTSIDE_END() do { } while (0)
#endif
#define SITE(stmt) do { printf("site %d\n", __LINE__); fflush(stdout); stmt; } while (0)

struct item {
	struct cds_lfq_node_rcu qnode;
	struct cds_lfs_node_rcu snode;
	unsigned long value;
	struct rcu_head rcu;
};

static struct cds_lfq_queue_rcu queue;
static struct cds_lfs_stack_rcu stack;

/* Another thread of the program, alive from setup to teardown: a program
 * alone needs no read side (no one can race with it), which is not what
 * the scenarios are about. */
static int to_companion[2], from_companion[2];
static pthread_t companion;
static int companion_alive;

static void *companion_waits(void *unused)
{
	(void)unused;
	say(from_companion);
	hear(to_companion);
	return NULL;
}

/* Returns once the companion runs: a thread is counted from its start. */
static void companion_start(void)
{
	if (pipe(to_companion) || pipe(from_companion) || pthread_create(&companion, NULL, companion_waits, NULL))
		exit(4);
	hear(from_companion);
	companion_alive = 1;
}

static void companion_stop(void)
{
	if (!companion_alive)
		return;
	say(to_companion);
	pthread_join(companion, NULL);
	companion_alive = 0;
}

static void free_item(struct rcu_head *head)
{
	free(caa_container_of(head, struct item, rcu));
}

static struct item *new_item(unsigned long value)
{
	struct item *it = calloc(1, sizeof(*it));
	it->value = value;
	cds_lfq_node_init_rcu(&it->qnode);
	cds_lfs_node_init_rcu(&it->snode);
	return it;
}

static struct item *of_qnode(struct cds_lfq_node_rcu *n)
{
	return n ? caa_container_of(n, struct item, qnode) : NULL;
}

static struct item *of_snode(struct cds_lfs_node_rcu *n)
{
	return n ? caa_container_of(n, struct item, snode) : NULL;
}

/* The program's own call_rcu in front of the flavor's, counting what it
 * defers: the queue's flavor is then not known to the tracer. */
static unsigned long deferred_frees;
static void program_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *))
{
	call_rcu(head, func);
	__atomic_fetch_add(&deferred_frees, 1, __ATOMIC_RELAXED);
}

/* A queue and a stack of n items each, filled in a read side. */
static void setup_with(unsigned long n, void (*queue_call_rcu)(struct rcu_head *, void (*)(struct rcu_head *)))
{
	REGISTER();
	companion_start();
	cds_lfq_init_rcu(&queue, queue_call_rcu);
	cds_lfs_init_rcu(&stack);
	rcu_read_lock();
	for (unsigned long v = 1; v <= n; v++) {
		cds_lfq_enqueue_rcu(&queue, &new_item(v)->qnode);
		cds_lfs_push_rcu(&stack, &new_item(v)->snode);
	}
	rcu_read_unlock();
}

static void setup(void)
{
	setup_with(3, call_rcu);
}

/* Empties both in a read side, frees after a grace period. */
static void teardown(void)
{
	struct item *it;
	rcu_read_lock();
	while ((it = of_qnode(cds_lfq_dequeue_rcu(&queue))))
		call_rcu(&it->rcu, free_item);
	while ((it = of_snode(cds_lfs_pop_rcu(&stack))))
		call_rcu(&it->rcu, free_item);
	rcu_read_unlock();
	rcu_barrier();
	if (cds_lfq_destroy_rcu(&queue))
		printf("destroy failed\n");
	companion_stop();
	UNREGISTER();
	printf("done\n");
}

enum op { ENQUEUE, DEQUEUE, POP, PUSH };

/* One call of op, in a read side or outside any. */
static void call_in(int in_reader, enum op op)
{
	struct item *got = NULL, *added = op == ENQUEUE || op == PUSH ? new_item(9) : NULL;
	if (in_reader)
		rcu_read_lock();
	else
		OUTSIDE_BEGIN();
	switch (op) {
	case ENQUEUE: SITE(cds_lfq_enqueue_rcu(&queue, &added->qnode)); break;
	case DEQUEUE: SITE(got = of_qnode(cds_lfq_dequeue_rcu(&queue))); break;
	case POP: SITE(got = of_snode(cds_lfs_pop_rcu(&stack))); break;
	case PUSH: SITE(cds_lfs_push_rcu(&stack, &added->snode)); break;
	}
	if (in_reader)
		rcu_read_unlock();
	else
		OUTSIDE_END();
	if (got) {
		printf("got %lu\n", got->value);
		call_rcu(&got->rcu, free_item);
	}
}

SCENARIO bug_enqueue_outside_reader(void) { setup(); call_in(0, ENQUEUE); teardown(); }
SCENARIO ok_enqueue_in_reader(void) { setup(); call_in(1, ENQUEUE); teardown(); }
SCENARIO bug_dequeue_outside_reader(void) { setup(); call_in(0, DEQUEUE); teardown(); }
SCENARIO ok_dequeue_in_reader(void) { setup(); call_in(1, DEQUEUE); teardown(); }
SCENARIO bug_pop_outside_reader(void) { setup(); call_in(0, POP); teardown(); }
SCENARIO ok_pop_in_reader(void) { setup(); call_in(1, POP); teardown(); }
/* Push is ABA-free and needs no read side (static/rculfstack.h). */
SCENARIO ok_push_outside_reader(void) { setup(); call_in(0, PUSH); teardown(); }

/* Correct twin: no read side, but the update side's lock held (the
 * article's rule 2). */
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
SCENARIO ok_dequeue_under_lock(void)
{
	setup();
	pthread_mutex_lock(&queue_lock);
	call_in(0, DEQUEUE);
	pthread_mutex_unlock(&queue_lock);
	teardown();
}

/* A queue whose call_rcu is the program's own: its flavor is not known,
 * and a read side of any flavor is asked for. */
SCENARIO bug_unknown_flavor_dequeue_outside_reader(void) { setup_with(3, program_call_rcu); call_in(0, DEQUEUE); teardown(); }
SCENARIO ok_unknown_flavor_dequeue_in_reader(void) { setup_with(3, program_call_rcu); call_in(1, DEQUEUE); teardown(); }

/* A thousand dequeues from one line outside any read side: one report. */
#define MANY 1000
SCENARIO bug_many_dequeues_outside_reader(void)
{
	static struct item *got[MANY];
	unsigned long sum = 0;
	setup_with(MANY, call_rcu);
	OUTSIDE_BEGIN();
	for (int i = 0; i < MANY; i++) {
		if (i == 0)
			printf("site %d\n", __LINE__ + 1);
		got[i] = of_qnode(cds_lfq_dequeue_rcu(&queue));
		sum += got[i] ? got[i]->value : 0;
	}
	OUTSIDE_END();
	synchronize_rcu();
	for (int i = 0; i < MANY; i++)
		free(got[i]);
	printf("sum %lu\n", sum);
	teardown();
}

/* Dequeued in a read side, freed once a grace period has passed: after
 * synchronize_rcu(), or by call_rcu(). */
SCENARIO ok_dequeue_then_synchronize_rcu_then_free(void)
{
	setup();
	rcu_read_lock();
	struct item *it = of_qnode(cds_lfq_dequeue_rcu(&queue));
	rcu_read_unlock();
	synchronize_rcu();
	free(it);
	teardown();
}

SCENARIO ok_dequeue_then_call_rcu(void)
{
	setup();
	rcu_read_lock();
	struct item *it = of_qnode(cds_lfq_dequeue_rcu(&queue));
	rcu_read_unlock();
	call_rcu(&it->rcu, free_item);
	teardown();
}

/* A worker takes an item off the queue (or the stack) in its read side
 * and hands it to the main thread, which frees it at once (the bug: the
 * worker still holds it) or with call_rcu() (the twin). Pipes order them:
 * the worker takes and tells; the main thread frees or defers, and tells;
 * only then does the worker leave its section, without touching the item
 * again. */
static int to_main[2], to_worker[2];
static struct item *handed;

static void *worker_holding(void *from_stack)
{
	REGISTER();
	rcu_read_lock();
	if (from_stack)
		SITE(handed = of_snode(cds_lfs_pop_rcu(&stack)));
	else
		SITE(handed = of_qnode(cds_lfq_dequeue_rcu(&queue)));
	printf("worker holds %s\n", handed ? "an item" : "nothing");
	say(to_main);
	hear(to_worker);
	rcu_read_unlock();
	UNREGISTER();
	return NULL;
}

static void free_while_held(int from_stack, int wait_for_readers)
{
	setup();
	if (pipe(to_main) || pipe(to_worker))
		exit(4);
	pthread_t t;
	pthread_create(&t, NULL, worker_holding, from_stack ? &stack : NULL);
	hear(to_main);
	if (wait_for_readers)
		call_rcu(&handed->rcu, free_item);
	else
		SITE(free(handed));
	say(to_worker);
	pthread_join(t, NULL);
	teardown();
}

SCENARIO bug_dequeue_then_free_while_held(void) { free_while_held(0, 0); }
SCENARIO ok_dequeue_then_call_rcu_while_held(void) { free_while_held(0, 1); }
SCENARIO bug_pop_then_free_while_held(void) { free_while_held(1, 0); }
SCENARIO ok_pop_then_call_rcu_while_held(void) { free_while_held(1, 1); }

/* Correct: drained outside any read side once the program's other threads
 * are joined, as liburcu's benchmarks end (test_end(): "no more concurrent
 * access"). The worker's dequeue frees the first dummy node, so the drain
 * hands liburcu's call_rcu() none. */
static void *worker_takes_one(void *unused)
{
	(void)unused;
	REGISTER();
	rcu_read_lock();
	struct item *qi = of_qnode(cds_lfq_dequeue_rcu(&queue));
	struct item *si = of_snode(cds_lfs_pop_rcu(&stack));
	rcu_read_unlock();
	call_rcu(&qi->rcu, free_item);
	call_rcu(&si->rcu, free_item);
	UNREGISTER();
	return NULL;
}

SCENARIO ok_drain_alone_after_join(void)
{
	setup();
	in_thread(worker_takes_one);
	companion_stop();
	unsigned long drained = 0;
	struct item *it;
	OUTSIDE_BEGIN();
	while ((it = of_qnode(cds_lfq_dequeue_rcu(&queue)))) {
		free(it);
		drained++;
	}
	while ((it = of_snode(cds_lfs_pop_rcu(&stack)))) {
		free(it);
		drained++;
	}
	OUTSIDE_END();
	printf("drained %lu\n", drained);
	teardown();
}

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "bug-enqueue-outside-reader", bug_enqueue_outside_reader },
		{ "ok-enqueue-in-reader", ok_enqueue_in_reader },
		{ "bug-dequeue-outside-reader", bug_dequeue_outside_reader },
		{ "ok-dequeue-in-reader", ok_dequeue_in_reader },
		{ "bug-pop-outside-reader", bug_pop_outside_reader },
		{ "ok-pop-in-reader", ok_pop_in_reader },
		{ "ok-push-outside-reader", ok_push_outside_reader },
		{ "ok-dequeue-under-lock", ok_dequeue_under_lock },
		{ "bug-unknown-flavor-dequeue-outside-reader", bug_unknown_flavor_dequeue_outside_reader },
		{ "ok-unknown-flavor-dequeue-in-reader", ok_unknown_flavor_dequeue_in_reader },
		{ "bug-many-dequeues-outside-reader", bug_many_dequeues_outside_reader },
		{ "ok-dequeue-then-synchronize-rcu-then-free", ok_dequeue_then_synchronize_rcu_then_free },
		{ "ok-dequeue-then-call-rcu", ok_dequeue_then_call_rcu },
		{ "bug-dequeue-then-free-while-held", bug_dequeue_then_free_while_held },
		{ "ok-dequeue-then-call-rcu-while-held", ok_dequeue_then_call_rcu_while_held },
		{ "bug-pop-then-free-while-held", bug_pop_then_free_while_held },
		{ "ok-pop-then-call-rcu-while-held", ok_pop_then_call_rcu_while_held },
		{ "ok-drain-alone-after-join", ok_drain_alone_after_join },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
