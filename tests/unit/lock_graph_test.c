/* The lock-order validator's graph and cycle search on their own
 * (preload/graph/lock_graph.c), under ASan/UBSan, with the classes replaced
 * by the small stand-ins below; stacks are the tracer's own unwinder's. What the graph finds is
 * kept by a sink of the test's (no report printer is linked): cycles of
 * every length, every independent cycle of one acquisition, the kernel's
 * read rules, and a graph past the chain cache's size. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "graph/lock_graph.h"

/* ---- stand-ins for the rest of the tracer ------------------------------- */

struct lock_class lock_classes[MAX_LOCK_CLASSES];
static uint32_t nr_classes = 1;
__thread uintptr_t registered_ip[NR_URCU_FLAVORS] __attribute__((tls_model("initial-exec")));
unsigned urcu_readable_flavors;
intptr_t urcu_reader_tp_offset[NR_URCU_FLAVORS];

uint32_t lock_class_for_key(uintptr_t key, enum class_key_kind kind, unsigned subclass, const char *name)
{
	for (uint32_t id = 1; id < nr_classes; id++)
		if (lock_classes[id].key == key && lock_classes[id].key_kind == kind &&
		    lock_classes[id].subclass == subclass)
			return id;
	struct lock_class *c = &lock_classes[nr_classes];
	memset(c, 0, sizeof(*c));
	c->key = key;
	c->key_kind = (uint8_t)kind;
	c->subclass = (uint8_t)subclass;
	c->name = name;
	return nr_classes++;
}

uint32_t lock_classes_count(void) { return nr_classes; }

void lock_class_name(uint32_t class_id, char *buf, size_t size)
{
	if (lock_classes[class_id].key_kind == CLASS_RCU_FLAVOR)
		snprintf(buf, size, "rcu");
	else
		snprintf(buf, size, "L%lu", (unsigned long)lock_classes[class_id].key);
}

uint32_t held_class_lookup(struct held_lock *h) { return h->class_id; }
uint32_t lock_class_first_seen(const void *lock, uintptr_t ip) { (void)lock, (void)ip; return 0; }
void lock_classes_fork_prepare(struct thread_state *self) { (void)self; }
void lock_classes_fork_parent(void) {}
void lock_classes_fork_child(struct thread_state *self) { (void)self; }
uint32_t lock_instance_generation(const void *lock) { (void)lock; return 1; }
uint64_t mutex_tag_key;   /* 0: no class tags here */
uint32_t mutex_class_lookup(const pthread_mutex_t *m, uintptr_t ip, uint32_t *generation, uint64_t key)
{
	(void)key;
	return lock_class_and_generation(m, ip, generation);
}
/* The graph's tests make no nesting annotation. */
uint32_t lock_class_nested(uint32_t class_id, unsigned subclass)
{
	(void)subclass;
	return class_id;
}
uintptr_t urcu_program_site(uintptr_t ip) { return ip; }

/* ---- what the graph found, kept as text -------------------------------------- */

static char text[1 << 16];
static size_t text_len;
static int reports;
/* The locks of the last cycle, in its record's roles: what is acquired,
 * what is held, then the chain from the one to the other. */
static char record_roles[1024];

static void keep(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void keep(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text + text_len, sizeof(text) - text_len, fmt, ap);
	va_end(ap);
	if (n > 0 && text_len + (size_t)n < sizeof(text))
		text_len += (size_t)n;
}

static const char *op(int read, int sync)
{
	return sync ? "sync" : read ? "rlock" : "lock";
}

/* "acquiring N{op} holding P{op}", then each edge "X{held op} -> Y{op}". */
static void keep_cycle(struct thread_state *ts, const struct lock_cycle *c)
{
	reports++;
	struct lock_cycle_edge edges[LOCK_CYCLE_MAX_EDGES];
	size_t n = lock_graph_cycle_path(ts, c, edges, LOCK_CYCLE_MAX_EDGES);
	char new_name[64], held_name[64], name[64], from_name[64];
	lock_class_name(c->class_id, new_name, sizeof(new_name));
	lock_class_name(c->held->class_id, held_name, sizeof(held_name));
	keep("acquiring %s{%s} holding %s{%s}\n", new_name, op(c->op == ACQUIRE_RLOCK, c->op == ACQUIRE_SYNC),
	     held_name, op(held_read_recursive(c->held), 0));
	int used = snprintf(record_roles, sizeof(record_roles), "acquiring:%s holding:%s chain:%s", new_name,
			    held_name, new_name);
	for (size_t i = 0; i < n; i++) {
		lock_class_name(edges[i].from, from_name, sizeof(from_name));
		lock_class_name(edges[i].to, name, sizeof(name));
		keep("  #%zu %s{%s} -> %s{%s}\n", i + 1, from_name, op(edges[i].held_read, 0), name,
		     op(edges[i].acquired_read, edges[i].sync));
		if (used > 0 && (size_t)used < sizeof(record_roles))
			used += snprintf(record_roles + used, sizeof(record_roles) - (size_t)used, " chain:%s", name);
	}
	keep("----\n");
}

static void keep_instance_inversion(struct thread_state *ts, const struct lock_instance_inversion *v)
{
	(void)ts;
	reports++;
	keep("instances %p -> %p\n----\n", v->held->lock, v->lock);
}

static const struct lock_graph_sink test_sink = { keep_cycle, keep_instance_inversion };

/* ---- a thread taking locks of classes ---------------------------------------- */

/* The tracer's own per-thread state (its internal locks record their
 * holder there). */
#define thread (*thread_state())

static uint32_t class_of(int name)
{
	return lock_class_for_key((uintptr_t)name, CLASS_STATIC, 0, NULL);
}

/* Takes lock `name` (a class of its own): validate, then hold. */
static void take(int name, enum acquire_op op)
{
	struct thread_state *ts = &thread;
	uint32_t id = class_of(name);
	lock_graph_acquire(ts, (void *)(uintptr_t)(0x1000 * name), id, op, (uintptr_t)name, &test_sink);
	struct held_lock *h = &ts->held[ts->depth++];
	h->lock = (void *)(uintptr_t)(0x1000 * name);
	h->acquire_ip = (uintptr_t)name;
	h->class_id = id;
	h->references = 1;
	h->kind = op == ACQUIRE_RLOCK ? HELD_RWLOCK_READ : HELD_MUTEX;
	h->attr = op == ACQUIRE_RLOCK ? HELD_ATTR_READ_RECURSIVE : 0;
	ts->nr_locks++;
}

static void release_all(void)
{
	memset(thread.held, 0, sizeof(thread.held));
	thread.depth = 0;
	thread.nr_locks = 0;
}

/* Takes the locks in order, as one nesting, then lets them all go. */
static void nest(const int *names, int n)
{
	for (int i = 0; i < n; i++)
		take(names[i], ACQUIRE_LOCK);
	release_all();
}
#define NEST(...) do { int n_[] = { __VA_ARGS__ }; nest(n_, sizeof(n_) / sizeof(n_[0])); } while (0)

/* ---- tests ------------------------------------------------------------------------- */

Test(lock_graph, abba_once)
{
	NEST(1, 2);
	cr_expect_eq(reports, 0);
	NEST(2, 1);
	cr_expect_eq(reports, 1, "%s", text);
	cr_expect(strstr(text, "acquiring L1{lock} holding L2{lock}\n  #1 L1{lock} -> L2{lock}\n----"), "%s", text);
	cr_expect_str_eq(record_roles, "acquiring:L1 holding:L2 chain:L1 chain:L2");
	NEST(2, 1);
	cr_expect_eq(reports, 1, "the same cycle is reported once");
}

Test(lock_graph, long_cycle_shows_its_chain)
{
	NEST(1, 2);
	NEST(2, 3);
	NEST(3, 4);
	NEST(4, 1);
	cr_expect_eq(reports, 1, "%s", text);
	cr_expect(strstr(text, "  #1 L1{lock} -> L2{lock}\n  #2 L2{lock} -> L3{lock}\n  #3 L3{lock} -> L4{lock}\n----"),
		  "%s", text);
	cr_expect_str_eq(record_roles, "acquiring:L1 holding:L4 chain:L1 chain:L2 chain:L3 chain:L4");
}

Test(lock_graph, consistent_orders_are_silent)
{
	NEST(1, 2, 3);
	NEST(1, 3);
	NEST(2, 3);
	NEST(1, 2, 3);
	cr_expect_eq(reports, 0, "%s", text);
}

Test(lock_graph, every_independent_cycle_of_one_acquisition)
{
	NEST(1, 2);
	NEST(1, 3);
	NEST(2, 3, 1);   /* 1 behind 2 and 3: two deadlocks */
	cr_expect_eq(reports, 2, "%s", text);
}

Test(lock_graph, a_cycle_through_another_of_the_same_acquisition_is_one_report)
{
	NEST(1, 2);
	NEST(2, 3);
	NEST(2, 3, 1);   /* 1->2->1, and 1->2->3->1 only through it */
	cr_expect_eq(reports, 1, "%s", text);
}

Test(lock_graph, recursive_reads_never_wait_for_each_other)
{
	take(1, ACQUIRE_RLOCK);
	take(2, ACQUIRE_RLOCK);
	release_all();
	take(2, ACQUIRE_RLOCK);
	take(1, ACQUIRE_RLOCK);
	release_all();
	cr_expect_eq(reports, 0, "%s", text);
	/* a write behind a read does wait */
	take(2, ACQUIRE_LOCK);
	take(1, ACQUIRE_LOCK);
	release_all();
	cr_expect_eq(reports, 1, "%s", text);
}

Test(lock_graph, grace_period_wait_under_a_lock_readers_take)
{
	uint32_t rcu = rcu_flavor_class(FLAVOR_memb);
	/* a reader takes lock 1 inside its read side */
	struct held_lock *h = &thread.held[thread.depth++];
	h->class_id = rcu;
	h->kind = HELD_RCU_READ;
	h->attr = HELD_ATTR_RCU(FLAVOR_memb, FLAVOR_memb);
	h->references = 1;
	thread.nr_readers++;
	take(1, ACQUIRE_LOCK);
	release_all();
	thread.nr_readers = 0;
	/* lock 1 held across synchronize_rcu() */
	take(1, ACQUIRE_LOCK);
	lock_graph_acquire(&thread, NULL, rcu, ACQUIRE_SYNC, 99, &test_sink);
	release_all();
	cr_expect_eq(reports, 1, "%s", text);
	cr_expect(strstr(text, "acquiring rcu{sync} holding L1{lock}\n  #1 rcu{rlock} -> L1{lock}\n"), "%s", text);
}

Test(lock_graph, still_checks_after_the_chain_cache_wraps, .timeout = 60)
{
	/* far more distinct chains than MAX_LOCKDEP_CHAINS: the cache of
	 * validated chains is emptied and refilled, never blind */
	for (int i = 0; i < 300; i++)
		for (int j = 0; j < 300; j++)
			if (i < j) {
				take(1000 + i, ACQUIRE_LOCK);
				take(1000 + j, ACQUIRE_LOCK);
				release_all();
			}
	cr_expect_eq(reports, 0);
	NEST(5000, 5001);
	NEST(5001, 5000);
	cr_expect_eq(reports, 1, "%s", text);
	/* and the old orders still close cycles */
	NEST(1299, 1000);
	cr_expect_eq(reports, 2, "%s", text);
}
