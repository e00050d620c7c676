/* How locks are grouped in classes, on the patterns of real programs:
 * generic lock constructors (unbound's lruhash_create(), APR's
 * apr_thread_mutex_create()), inlined constructors, locks never
 * initialized by a call, memory reused after a free without destroy,
 * and many locks over a process's life. Each buggy scenario beside its
 * correct twin. */
#include "target.h"
#include <dlfcn.h>
#include <stdint.h>

#define L(m) pthread_mutex_lock(m)
#define U(m) pthread_mutex_unlock(m)

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- a generic constructor ------------------------------------------------
 * table_create() makes a hash table with its table lock; two caches use it.
 * A message-cache entry lock is taken before the rrset table's lock, and
 * the message table's lock before a message entry's: no cycle, since the
 * two table locks are different tables. */

struct table {
	pthread_mutex_t lock;
	int items;
};

__attribute__((noinline)) static struct table *table_create(void)
{
	struct table *t = calloc(1, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	return t;
}

struct entry {
	pthread_mutex_t lock;
};

__attribute__((noinline)) static struct entry *entry_create(void)
{
	struct entry *e = calloc(1, sizeof(*e));
	pthread_mutex_init(&e->lock, NULL);
	return e;
}

__attribute__((noinline)) static struct table *rrset_cache_create(void) { return table_create(); }
__attribute__((noinline)) static struct table *msg_cache_create(void) { return table_create(); }

SCENARIO ok_generic_constructor(void)
{
	struct table *rrsets = rrset_cache_create();
	struct table *msgs = msg_cache_create();
	struct entry *msg = entry_create();
	/* a message entry, then the rrset table (to touch its rrsets) */
	L(&msg->lock); L(&rrsets->lock); U(&rrsets->lock); U(&msg->lock);
	/* the message table, then one of its entries (to clear it) */
	L(&msgs->lock); L(&msg->lock); U(&msg->lock); U(&msgs->lock);
	printf("done\n");
}

/* The same tables, but the real inversion: entry then the message table,
 * message table then entry. */
SCENARIO bug_generic_constructor_real_inversion(void)
{
	struct table *msgs = msg_cache_create();
	struct entry *msg = entry_create();
	L(&msg->lock); L(&msgs->lock); U(&msgs->lock); U(&msg->lock);
	L(&msgs->lock); L(&msg->lock); U(&msg->lock); U(&msgs->lock);
	printf("done\n");
}

/* ---- a generic constructor one layer deeper than class_depth sees ----------
 * bin_init() <- lru_create() <- slab_create() <- cache_layer() <- the cache:
 * with the default depth (3) the bins of both caches are one class, and
 * the correct pattern above looks like a cycle; a class rule
 * "split:bin_init:4" tells them apart without recompiling. */

struct bins {
	pthread_mutex_t lock;
};

__attribute__((noinline)) static void bin_init(struct bins *b) { pthread_mutex_init(&b->lock, NULL); }
__attribute__((noinline)) static struct bins *lru_create(void)
{
	struct bins *b = calloc(1, sizeof(*b));
	bin_init(b);
	return b;
}
__attribute__((noinline)) static struct bins *slab_create(void) { return lru_create(); }
__attribute__((noinline)) static struct bins *cache_layer(void) { return slab_create(); }
__attribute__((noinline)) static struct bins *rrset_bins_create(void) { return cache_layer(); }
__attribute__((noinline)) static struct bins *msg_bins_create(void) { return cache_layer(); }

SCENARIO deep_generic_constructor(void)
{
	struct bins *rrsets = rrset_bins_create();
	struct bins *msgs = msg_bins_create();
	struct entry *msg = entry_create();
	L(&msg->lock); L(&rrsets->lock); U(&rrsets->lock); U(&msg->lock);
	L(&msgs->lock); L(&msg->lock); U(&msg->lock); U(&msgs->lock);
	printf("done\n");
}

/* ---- one constructor, two callers: split by default, one class with
 * "merge:conn_make" ------------------------------------------------------------ */

struct peer {
	pthread_mutex_t lock;
};

__attribute__((noinline)) static struct peer *conn_make(void)
{
	struct peer *p = calloc(1, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	return p;
}
__attribute__((noinline)) static struct peer *accept_tcp(void) { return conn_make(); }
__attribute__((noinline)) static struct peer *accept_udp(void) { return conn_make(); }

SCENARIO merged_constructor(void)
{
	struct peer *tcp = accept_tcp();
	struct peer *udp = accept_udp();
	L(&tcp->lock); L(&stats_lock); U(&stats_lock); U(&tcp->lock);
	L(&stats_lock); L(&udp->lock); U(&udp->lock); U(&stats_lock);
	printf("done\n");
}

/* ---- an inlined constructor ---------------------------------------------------
 * conn_new() inlined at two call sites of one function gives two return
 * addresses for one source line: one class, so conn -> stats here and
 * stats -> conn there (two connections) is the class-level inversion. */

struct conn {
	pthread_mutex_t lock;
};

__attribute__((always_inline)) static inline struct conn *conn_new(void)
{
	struct conn *c = calloc(1, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

SCENARIO bug_inlined_constructor(void)
{
	struct conn *in = conn_new();
	struct conn *out = conn_new();
	L(&in->lock); L(&stats_lock); U(&stats_lock); U(&in->lock);
	L(&stats_lock); L(&out->lock); U(&out->lock); U(&stats_lock);
	printf("done\n");
}

/* ---- locks never initialized by a call ------------------------------------------ */

struct account {
	int balance;
	pthread_mutex_t lock;   /* zeroed by calloc: a valid mutex in glibc */
};

struct ledger {
	pthread_mutex_t lock;
};

__attribute__((noinline)) static void transfer(struct account *a, struct ledger *l)
{
	L(&a->lock); L(&l->lock); U(&l->lock); U(&a->lock);
}

__attribute__((noinline)) static void audit(struct ledger *l, struct account *a)
{
	L(&l->lock); L(&a->lock); U(&a->lock); U(&l->lock);
}

SCENARIO bug_uninitialized_heap_locks(void)
{
	struct account *a = calloc(1, sizeof(*a));
	struct ledger *l = calloc(1, sizeof(*l));
	transfer(a, l);
	audit(l, a);
	printf("done\n");
}

SCENARIO ok_uninitialized_heap_locks(void)
{
	struct account *a = calloc(1, sizeof(*a));
	struct ledger *l = calloc(1, sizeof(*l));
	transfer(a, l);
	transfer(a, l);
	printf("done\n");
}

/* ---- memory reused after a free without destroy ------------------------------------
 * A session's lock (initialized by a call) is taken before stats_lock; the
 * session is freed without pthread_mutex_destroy(). A job allocated at the
 * same address has a lock never initialized by a call, taken after
 * stats_lock: it is a new lock, not the session's. */

struct session {
	pthread_mutex_t lock;
	char pad[24];
};

struct job {
	pthread_mutex_t lock;
	char pad[24];
};

SCENARIO ok_memory_reused_after_free(void)
{
	int reused = 0;
	for (int i = 0; i < 20; i++) {
		struct session *s = malloc(sizeof(*s));
		pthread_mutex_init(&s->lock, NULL);
		L(&s->lock); L(&stats_lock); U(&stats_lock); U(&s->lock);
		void *was = s;
		free(s);
		struct job *j = malloc(sizeof(*j));   /* the block just freed */
		memset(j, 0, sizeof(*j));             /* a valid mutex, no init call */
		reused += (void *)j == was;
		L(&stats_lock); L(&j->lock); U(&j->lock); U(&stats_lock);
		free(j);
	}
	printf("reused %s\n", reused ? "yes" : "no");
}

/* The same with realloc() moving the block. */
SCENARIO ok_memory_reused_after_realloc(void)
{
	for (int i = 0; i < 20; i++) {
		struct session *s = malloc(sizeof(*s));
		pthread_mutex_init(&s->lock, NULL);
		L(&s->lock); L(&stats_lock); U(&stats_lock); U(&s->lock);
		char *grown = realloc(s, 1 << 20);   /* moves: the old block is freed */
		struct job *j = malloc(sizeof(*j));
		memset(j, 0, sizeof(*j));
		L(&stats_lock); L(&j->lock); U(&j->lock); U(&stats_lock);
		free(j);
		free(grown);
	}
	printf("done\n");
}

/* ---- a library's static locks after dlclose() -------------------------------------- */

SCENARIO ok_library_reloaded_at_same_address(void)
{
	const char *dir = getenv("PLUGIN_DIR");
	char a[4096], b[4096];
	snprintf(a, sizeof(a), "%s/liblock_plugin_a.so", dir);
	snprintf(b, sizeof(b), "%s/liblock_plugin_b.so", dir);
	void *ha = dlopen(a, RTLD_NOW);
	void (*lock_then_stats)(pthread_mutex_t *) = (void (*)(pthread_mutex_t *))dlsym(ha, "plugin_run");
	void *where_a = dlsym(ha, "plugin_lock");
	lock_then_stats(&stats_lock);
	dlclose(ha);
	void *hb = dlopen(b, RTLD_NOW);
	void (*stats_then_lock)(pthread_mutex_t *) = (void (*)(pthread_mutex_t *))dlsym(hb, "plugin_run");
	void *where_b = dlsym(hb, "plugin_lock");
	stats_then_lock(&stats_lock);
	printf("same address %s\n", where_a == where_b ? "yes" : "no");
	dlclose(hb);
}

/* ---- many locks over a process's life --------------------------------------------- */

struct item {
	pthread_mutex_t lock;
};

__attribute__((noinline)) static struct item *item_new(void)
{
	struct item *it = malloc(sizeof(*it));
	pthread_mutex_init(&it->lock, NULL);
	return it;
}

static pthread_mutex_t order_a = PTHREAD_MUTEX_INITIALIZER, order_b = PTHREAD_MUTEX_INITIALIZER;

/* 300,000 locks made, 250,000 still alive, each taken under stats_lock;
 * then a real ABBA between two new locks is still found. */
SCENARIO bug_abba_after_300000_locks(void)
{
	enum { MADE = 300000, ALIVE = 250000 };
	struct item **items = malloc(MADE * sizeof(*items));
	for (int i = 0; i < MADE; i++) {
		items[i] = item_new();
		L(&stats_lock); L(&items[i]->lock); U(&items[i]->lock); U(&stats_lock);
	}
	for (int i = 0; i < MADE - ALIVE; i++) {
		pthread_mutex_destroy(&items[i]->lock);
		free(items[i]);
	}
	L(&order_a); L(&order_b); U(&order_b); U(&order_a);
	L(&order_b); L(&order_a); U(&order_a); U(&order_b);
	printf("done\n");
}

/* Accounts: one class, locked two at a time. 1,000 accounts give 499,500
 * pairs, all taken in address order (more than the tracer's instance-pair
 * cache holds); then two accounts are transferred between in both orders
 * (the bug) or in address order again (the twin). */
struct bank_account {
	pthread_mutex_t lock;
	long balance;
};

__attribute__((noinline)) static struct bank_account *bank_account_new(void)
{
	struct bank_account *a = malloc(sizeof(*a));
	pthread_mutex_init(&a->lock, NULL);
	a->balance = 100;
	return a;
}

static void move_money(struct bank_account *from, struct bank_account *to)
{
	L(&from->lock); L(&to->lock);
	from->balance--;
	to->balance++;
	U(&to->lock); U(&from->lock);
}

static void account_pairs_then(int invert)
{
	enum { ACCOUNTS = 1000 };
	struct bank_account **a = malloc(ACCOUNTS * sizeof(*a));
	for (int i = 0; i < ACCOUNTS; i++)
		a[i] = bank_account_new();
	for (int i = 0; i < ACCOUNTS; i++)
		for (int j = i + 1; j < ACCOUNTS; j++) {
			struct bank_account *x = a[i], *y = a[j];
			if (y < x)
				move_money(y, x);
			else
				move_money(x, y);
		}
	struct bank_account *p = bank_account_new(), *q = bank_account_new();
	if (q < p) {
		struct bank_account *t = p;
		p = q;
		q = t;
	}
	move_money(p, q);
	if (invert)
		move_money(q, p);
	else
		move_money(p, q);
	printf("done\n");
}

/* A static struct whose fields are locks, each initialized by a call of
 * its own (three classes in one variable), two of them taken in both
 * orders: the report must tell the fields apart ("server+0x28" against
 * "server+0x50", not "server" twice). */
static struct {
	pthread_mutex_t conn_lock, stats_lock, log_lock;
} server;

SCENARIO bug_static_struct_fields_inverted(void)
{
	pthread_mutex_init(&server.conn_lock, NULL);
	pthread_mutex_init(&server.stats_lock, NULL);
	pthread_mutex_init(&server.log_lock, NULL);
	pthread_mutex_lock(&server.stats_lock);
	pthread_mutex_lock(&server.log_lock);
	pthread_mutex_unlock(&server.log_lock);
	pthread_mutex_unlock(&server.stats_lock);
	pthread_mutex_lock(&server.log_lock);
	pthread_mutex_lock(&server.stats_lock);
	pthread_mutex_unlock(&server.stats_lock);
	pthread_mutex_unlock(&server.log_lock);
	printf("done\n");
}

SCENARIO bug_account_inversion_after_500000_pairs(void) { account_pairs_then(1); }
SCENARIO ok_account_order_after_500000_pairs(void) { account_pairs_then(0); }

static const struct scenario scenarios[] = {
	{ "ok-generic-constructor", ok_generic_constructor },
	{ "bug-generic-constructor-real-inversion", bug_generic_constructor_real_inversion },
	{ "bug-inlined-constructor", bug_inlined_constructor },
	{ "deep-generic-constructor", deep_generic_constructor },
	{ "merged-constructor", merged_constructor },
	{ "bug-uninitialized-heap-locks", bug_uninitialized_heap_locks },
	{ "ok-uninitialized-heap-locks", ok_uninitialized_heap_locks },
	{ "ok-memory-reused-after-free", ok_memory_reused_after_free },
	{ "ok-memory-reused-after-realloc", ok_memory_reused_after_realloc },
	{ "ok-library-reloaded-at-same-address", ok_library_reloaded_at_same_address },
	{ "bug-abba-after-300000-locks", bug_abba_after_300000_locks },
	{ "bug-account-inversion-after-500000-pairs", bug_account_inversion_after_500000_pairs },
	{ "ok-account-order-after-500000-pairs", ok_account_order_after_500000_pairs },
	{ "bug-static-struct-fields-inverted", bug_static_struct_fields_inverted },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	return run_scenario(argc, argv, scenarios);
}
