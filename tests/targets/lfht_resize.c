/* liburcu's lock-free hash table resizing itself (liburcu-cds), and a
 * program breaking its rule "cds_lfht_resize should *not* be called from a
 * RCU read-side critical section" (for QSBR: online). Built for every
 * flavor, exported and with _LGPL_SOURCE. */
#include "target.h"
#include <urcu/rculfhash.h>

#if defined(TARGET_QSBR)
#define QUIESCENT() rcu_quiescent_state()
#else
#define QUIESCENT() do { } while (0)
#endif

struct node {
	struct cds_lfht_node node;
	unsigned long key;
	struct rcu_head rcu;
};

static struct cds_lfht *table;

static void free_node(struct rcu_head *head)
{
	free(caa_container_of(head, struct node, rcu));
}

/* Adds 20,000 nodes, removes them, three times: the table grows and
 * shrinks, its resize worker holds the resize mutex across grace periods. */
static void *churn(void *arg)
{
	unsigned long base = (unsigned long)arg;
	REGISTER();
	for (int round = 0; round < 3; round++) {
		for (unsigned long i = 0; i < 20000; i++) {
			struct node *n = calloc(1, sizeof(*n));
			n->key = base + i;
			cds_lfht_node_init(&n->node);
			rcu_read_lock();
			cds_lfht_add(table, n->key * 2654435761ul, &n->node);
			rcu_read_unlock();
			if (i % 1000 == 0)
				QUIESCENT();
		}
		struct cds_lfht_iter iter;
		struct node *n;
		rcu_read_lock();
		cds_lfht_for_each_entry(table, &iter, n, node)
			if (n->key >= base && n->key < base + 20000 && !cds_lfht_del(table, &n->node))
				call_rcu(&n->rcu, free_node);
		rcu_read_unlock();
		QUIESCENT();
	}
	UNREGISTER();
	return NULL;
}

static void run_churn(void)
{
	table = cds_lfht_new(1, 1, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING, NULL);
	pthread_t a, b;
	pthread_create(&a, NULL, churn, (void *)0);
	pthread_create(&b, NULL, churn, (void *)1000000);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
}

SCENARIO ok_auto_resize(void)
{
	run_churn();
	rcu_barrier();
	printf("done\n");
}

/* The order resize mutex -> grace period is first taken by this thread
 * (a grow, then a shrink, whose old buckets wait for a grace period), so
 * that the report does not hang on when the table's own resize worker
 * last took it: the worker's orders are liburcu's and, taken alone, they
 * close no cycle of the program's. */
SCENARIO bug_resize_from_reader(void)
{
	run_churn();
	cds_lfht_resize(table, 1024);
	cds_lfht_resize(table, 1);
	REGISTER();
	rcu_read_lock();   /* QSBR: being online is the read side */
	printf("site %d\n", __LINE__ + 2);
	fflush(stdout);
	cds_lfht_resize(table, 1);
	rcu_read_unlock();
	UNREGISTER();
	printf("done\n");
}

static const struct scenario scenarios[] = {
	{ "ok-auto-resize", ok_auto_resize },
	{ "bug-resize-from-reader", bug_resize_from_reader },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	return run_scenario(argc, argv, scenarios);
}
