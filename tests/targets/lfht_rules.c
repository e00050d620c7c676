/* liburcu's lock-free hash table used as its documentation asks (every
 * lookup, iteration, addition and removal in a read-side critical section
 * of the table's flavor; for QSBR, online), and the mistakes its users
 * make: each call outside a read side (QSBR: offline), from a line of its
 * own that the scenario prints as "site N". Built for every flavor, and
 * with _LGPL_SOURCE (the read side inlined). */
#include "target.h"
#include <urcu/rculfhash.h>

/* Outside any read side: for QSBR, an offline thread. */
#if defined(TARGET_QSBR)
#define OUTSIDE_BEGIN() rcu_thread_offline()
#define OUTSIDE_END() rcu_thread_online()
#else
#define OUTSIDE_BEGIN() do { } while (0)
#define OUTSIDE_END() do { } while (0)
#endif
#define SITE(stmt) do { printf("site %d\n", __LINE__); fflush(stdout); stmt; } while (0)

struct entry {
	struct cds_lfht_node node;
	unsigned long key;
	struct rcu_head rcu;
};

static struct cds_lfht *table;

static int match_key(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct entry, node)->key == *(const unsigned long *)key;
}

static void free_entry(struct rcu_head *head)
{
	free(caa_container_of(head, struct entry, rcu));
}

static struct entry *new_entry(unsigned long key)
{
	struct entry *e = calloc(1, sizeof(*e));
	e->key = key;
	cds_lfht_node_init(&e->node);
	return e;
}

/* A table of three entries, filled in a read side. */
static void setup(void)
{
	REGISTER();
	table = cds_lfht_new(4, 4, 0, 0, NULL);
	rcu_read_lock();
	for (unsigned long k = 1; k <= 3; k++)
		cds_lfht_add(table, k, &new_entry(k)->node);
	rcu_read_unlock();
}

/* Empties the table in a read side, frees after a grace period. */
static void teardown(void)
{
	struct cds_lfht_iter iter;
	struct entry *e;
	rcu_read_lock();
	cds_lfht_for_each_entry(table, &iter, e, node)
		if (!cds_lfht_del(table, &e->node))
			call_rcu(&e->rcu, free_entry);
	rcu_read_unlock();
	rcu_barrier();
	if (cds_lfht_destroy(table, NULL))
		printf("destroy failed\n");
	UNREGISTER();
	printf("done\n");
}

static unsigned long lookup_in(int in_reader, unsigned long key)
{
	struct cds_lfht_iter iter;
	unsigned long found = 0;
	if (in_reader)
		rcu_read_lock();
	else
		OUTSIDE_BEGIN();
	SITE(cds_lfht_lookup(table, key, match_key, &key, &iter));
	struct cds_lfht_node *n = cds_lfht_iter_get_node(&iter);
	if (n)
		found = caa_container_of(n, struct entry, node)->key;
	if (in_reader)
		rcu_read_unlock();
	else
		OUTSIDE_END();
	return found;
}

SCENARIO bug_lookup_outside_reader(void) { setup(); printf("found %lu\n", lookup_in(0, 2)); teardown(); }

/* Correct twin: no read side, but the update side's lock held (the
 * article's rule 2; lttng-sessiond iterates its tables so). */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
SCENARIO ok_lookup_under_lock(void)
{
	setup();
	pthread_mutex_lock(&table_lock);
	printf("found %lu\n", lookup_in(0, 2));
	pthread_mutex_unlock(&table_lock);
	teardown();
}
SCENARIO ok_lookup_in_reader(void) { setup(); printf("found %lu\n", lookup_in(1, 2)); teardown(); }

static void for_each_in(int in_reader)
{
	struct cds_lfht_iter iter;
	struct entry *e;
	unsigned long sum = 0;
	if (in_reader)
		rcu_read_lock();
	else
		OUTSIDE_BEGIN();
	SITE(cds_lfht_for_each_entry(table, &iter, e, node) sum += e->key);
	if (in_reader)
		rcu_read_unlock();
	else
		OUTSIDE_END();
	printf("sum %lu\n", sum);
}

SCENARIO bug_for_each_outside_reader(void) { setup(); for_each_in(0); teardown(); }
SCENARIO ok_for_each_in_reader(void) { setup(); for_each_in(1); teardown(); }

static void add_and_del_in(int in_reader)
{
	struct entry *e = new_entry(4);
	if (in_reader)
		rcu_read_lock();
	else
		OUTSIDE_BEGIN();
	SITE(cds_lfht_add(table, 4, &e->node));
	SITE(cds_lfht_del(table, &e->node));
	if (in_reader)
		rcu_read_unlock();
	else
		OUTSIDE_END();
	call_rcu(&e->rcu, free_entry);
}

SCENARIO bug_add_del_outside_reader(void) { setup(); add_and_del_in(0); teardown(); }
SCENARIO ok_add_del_in_reader(void) { setup(); add_and_del_in(1); teardown(); }

/* A reader holds an entry it looked up; the updater removes it and frees it
 * at once (the bug: no grace period), or hands it to call_rcu() (the twin).
 * Pipes order them: the reader looks up and tells; the updater removes,
 * frees or defers, and tells; only then does the reader leave, without
 * touching the entry again. */
#include <unistd.h>
static int to_updater[2], to_reader[2];

static void *reader_holding(void *arg)
{
	(void)arg;
	unsigned long key = 2;
	struct cds_lfht_iter iter;
	REGISTER();
	rcu_read_lock();
	SITE(cds_lfht_lookup(table, key, match_key, &key, &iter));
	printf("reader holds %d\n", cds_lfht_iter_get_node(&iter) != NULL);
	say(to_updater);
	hear(to_reader);
	rcu_read_unlock();
	UNREGISTER();
	return NULL;
}

static void remove_while_held(int wait_for_readers)
{
	setup();
	if (pipe(to_updater) || pipe(to_reader))
		exit(4);
	pthread_t t;
	pthread_create(&t, NULL, reader_holding, NULL);
	hear(to_updater);
	unsigned long key = 2;
	struct cds_lfht_iter iter;
	rcu_read_lock();
	cds_lfht_lookup(table, key, match_key, &key, &iter);
	struct entry *e = caa_container_of(cds_lfht_iter_get_node(&iter), struct entry, node);
	int removed = !cds_lfht_del(table, &e->node);
	rcu_read_unlock();
#if defined(TARGET_QSBR)
	rcu_quiescent_state();   /* this thread holds nothing from here */
#endif
	if (removed && wait_for_readers)
		call_rcu(&e->rcu, free_entry);
	else if (removed)
		SITE(free(e));
	say(to_reader);
	pthread_join(t, NULL);
	teardown();
}

SCENARIO bug_del_then_free_while_held(void) { remove_while_held(0); }
SCENARIO ok_del_then_call_rcu(void) { remove_while_held(1); }

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "bug-lookup-outside-reader", bug_lookup_outside_reader },
		{ "ok-lookup-in-reader", ok_lookup_in_reader },
		{ "ok-lookup-under-lock", ok_lookup_under_lock },
		{ "bug-for-each-outside-reader", bug_for_each_outside_reader },
		{ "ok-for-each-in-reader", ok_for_each_in_reader },
		{ "bug-add-del-outside-reader", bug_add_del_outside_reader },
		{ "ok-add-del-in-reader", ok_add_del_in_reader },
		{ "bug-del-then-free-while-held", bug_del_then_free_while_held },
		{ "ok-del-then-call-rcu", ok_del_then_call_rcu },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
