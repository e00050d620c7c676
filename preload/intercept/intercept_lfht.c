/* liburcu's lock-free hash table (liburcu-cds, urcu/rculfhash.h): the calls
 * its documentation asks to be made in a read-side critical section of the
 * table's flavor ("Call with rcu_read_lock held"; for QSBR, an online
 * thread): lookups, the start of an iteration, additions, replacements,
 * removals, counting. liburcu-cds is built with _LGPL_SOURCE: its own
 * reads of the table are plain loads no wrapper sees, so these entry points
 * are where a program's misuse shows.
 *
 * The table's flavor is the one it was made with (_cds_lfht_new(), called
 * by cds_lfht_new() and cds_lfht_new_flavor() inline): kept per table from
 * its creation to its destruction. A flavor is told by its read_lock
 * member, which the loader bound to this library's wrapper (the flavor's
 * table is data of the flavor library, relocated against the interposed
 * symbol); a table whose flavor is not known (a plugin's own liburcu bound
 * in its own scope) is not checked.
 *
 * A call made holding a lock is taken as the update side's, as an
 * rcu_dereference() under a lock is (the article's rule 2: which lock
 * guards the table is not known): lttng-sessiond iterates its sessions'
 * tables under the session locks. Such a call can still meet the table's
 * own resize worker, which takes none of the program's locks; that is not
 * reported.
 *
 * cds_lfht_next() and cds_lfht_next_duplicate() continue an iteration or a
 * lookup whose start was checked: checked again, one loop would be two
 * reports. Calls liburcu makes itself are its own business.
 *
 * A node these calls hand the program (the iterator's node, the node
 * cds_lfht_add_unique() found) counts as dereferenced in the caller's read
 * side, as an rcu_dereference() would: a free() of it while the section
 * lasts is reported (check_rcu_free.c), the bug of cds_lfht_del() followed
 * at once by free(). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include "rcu/urcu_calls.h"
#include "checks/checks.h"
#include "checks/rcu_tracking.h"
#include "runtime/real_functions.h"
#include "runtime/log_output.h"
#include "rcu/rcu_deref_set.h"

struct cds_lfht;
struct cds_lfht_node;
struct cds_lfht_iter;
struct cds_lfht_mm_type;
struct rcu_flavor_struct;

/* The flavors' read_lock, as exported here (intercept_urcu.c). */
#define FLAVOR_READ_LOCK(name, reg) void urcu_##name##_read_lock(void);
URCU_FLAVORS(FLAVOR_READ_LOCK)
#undef FLAVOR_READ_LOCK

static int flavor_of(const struct rcu_flavor_struct *flavor)
{
	if (!flavor)
		return -1;
	/* struct rcu_flavor_struct begins with void (*read_lock)(void) */
	void (*read_lock)(void) = *(void (*const *)(void))flavor;
#define FLAVOR_MATCH(name, reg)                          \
	if (read_lock == urcu_##name##_read_lock)        \
		return FLAVOR_##name;
	URCU_FLAVORS(FLAVOR_MATCH)
#undef FLAVOR_MATCH
	return -1;
}

/* Tables and their flavors: open addressing over (table | flavor + 1),
 * tables being 8-byte aligned; TOMBSTONE marks a destroyed table's slot. */
#define MAX_LFHT_TABLES 4096
#define TOMBSTONE ((uintptr_t)1)
static uintptr_t tables[MAX_LFHT_TABLES];

static size_t slot_of(const struct cds_lfht *ht)
{
	uint64_t h = (uint64_t)(uintptr_t)ht * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 52) & (MAX_LFHT_TABLES - 1);
}

static void table_add(const struct cds_lfht *ht, int flavor)
{
	uintptr_t entry = (uintptr_t)ht | (uintptr_t)(flavor + 1);
	for (size_t i = 0, s = slot_of(ht); i < MAX_LFHT_TABLES; i++, s = (s + 1) & (MAX_LFHT_TABLES - 1)) {
		uintptr_t cur = __atomic_load_n(&tables[s], __ATOMIC_ACQUIRE);
		if ((cur == 0 || cur == TOMBSTONE) &&
		    __atomic_compare_exchange_n(&tables[s], &cur, entry, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return;
	}
	log_output_limit_once("MAX_LFHT_TABLES too low!", "new hash tables are not checked");
}

/* The flavor of a live table, or -1. */
static int table_flavor(const struct cds_lfht *ht)
{
	for (size_t i = 0, s = slot_of(ht); i < MAX_LFHT_TABLES; i++, s = (s + 1) & (MAX_LFHT_TABLES - 1)) {
		uintptr_t cur = __atomic_load_n(&tables[s], __ATOMIC_ACQUIRE);
		if (cur == 0)
			return -1;
		if (cur != TOMBSTONE && (cur & ~(uintptr_t)7) == (uintptr_t)ht)
			return (int)(cur & 7) - 1;
	}
	return -1;
}

/* One more each time a table is destroyed: the threads' cached flavors
 * (thread_state.lfht_table) are then looked up again, since a new table
 * may take the old one's address. */
static uint32_t tables_generation;

static void table_remove(const struct cds_lfht *ht)
{
	for (size_t i = 0, s = slot_of(ht); i < MAX_LFHT_TABLES; i++, s = (s + 1) & (MAX_LFHT_TABLES - 1)) {
		uintptr_t cur = __atomic_load_n(&tables[s], __ATOMIC_ACQUIRE);
		if (cur == 0)
			break;
		if (cur != TOMBSTONE && (cur & ~(uintptr_t)7) == (uintptr_t)ht) {
			__atomic_store_n(&tables[s], TOMBSTONE, __ATOMIC_RELEASE);
			break;
		}
	}
	__atomic_add_fetch(&tables_generation, 1, __ATOMIC_RELEASE);
}

/* The flavor of a live table, or -1: from this thread's cache when ht is
 * the table it called last (a server looks up one table over and over). */
static inline int table_flavor_of(struct thread_state *ts, const struct cds_lfht *ht)
{
	uint32_t generation = __atomic_load_n(&tables_generation, __ATOMIC_ACQUIRE);
	if (__builtin_expect(ts->lfht_table == (const void *)ht && ts->lfht_generation == generation, 1))
		return ts->lfht_flavor;
	int f = table_flavor(ht);
	ts->lfht_flavor = f;
	ts->lfht_generation = generation;
	ts->lfht_table = ht;
	return f;
}

/* A table call outside a read side of the table's flavor, unless it is an
 * online QSBR thread's or liburcu's own: the report. Out of line. */
static __attribute__((noinline)) void table_call_outside_reader(struct thread_state *ts, int f, const char *what,
								 uintptr_t ip)
{
	if ((f == FLAVOR_qsbr && qsbr_thread_is_reader(ts)) || is_urcu_code(ip))
		return;
	char msg[128];
	__builtin_snprintf(msg, sizeof(msg), "%s outside an RCU read-side critical section", what);
	print_suspicious_rcu_detail(ts, urcu_program_site(ip), msg,
				    f == FLAVOR_qsbr ? "urcu/rculfhash.h: call with rcu_read_lock held; a QSBR thread "
						       "must be online"
						     : "urcu/rculfhash.h: call with rcu_read_lock held");
}

/* The call `what` on ht at ip: in a read side of the table's flavor? A few
 * loads when it is. */
static inline __attribute__((always_inline)) void check_table_call(const struct cds_lfht *ht, const char *what,
								    uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	if (!urcu_call_is_ours(ts) || ts->nr_locks || ts->traversal_allowed)
		return;
	int f = table_flavor_of(ts, ht);
	if (f >= 0 && !urcu_in_read_side(ts, (enum rcu_flavor)f))
		table_call_outside_reader(ts, f, what, ip);
}

/* The node a call handed the program, dereferenced in its read side: one
 * the wrappers saw begin, so that its end is seen too. Not for a QSBR
 * thread (online is its read side): with _LGPL_SOURCE its quiescent states
 * are inlined, no wrapper sees them, and the node would count as held long
 * after liburcu let a grace period end (a free after synchronize_rcu()
 * reported; seen at -O2 with a call_rcu worker's start block reusing the
 * memory). */
static inline __attribute__((always_inline)) void note_node(const void *node, uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	/* rcu_deref_note()'s rule, inline: a reader holding no lock */
	if (node && ts->nr_readers && !ts->nr_locks && urcu_call_is_ours(ts))
		rcu_deref_record(ts, node, ip);
}

/* struct cds_lfht_iter begins with the node it is at (urcu/rculfhash.h). */
static const void *iter_node(const struct cds_lfht_iter *iter)
{
	return *(const void *const *)iter;
}

struct cds_lfht *_cds_lfht_new(unsigned long init_size, unsigned long min_nr_alloc_buckets,
			       unsigned long max_nr_buckets, int flags, const struct cds_lfht_mm_type *mm,
			       const struct rcu_flavor_struct *flavor, pthread_attr_t *attr);
void cds_lfht_next(struct cds_lfht *ht, struct cds_lfht_iter *iter);
void cds_lfht_next_duplicate(struct cds_lfht *ht, int (*match)(struct cds_lfht_node *, const void *),
			     const void *key, struct cds_lfht_iter *iter);
int cds_lfht_destroy(struct cds_lfht *ht, pthread_attr_t **attr);
void cds_lfht_count_nodes(struct cds_lfht *ht, long *approx_before, unsigned long *count, long *approx_after);
void cds_lfht_lookup(struct cds_lfht *ht, unsigned long hash, int (*match)(struct cds_lfht_node *, const void *),
		     const void *key, struct cds_lfht_iter *iter);
void cds_lfht_first(struct cds_lfht *ht, struct cds_lfht_iter *iter);
void cds_lfht_add(struct cds_lfht *ht, unsigned long hash, struct cds_lfht_node *node);
struct cds_lfht_node *cds_lfht_add_unique(struct cds_lfht *ht, unsigned long hash,
					  int (*match)(struct cds_lfht_node *, const void *), const void *key,
					  struct cds_lfht_node *node);
struct cds_lfht_node *cds_lfht_add_replace(struct cds_lfht *ht, unsigned long hash,
					   int (*match)(struct cds_lfht_node *, const void *), const void *key,
					   struct cds_lfht_node *node);
int cds_lfht_replace(struct cds_lfht *ht, struct cds_lfht_iter *old_iter, unsigned long hash,
		     int (*match)(struct cds_lfht_node *, const void *), const void *key,
		     struct cds_lfht_node *new_node);
int cds_lfht_del(struct cds_lfht *ht, struct cds_lfht_node *node);

INTERPOSE(_cds_lfht_new);
INTERPOSE(cds_lfht_destroy);
INTERPOSE(cds_lfht_count_nodes);
INTERPOSE(cds_lfht_lookup);
INTERPOSE(cds_lfht_first);
INTERPOSE(cds_lfht_next);
INTERPOSE(cds_lfht_next_duplicate);
INTERPOSE(cds_lfht_add);
INTERPOSE(cds_lfht_add_unique);
INTERPOSE(cds_lfht_add_replace);
INTERPOSE(cds_lfht_replace);
INTERPOSE(cds_lfht_del);

struct cds_lfht *_cds_lfht_new(unsigned long init_size, unsigned long min_nr_alloc_buckets,
			       unsigned long max_nr_buckets, int flags, const struct cds_lfht_mm_type *mm,
			       const struct rcu_flavor_struct *flavor, pthread_attr_t *attr)
{
	struct cds_lfht *ht =
		REAL(_cds_lfht_new)(init_size, min_nr_alloc_buckets, max_nr_buckets, flags, mm, flavor, attr);
	int f = flavor_of(flavor);
	if (ht && f >= 0)
		table_add(ht, f);
	return ht;
}

int cds_lfht_destroy(struct cds_lfht *ht, pthread_attr_t **attr)
{
	int ret = REAL(cds_lfht_destroy)(ht, attr);
	if (ret == 0)   /* a table that is not empty stays */
		table_remove(ht);
	return ret;
}

void cds_lfht_count_nodes(struct cds_lfht *ht, long *approx_before, unsigned long *count, long *approx_after)
{
	check_table_call(ht, "cds_lfht_count_nodes()", CALLER_IP());
	REAL(cds_lfht_count_nodes)(ht, approx_before, count, approx_after);
}

void cds_lfht_lookup(struct cds_lfht *ht, unsigned long hash, int (*match)(struct cds_lfht_node *, const void *),
		     const void *key, struct cds_lfht_iter *iter)
{
	check_table_call(ht, "cds_lfht_lookup()", CALLER_IP());
	REAL(cds_lfht_lookup)(ht, hash, match, key, iter);
	note_node(iter_node(iter), CALLER_IP());
}

void cds_lfht_first(struct cds_lfht *ht, struct cds_lfht_iter *iter)
{
	check_table_call(ht, "cds_lfht_first()", CALLER_IP());
	REAL(cds_lfht_first)(ht, iter);
	note_node(iter_node(iter), CALLER_IP());
}

void cds_lfht_next(struct cds_lfht *ht, struct cds_lfht_iter *iter)
{
	REAL(cds_lfht_next)(ht, iter);
	note_node(iter_node(iter), CALLER_IP());
}

void cds_lfht_next_duplicate(struct cds_lfht *ht, int (*match)(struct cds_lfht_node *, const void *),
			     const void *key, struct cds_lfht_iter *iter)
{
	REAL(cds_lfht_next_duplicate)(ht, match, key, iter);
	note_node(iter_node(iter), CALLER_IP());
}

void cds_lfht_add(struct cds_lfht *ht, unsigned long hash, struct cds_lfht_node *node)
{
	check_table_call(ht, "cds_lfht_add()", CALLER_IP());
	REAL(cds_lfht_add)(ht, hash, node);
}

struct cds_lfht_node *cds_lfht_add_unique(struct cds_lfht *ht, unsigned long hash,
					  int (*match)(struct cds_lfht_node *, const void *), const void *key,
					  struct cds_lfht_node *node)
{
	check_table_call(ht, "cds_lfht_add_unique()", CALLER_IP());
	struct cds_lfht_node *found = REAL(cds_lfht_add_unique)(ht, hash, match, key, node);
	if (found != node)   /* the node already there */
		note_node(found, CALLER_IP());
	return found;
}

struct cds_lfht_node *cds_lfht_add_replace(struct cds_lfht *ht, unsigned long hash,
					   int (*match)(struct cds_lfht_node *, const void *), const void *key,
					   struct cds_lfht_node *node)
{
	check_table_call(ht, "cds_lfht_add_replace()", CALLER_IP());
	return REAL(cds_lfht_add_replace)(ht, hash, match, key, node);
}

int cds_lfht_replace(struct cds_lfht *ht, struct cds_lfht_iter *old_iter, unsigned long hash,
		     int (*match)(struct cds_lfht_node *, const void *), const void *key,
		     struct cds_lfht_node *new_node)
{
	check_table_call(ht, "cds_lfht_replace()", CALLER_IP());
	return REAL(cds_lfht_replace)(ht, old_iter, hash, match, key, new_node);
}

int cds_lfht_del(struct cds_lfht *ht, struct cds_lfht_node *node)
{
	check_table_call(ht, "cds_lfht_del()", CALLER_IP());
	return REAL(cds_lfht_del)(ht, node);
}
