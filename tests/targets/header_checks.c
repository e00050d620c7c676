/* The checking API of include/lockdep-rcu.h, site by site. Each scenario
 * prints "site <line>" for the check it makes, so the test can match the
 * file:line of the report without hard-coding line numbers. */
#include "target.h"
#include <urcu/rculist.h>
#include <urcu/rcuhlist.h>
#include <urcu/rculfhash.h>
#include <lockdep-rcu.h>

struct fdtable {
	int max_fds;
};

struct files_struct {
	int count;
	pthread_mutex_t file_lock;
	struct fdtable *fdt;
};

static struct fdtable the_table = { 64 };
static struct files_struct files = { 1, PTHREAD_MUTEX_INITIALIZER, &the_table };
static struct fdtable *gp = &the_table;
static pthread_mutex_t mylock = PTHREAD_MUTEX_INITIALIZER;
static DEFINE_SRCU(domain_a);
static DEFINE_SRCU(domain_b);

/* The article's files_fdtable(). */
#define files_fdtable(files)                                                   \
	(rcu_dereference_check((files)->fdt,                                   \
			       rcu_read_lock_held() ||                         \
			       lockdep_is_held(&(files)->file_lock) ||         \
			       (files)->count == 1))

#define SITE(stmt) do { printf("site %d\n", __LINE__); stmt; } while (0)

static volatile int sink;

/* count == 1: inaccessible to readers, outside any lock or reader: legal. */
SCENARIO fdtable_single_owner(void)
{
	files.count = 1;
	SITE(sink = files_fdtable(&files)->max_fds);
}

SCENARIO fdtable_shared_unprotected(void)
{
	files.count = 2;
	SITE(sink = files_fdtable(&files)->max_fds);
}

SCENARIO fdtable_shared_under_lock(void)
{
	files.count = 2;
	pthread_mutex_lock(&files.file_lock);
	SITE(sink = files_fdtable(&files)->max_fds);
	pthread_mutex_unlock(&files.file_lock);
}

SCENARIO fdtable_shared_in_reader(void)
{
	files.count = 2;
	rcu_read_lock();
	SITE(sink = files_fdtable(&files)->max_fds);
	rcu_read_unlock();
}

SCENARIO deref_outside_reader(void)
{
	SITE(sink = rcu_dereference(gp)->max_fds);
}

SCENARIO deref_in_reader(void)
{
	rcu_read_lock();
	SITE(sink = rcu_dereference(gp)->max_fds);
	rcu_read_unlock();
}

/* rcu_dereference() checks only vanilla RCU: an RCU-bh reader is not one. */
SCENARIO deref_in_bh_reader(void)
{
	rcu_read_lock_bh();
	SITE(sink = rcu_dereference(gp)->max_fds);
	rcu_read_unlock_bh();
}

SCENARIO deref_bh_in_bh_reader(void)
{
	rcu_read_lock_bh();
	SITE(sink = rcu_dereference_bh(gp)->max_fds);
	rcu_read_unlock_bh();
}

SCENARIO deref_bh_in_vanilla_reader(void)
{
	rcu_read_lock();
	SITE(sink = rcu_dereference_bh(gp)->max_fds);
	rcu_read_unlock();
}

SCENARIO deref_sched_in_sched_reader(void)
{
	rcu_read_lock_sched();
	SITE(sink = rcu_dereference_sched(gp)->max_fds);
	rcu_read_unlock_sched();
}

SCENARIO deref_sched_outside(void)
{
	SITE(sink = rcu_dereference_sched(gp)->max_fds);
}

SCENARIO srcu_same_domain(void)
{
	int idx = srcu_read_lock(&domain_a);
	SITE(sink = srcu_dereference(gp, &domain_a)->max_fds);
	srcu_read_unlock(&domain_a, idx);
}

SCENARIO srcu_other_domain(void)
{
	int idx = srcu_read_lock(&domain_b);
	SITE(sink = srcu_dereference(gp, &domain_a)->max_fds);
	srcu_read_unlock(&domain_b, idx);
}

/* Quick Quiz 2: RCU-bh, SRCU domain a, or mylock. */
#define quiz2_deref() rcu_dereference_check(gp, rcu_read_lock_bh_held() ||            \
						 srcu_read_lock_held(&domain_a) ||        \
						 lockdep_is_held(&mylock))

SCENARIO quiz2_each_protection(void)
{
	rcu_read_lock_bh();
	SITE(sink = quiz2_deref()->max_fds);
	rcu_read_unlock_bh();
	int idx = srcu_read_lock(&domain_a);
	SITE(sink = quiz2_deref()->max_fds);
	srcu_read_unlock(&domain_a, idx);
	pthread_mutex_lock(&mylock);
	SITE(sink = quiz2_deref()->max_fds);
	pthread_mutex_unlock(&mylock);
}

SCENARIO quiz2_unprotected(void)
{
	rcu_read_lock();   /* vanilla RCU is not among the three */
	SITE(sink = quiz2_deref()->max_fds);
	rcu_read_unlock();
}

SCENARIO raw_outside(void)
{
	SITE(sink = rcu_dereference_raw(gp)->max_fds);
}

SCENARIO protected_under_lock(void)
{
	pthread_mutex_lock(&mylock);
	SITE(sink = rcu_dereference_protected(gp, lockdep_is_held(&mylock))->max_fds);
	pthread_mutex_unlock(&mylock);
}

SCENARIO protected_without_lock(void)
{
	SITE(sink = rcu_dereference_protected(gp, lockdep_is_held(&mylock))->max_fds);
}

SCENARIO assert_held_ok(void)
{
	pthread_mutex_lock(&mylock);
	SITE(lockdep_assert_held(&mylock));
	pthread_mutex_unlock(&mylock);
	SITE(lockdep_assert_not_held(&mylock));
}

SCENARIO assert_held_bug(void)
{
	SITE(lockdep_assert_held(&mylock));
}

SCENARIO lockdep_warn(void)
{
	SITE(RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "config read outside of RCU"));
	rcu_read_lock();
	SITE(RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "must not fire"));
	rcu_read_unlock();
}

/* What each query answers, outside everything: with the tracer all 0 (QSBR:
 * an online thread is a vanilla reader), without it all 1. */
SCENARIO held_values(void)
{
	printf("held %d %d %d %d %d\n", rcu_read_lock_held(), rcu_read_lock_bh_held(),
	       rcu_read_lock_sched_held(), srcu_read_lock_held(&domain_a), lockdep_is_held(&mylock));
}

/* Without the tracer the condition is never evaluated. */
static int evaluations;
static int counted_condition(void)
{
	evaluations++;
	return 1;
}

SCENARIO condition_evaluation(void)
{
	sink = rcu_dereference_check(gp, counted_condition())->max_fds;
	printf("evaluations %d\n", evaluations);
}

/* synchronize_srcu() inside a reader of its own domain never returns. */
SCENARIO synchronize_srcu_in_reader(void)
{
	int idx = srcu_read_lock(&domain_a);
	SITE(synchronize_srcu(&domain_a));
	srcu_read_unlock(&domain_a, idx);
}

SCENARIO synchronize_srcu_outside(void)
{
	init_srcu_struct(&domain_b);
	SITE(synchronize_srcu(&domain_b));
	cleanup_srcu_struct(&domain_b);
}

/* synchronize_srcu() under a lock that SRCU readers of the domain take. */
static void *srcu_reader_takes_mylock(void *arg)
{
	(void)arg;
	rcu_register_thread();
	int idx = srcu_read_lock(&domain_a);
	pthread_mutex_lock(&mylock);
	pthread_mutex_unlock(&mylock);
	srcu_read_unlock(&domain_a, idx);
	rcu_unregister_thread();
	return NULL;
}

SCENARIO srcu_grace_period_deadlock(void)
{
	in_thread(srcu_reader_takes_mylock);
	pthread_mutex_lock(&mylock);
	SITE(synchronize_srcu(&domain_a));
	pthread_mutex_unlock(&mylock);
}

SCENARIO srcu_grace_period_ok(void)
{
	in_thread(srcu_reader_takes_mylock);
	pthread_mutex_lock(&mylock);
	pthread_mutex_unlock(&mylock);
	SITE(synchronize_srcu(&domain_a));
}

/* synchronize_sched() waits for every reader built on the program's
 * flavor, an RCU-bh one included: inside it, it never returns. */
SCENARIO synchronize_sched_in_bh_reader(void)
{
	rcu_read_lock_bh();
	SITE(synchronize_sched());
	rcu_read_unlock_bh();
}

SCENARIO synchronize_sched_outside(void)
{
	rcu_read_lock_bh();
	rcu_read_unlock_bh();
	SITE(synchronize_sched());
	SITE(synchronize_rcu_bh());
}

/* rcu_read_unlock_bh() with no RCU-bh reader. */
SCENARIO unbalanced_bh_unlock(void)
{
	rcu_read_lock();
	SITE(rcu_read_unlock_bh());
}

/* ---- checked list traversal --------------------------------------------- */

struct route {
	int metric;
	struct cds_list_head node;
};
static CDS_LIST_HEAD(routes);
static pthread_mutex_t routes_lock = PTHREAD_MUTEX_INITIALIZER;
static struct route route_a = { 1, { NULL, NULL } }, route_b = { 2, { NULL, NULL } };

static void routes_fill(void)
{
	cds_list_add_tail_rcu(&route_a.node, &routes);
	cds_list_add_tail_rcu(&route_b.node, &routes);
}

/* The bug: a traversal with no read side and no condition. Its two
 * entries are two loads of the macro, yet one report, at the loop. */
SCENARIO list_outside_reader(void)
{
	struct route *r;
	int sum = 0;
	routes_fill();
	SITE(cds_list_for_each_entry_rcu(r, &routes, node) sum += r->metric);
	printf("sum %d\n", sum);
}

SCENARIO list_in_reader(void)
{
	struct route *r;
	int sum = 0;
	routes_fill();
	rcu_read_lock();
	SITE(cds_list_for_each_entry_rcu(r, &routes, node) sum += r->metric);
	rcu_read_unlock();
	printf("sum %d\n", sum);
}

/* The update side, saying so: legal. */
SCENARIO list_under_lock_with_condition(void)
{
	struct route *r;
	int sum = 0;
	routes_fill();
	pthread_mutex_lock(&routes_lock);
	SITE(cds_list_for_each_entry_rcu(r, &routes, node, lockdep_is_held(&routes_lock)) sum += r->metric);
	pthread_mutex_unlock(&routes_lock);
	printf("sum %d\n", sum);
}

/* The lock held but not named: the checked traversal does not guess. */
SCENARIO list_under_lock_without_condition(void)
{
	struct route *r;
	int sum = 0;
	routes_fill();
	pthread_mutex_lock(&routes_lock);
	SITE(cds_list_for_each_entry_rcu(r, &routes, node) sum += r->metric);
	pthread_mutex_unlock(&routes_lock);
	printf("sum %d\n", sum);
}

/* The hlist and hash-table traversals, checked the same way. */
struct peer {
	unsigned long key;
	struct cds_hlist_node hnode;
	struct cds_lfht_node node;
};
static struct peer peer_a = { .key = 1 }, peer_b = { .key = 2 };
static struct cds_hlist_head peers_list;
static struct cds_lfht *peers_table;
/* The table is the thread's own until it publishes it (a start-up phase):
 * traversing it then needs no read side, and the condition says so. */
static int peers_private = 1;

static void peers_fill(void)
{
	cds_hlist_add_head_rcu(&peer_a.hnode, &peers_list);
	cds_hlist_add_head_rcu(&peer_b.hnode, &peers_list);
	peers_table = cds_lfht_new(1, 1, 0, 0, NULL);
	rcu_read_lock();
	cds_lfht_add(peers_table, peer_a.key, &peer_a.node);
	cds_lfht_add(peers_table, peer_b.key, &peer_b.node);
	rcu_read_unlock();
}

static int peer_match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct peer, node)->key == *(const unsigned long *)key;
}

SCENARIO hlist_outside_reader(void)
{
	struct peer *p;
	unsigned long sum = 0;
	peers_fill();
	SITE(cds_hlist_for_each_entry_rcu_2(p, &peers_list, hnode) sum += p->key);
	printf("sum %lu\n", sum);
}

/* liburcu's four-argument form, with its cursor. */
SCENARIO hlist4_outside_reader(void)
{
	struct peer *p;
	struct cds_hlist_node *pos;
	unsigned long sum = 0;
	peers_fill();
	SITE(cds_hlist_for_each_entry_rcu(p, pos, &peers_list, hnode) sum += p->key);
	printf("sum %lu\n", sum);
}

SCENARIO hlist_in_reader(void)
{
	struct peer *p;
	unsigned long sum = 0;
	peers_fill();
	rcu_read_lock();
	SITE(cds_hlist_for_each_entry_rcu_2(p, &peers_list, hnode) sum += p->key);
	rcu_read_unlock();
	printf("sum %lu\n", sum);
}

SCENARIO hlist_under_lock_with_condition(void)
{
	struct peer *p;
	unsigned long sum = 0;
	peers_fill();
	pthread_mutex_lock(&routes_lock);
	SITE(cds_hlist_for_each_entry_rcu_2(p, &peers_list, hnode, lockdep_is_held(&routes_lock)) sum += p->key);
	pthread_mutex_unlock(&routes_lock);
	printf("sum %lu\n", sum);
}

SCENARIO list_cursor_outside_reader(void)
{
	struct cds_list_head *pos;
	int n = 0;
	routes_fill();
	SITE(cds_list_for_each_rcu(pos, &routes) n++);
	printf("entries %d\n", n);
}

SCENARIO lfht_outside_reader(void)
{
	struct cds_lfht_iter iter;
	struct peer *p;
	unsigned long sum = 0;
	peers_fill();
	SITE(cds_lfht_for_each_entry(peers_table, &iter, p, node) sum += p->key);
	printf("sum %lu\n", sum);
}

SCENARIO lfht_in_reader(void)
{
	struct cds_lfht_iter iter;
	struct peer *p;
	unsigned long sum = 0;
	peers_fill();
	rcu_read_lock();
	SITE(cds_lfht_for_each_entry(peers_table, &iter, p, node) sum += p->key);
	rcu_read_unlock();
	printf("sum %lu\n", sum);
}

SCENARIO lfht_with_condition(void)
{
	struct cds_lfht_iter iter;
	struct peer *p;
	unsigned long sum = 0;
	peers_fill();
	SITE(cds_lfht_for_each_entry(peers_table, &iter, p, node, peers_private) sum += p->key);
	printf("sum %lu\n", sum);
}

/* The condition given, and false: the table is shared by now. */
SCENARIO lfht_with_false_condition(void)
{
	struct cds_lfht_iter iter;
	struct peer *p;
	unsigned long sum = 0;
	peers_fill();
	peers_private = 0;
	SITE(cds_lfht_for_each_entry(peers_table, &iter, p, node, peers_private) sum += p->key);
	printf("sum %lu\n", sum);
}

SCENARIO lfht_duplicates_outside_reader(void)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;
	unsigned long key = 2, n = 0;
	peers_fill();
	SITE(cds_lfht_for_each_duplicate(peers_table, key, peer_match, &key, &iter, node) n++);
	printf("found %lu\n", n);
}

SCENARIO lfht_duplicates_with_condition(void)
{
	struct cds_lfht_iter iter;
	struct peer *p;
	unsigned long key = 2, sum = 0;
	peers_fill();
	SITE(cds_lfht_for_each_entry_duplicate(peers_table, key, peer_match, &key, &iter, p, node, peers_private)
		     sum += p->key);
	printf("sum %lu\n", sum);
}

/* QSBR: an offline thread is no reader (the other flavors: no read side,
 * as in the scenarios above). */
#ifdef TARGET_QSBR
#define GO_OFFLINE() rcu_thread_offline()
#define GO_ONLINE() rcu_thread_online()
#else
#define GO_OFFLINE() do { } while (0)
#define GO_ONLINE() do { } while (0)
#endif

SCENARIO hlist_offline(void)
{
	struct peer *p;
	unsigned long sum = 0;
	peers_fill();
	GO_OFFLINE();
	SITE(cds_hlist_for_each_entry_rcu_2(p, &peers_list, hnode) sum += p->key);
	GO_ONLINE();
	printf("sum %lu\n", sum);
}

SCENARIO lfht_offline(void)
{
	struct cds_lfht_iter iter;
	struct peer *p;
	unsigned long sum = 0;
	peers_fill();
	GO_OFFLINE();
	SITE(cds_lfht_for_each_entry(peers_table, &iter, p, node) sum += p->key);
	GO_ONLINE();
	printf("sum %lu\n", sum);
}

int main(int argc, char **argv)
{
	rcu_register_thread();
	static const struct scenario scenarios[] = {
		{ "list-outside-reader", list_outside_reader },
		{ "list-in-reader", list_in_reader },
		{ "list-under-lock-with-condition", list_under_lock_with_condition },
		{ "list-under-lock-without-condition", list_under_lock_without_condition },
		{ "list-cursor-outside-reader", list_cursor_outside_reader },
		{ "hlist-outside-reader", hlist_outside_reader },
		{ "hlist4-outside-reader", hlist4_outside_reader },
		{ "hlist-in-reader", hlist_in_reader },
		{ "hlist-under-lock-with-condition", hlist_under_lock_with_condition },
		{ "lfht-outside-reader", lfht_outside_reader },
		{ "lfht-in-reader", lfht_in_reader },
		{ "lfht-with-condition", lfht_with_condition },
		{ "lfht-with-false-condition", lfht_with_false_condition },
		{ "lfht-duplicates-outside-reader", lfht_duplicates_outside_reader },
		{ "lfht-duplicates-with-condition", lfht_duplicates_with_condition },
		{ "hlist-offline", hlist_offline },
		{ "lfht-offline", lfht_offline },
		{ "fdtable-single-owner", fdtable_single_owner },
		{ "fdtable-shared-unprotected", fdtable_shared_unprotected },
		{ "fdtable-shared-under-lock", fdtable_shared_under_lock },
		{ "fdtable-shared-in-reader", fdtable_shared_in_reader },
		{ "deref-outside-reader", deref_outside_reader },
		{ "deref-in-reader", deref_in_reader },
		{ "deref-in-bh-reader", deref_in_bh_reader },
		{ "deref-bh-in-bh-reader", deref_bh_in_bh_reader },
		{ "deref-bh-in-vanilla-reader", deref_bh_in_vanilla_reader },
		{ "deref-sched-in-sched-reader", deref_sched_in_sched_reader },
		{ "deref-sched-outside", deref_sched_outside },
		{ "srcu-same-domain", srcu_same_domain },
		{ "srcu-other-domain", srcu_other_domain },
		{ "quiz2-each-protection", quiz2_each_protection },
		{ "quiz2-unprotected", quiz2_unprotected },
		{ "raw-outside", raw_outside },
		{ "protected-under-lock", protected_under_lock },
		{ "protected-without-lock", protected_without_lock },
		{ "assert-held-ok", assert_held_ok },
		{ "assert-held-bug", assert_held_bug },
		{ "lockdep-warn", lockdep_warn },
		{ "held-values", held_values },
		{ "condition-evaluation", condition_evaluation },
		{ "synchronize-srcu-in-reader", synchronize_srcu_in_reader },
		{ "synchronize-srcu-outside", synchronize_srcu_outside },
		{ "unbalanced-bh-unlock", unbalanced_bh_unlock },
		{ "srcu-grace-period-deadlock", srcu_grace_period_deadlock },
		{ "srcu-grace-period-ok", srcu_grace_period_ok },
		{ "synchronize-sched-in-bh-reader", synchronize_sched_in_bh_reader },
		{ "synchronize-sched-outside", synchronize_sched_outside },
		{ NULL, NULL },
	};
	int ret = run_scenario(argc, argv, scenarios);
	rcu_unregister_thread();
	return ret;
}
