/* The dependency graph, cycle search and the circular-dependency report.
 * Everything here runs under graph_lock, a spinlock of the tracer's own,
 * once per new chain of held classes: the wrappers' fast path only reads
 * the validated-chain set. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "lock_graph.h"
#include "backtrace.h"
#include "checks.h"
#include "report.h"
#include "options.h"

int lock_graph_enabled = 1;
uint64_t validated_chains[MAX_LOCKDEP_CHAINS];

/* An edge from -> to: `to` was acquired while `from` was held. */
struct lock_dependency {
	uint32_t from, to;
	uint32_t next_out;       /* next edge leaving `from`; 0 ends the list */
	uint8_t types;           /* bit (held_read << 1 | acquired_read): combinations seen */
	uint8_t sync;            /* first seen as a grace-period wait */
	uint8_t nr_frames;
	uintptr_t from_ip;       /* where `from` was taken */
	uintptr_t frames[DEPENDENCY_FRAMES];   /* the acquisition of `to` */
};

static struct lock_dependency dependencies[MAX_LOCKDEP_EDGES];
static uint32_t nr_dependencies = 1;   /* 0 ends lists */

static int graph_lock_word;

static void graph_lock(void)
{
	while (__atomic_exchange_n(&graph_lock_word, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void graph_unlock(void)
{
	__atomic_store_n(&graph_lock_word, 0, __ATOMIC_RELEASE);
}

void lock_graph_fork_prepare(void) { graph_lock(); lock_classes_fork_prepare(); }
void lock_graph_fork_parent(void) { lock_classes_fork_parent(); graph_unlock(); }
void lock_graph_fork_child(void) { lock_classes_fork_child(); graph_unlock(); }

uint32_t rcu_flavor_class(enum rcu_flavor flavor)
{
	static uint32_t classes[NR_FLAVORS];
	uint32_t id = __atomic_load_n(&classes[flavor], __ATOMIC_RELAXED);
	if (!id) {
		id = lock_class_for_key((uintptr_t)flavor, CLASS_RCU_FLAVOR, 0, NULL);
		__atomic_store_n(&classes[flavor], id, __ATOMIC_RELAXED);
	}
	return id;
}

/* ---- lock-free sets of 64-bit keys (validated chains, instance pairs,
 *      reported cycles) --------------------------------------------------- */

static int key_set_insert(uint64_t *set, uint32_t size, uint64_t key, const char *limit)
{
	uint32_t h = (uint32_t)(key >> 40) & (size - 1);
	for (uint32_t probe = 0; probe < KEY_SET_PROBES; probe++) {
		uint64_t *slot = &set[(h + probe) & (size - 1)];
		uint64_t expected = 0;
		if (__atomic_compare_exchange_n(slot, &expected, key, 0, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE) ||
		    expected == key)
			return 1;
	}
	if (limit)
		report_limit_once(limit, "table full: some lock chains are validated again each time");
	return 0;
}

static int key_set_contains(const uint64_t *set, uint32_t size, uint64_t key)
{
	uint32_t h = (uint32_t)(key >> 40) & (size - 1);
	for (uint32_t probe = 0; probe < KEY_SET_PROBES; probe++) {
		uint64_t cur = __atomic_load_n(&set[(h + probe) & (size - 1)], __ATOMIC_ACQUIRE);
		if (cur == key)
			return 1;
		if (!cur)
			return 0;
	}
	return 0;
}

static uint64_t instance_pairs[MAX_INSTANCE_PAIRS];
static uint64_t reported_cycles[4096];

/* ---- edges ------------------------------------------------------------- */

static struct lock_dependency *find_dependency(uint32_t from, uint32_t to)
{
	for (uint32_t e = lock_classes[from].first_dependency; e; e = dependencies[e].next_out)
		if (dependencies[e].to == to)
			return &dependencies[e];
	return NULL;
}

static struct lock_dependency *add_dependency(uint32_t from, uint32_t to, const struct held_lock *held,
					      const uintptr_t *frames, size_t nr_frames)
{
	if (nr_dependencies >= MAX_LOCKDEP_EDGES) {
		report_limit_once("MAX_LOCKDEP_EDGES too low!",
				  "dependency table full: new lock orders are not validated any more");
		return NULL;
	}
	struct lock_dependency *d = &dependencies[nr_dependencies];
	d->from = from;
	d->to = to;
	d->types = 0;
	d->from_ip = held->acquire_ip;
	d->nr_frames = (uint8_t)(nr_frames < DEPENDENCY_FRAMES ? nr_frames : DEPENDENCY_FRAMES);
	memcpy(d->frames, frames, d->nr_frames * sizeof(frames[0]));
	d->next_out = lock_classes[from].first_dependency;
	lock_classes[from].first_dependency = nr_dependencies++;
	return d;
}

/* ---- cycle search ---------------------------------------------------------
 * A cycle is a deadlock only if it is "strong" (kernel lockdep's rule for
 * recursive reads): at no lock of it is the edge in a recursive-read
 * acquisition and the edge out taken while holding it for recursive read,
 * since two recursive readers never wait for each other. The search runs
 * over states (class, whether it was reached by a read acquisition). */

struct search_state {
	uint32_t stamp;
	uint32_t parent_edge;
	uint8_t parent_read;     /* state of the parent */
	uint8_t parent_bit;      /* type bit of the edge used */
};

static struct search_state search[MAX_LOCK_CLASSES][2];
static uint32_t search_stamp;
static uint32_t search_queue[2 * MAX_LOCK_CLASSES];

/* Is there a strong path from `start` (reached by a read iff start_read) to
 * `target`, ending at target in a state compatible with target being held
 * for read (target_held_read)? Returns the final state + 1, or 0. */
static int find_strong_path(uint32_t start, int start_read, uint32_t target, int target_held_read)
{
	if (++search_stamp == 0) {
		memset(search, 0, sizeof(search));
		search_stamp = 1;
	}
	uint32_t head = 0, tail = 0;
	search[start][start_read].stamp = search_stamp;
	search[start][start_read].parent_edge = 0;
	search_queue[tail++] = start << 1 | (uint32_t)start_read;
	while (head < tail) {
		uint32_t node = search_queue[head] >> 1;
		int reached_by_read = search_queue[head] & 1;
		head++;
		if (node == target && !(reached_by_read && target_held_read))
			return reached_by_read + 1;
		for (uint32_t e = lock_classes[node].first_dependency; e; e = dependencies[e].next_out) {
			const struct lock_dependency *d = &dependencies[e];
			for (int bit = 0; bit < 4; bit++) {
				if (!(d->types & (1u << bit)))
					continue;
				int held_read = bit >> 1, acquired_read = bit & 1;
				if (reached_by_read && held_read)
					continue;   /* read-read at `node`: no wait there */
				struct search_state *s = &search[d->to][acquired_read];
				if (s->stamp == search_stamp)
					continue;
				s->stamp = search_stamp;
				s->parent_edge = e;
				s->parent_read = (uint8_t)reached_by_read;
				s->parent_bit = (uint8_t)bit;
				if (tail < sizeof(search_queue) / sizeof(search_queue[0]))
					search_queue[tail++] = d->to << 1 | (uint32_t)acquired_read;
			}
		}
	}
	return 0;
}

/* The path found, as edges from start to target, with the type bit used. */
struct path_step {
	uint32_t edge;
	uint8_t bit;
};
#define MAX_PATH 64

static size_t path_to(uint32_t target, int final_read, struct path_step *path)
{
	struct path_step reversed[MAX_PATH];
	size_t n = 0;
	uint32_t node = target;
	int read = final_read;
	/* The start state is the only one without a parent edge. */
	while (search[node][read].parent_edge && n < MAX_PATH) {
		const struct search_state *s = &search[node][read];
		reversed[n].edge = s->parent_edge;
		reversed[n].bit = s->parent_bit;
		n++;
		node = dependencies[s->parent_edge].from;
		read = s->parent_read;
	}
	for (size_t i = 0; i < n; i++)
		path[i] = reversed[n - 1 - i];
	return n;
}

/* ---- the report ---------------------------------------------------------- */

static const char *op_name(int read, int sync)
{
	return sync ? "sync" : read ? "rlock" : "lock";
}

static void report_class_line(uint32_t class_id, const void *lock, const char *suffix)
{
	char name[256];
	lock_class_name(class_id, name, sizeof(name));
	if (lock)
		report_printf("%016lx (%s)%s", (unsigned long)lock, name, suffix);
	else
		report_printf("(%s)%s", name, suffix);
}

static void report_frames(const uintptr_t *frames, size_t n)
{
	for (size_t i = 0; i < n && i < (size_t)tracer_options.max_frames; i++) {
		report_printf("       ");
		report_symbolized_ip(frames[i]);
		report_printf("\n");
	}
}

/* The current thread holds `held` (class P) and acquires `lock` (class N)
 * with `op`; path goes N -> ... -> P in the existing graph. */
static void print_circular_bug(struct thread_state *ts, const struct held_lock *held, const void *lock,
			       uint32_t class_id, enum acquire_op op, uintptr_t ip,
			       const struct path_step *path, size_t path_len,
			       const uintptr_t *frames, size_t nr_frames)
{
	char n_name[256], p_name[256], x_name[256];
	lock_class_name(class_id, n_name, sizeof(n_name));
	lock_class_name(held->class_id, p_name, sizeof(p_name));
	report_begin(ts, "WARNING: possible circular locking dependency detected");
	report_printf("%s is trying to acquire lock:\n", report_task_name());
	report_class_line(class_id, lock, ", at: ");
	report_symbolized_ip(ip);
	report_printf("\n\nbut task is already holding lock:\n");
	report_class_line(held->class_id, held->kind == HELD_RCU_READ && held->flavor != FLAVOR_srcu ? NULL : held->lock,
			  ", at: ");
	report_symbolized_ip(held->acquire_ip);
	report_printf("\n\nwhich lock already depends on the new lock.\n\n");
	report_printf("\nthe existing dependency chain (in reverse order) is:\n");
	for (size_t i = path_len; i > 0; i--) {
		const struct lock_dependency *d = &dependencies[path[i - 1].edge];
		report_printf("\n-> #%zu (", i);
		char name[256];
		lock_class_name(d->to, name, sizeof(name));
		report_printf("%s){%s}:\n", name, op_name(path[i - 1].bit & 1, d->sync));
		report_frames(d->frames, d->nr_frames);
	}
	report_printf("\n-> #0 (%s){%s}:\n", n_name, op_name(op == ACQUIRE_RLOCK, op == ACQUIRE_SYNC));
	report_frames(frames, nr_frames);

	/* The last edge of the path: X held, P acquired. */
	const struct lock_dependency *last = &dependencies[path[path_len - 1].edge];
	int x_held_read = path[path_len - 1].bit >> 1, p_acquired_read = path[path_len - 1].bit & 1;
	lock_class_name(last->from, x_name, sizeof(x_name));
	report_printf("\nother info that might help us debug this:\n\n");
	if (path_len > 1)
		report_printf("Chain exists of:\n  %s --> %s --> %s\n\n", n_name, x_name, p_name);
	report_printf(" Possible unsafe locking scenario:\n\n");
	report_printf("       CPU0                    CPU1\n");
	report_printf("       ----                    ----\n");
	report_printf("  %s(%s);\n", op_name(held->read_recursive, 0), p_name);
	report_printf("                               %s(%s);\n", op_name(x_held_read, 0), x_name);
	report_printf("                               %s(%s);\n", op_name(p_acquired_read, last->sync), p_name);
	report_printf("  %s(%s);\n", op_name(op == ACQUIRE_RLOCK, op == ACQUIRE_SYNC), n_name);
	report_printf("\n *** DEADLOCK ***\n\n");
	report_held_locks(ts);
	report_backtrace();
	report_end(ts, REPORT_CIRCULAR_DEPENDENCY);
}

/* Two instances of one class taken in both orders (x then y here, y then x
 * somewhere else): address-ordered locking never does that. */
static void print_instance_inversion(struct thread_state *ts, const struct held_lock *held,
				     const void *lock, uint32_t class_id, uintptr_t ip)
{
	char name[256];
	lock_class_name(class_id, name, sizeof(name));
	report_begin(ts, "WARNING: possible circular locking dependency detected");
	report_printf("%s is trying to acquire lock:\n", report_task_name());
	report_printf("%016lx (%s), at: ", (unsigned long)lock, name);
	report_symbolized_ip(ip);
	report_printf("\n\nbut task is already holding lock:\n");
	report_printf("%016lx (%s), at: ", (unsigned long)held->lock, name);
	report_symbolized_ip(held->acquire_ip);
	report_printf("\n\nwhich lock already depends on the new lock: these two locks of class %s\n"
		      "were taken in the opposite order before (%016lx then %016lx).\n",
		      name, (unsigned long)lock, (unsigned long)held->lock);
	report_printf("\nother info that might help us debug this:\n\n");
	report_printf(" Possible unsafe locking scenario:\n\n");
	report_printf("       CPU0                    CPU1\n");
	report_printf("       ----                    ----\n");
	report_printf("  lock(%s#%016lx);\n", name, (unsigned long)held->lock);
	report_printf("                               lock(%s#%016lx);\n", name, (unsigned long)lock);
	report_printf("                               lock(%s#%016lx);\n", name, (unsigned long)held->lock);
	report_printf("  lock(%s#%016lx);\n", name, (unsigned long)lock);
	report_printf("\n *** DEADLOCK ***\n\n");
	report_held_locks(ts);
	report_backtrace();
	report_end(ts, REPORT_CIRCULAR_DEPENDENCY);
}

/* ---- validation ---------------------------------------------------------- */

static uint64_t cycle_key(uint32_t new_from, uint32_t new_to, const struct path_step *path, size_t n)
{
	/* The set of edges of the cycle, order-independent. */
	uint64_t key = chain_mix(0, (uint64_t)new_from << 32 | new_to);
	for (size_t i = 0; i < n; i++) {
		const struct lock_dependency *d = &dependencies[path[i].edge];
		key += chain_mix(0x77, (uint64_t)d->from << 32 | d->to);
	}
	return key | 1;
}

static uint64_t instance_pair_key(const void *a, uint32_t gen_a, const void *b, uint32_t gen_b)
{
	uint64_t k = chain_mix(0x3, (uint64_t)(uintptr_t)a ^ ((uint64_t)gen_a << 48));
	k = chain_mix(k, (uint64_t)(uintptr_t)b ^ ((uint64_t)gen_b << 48));
	return k | 1;
}

/* One held lock of the same class as the new one, another instance. */
static void check_instance_order(struct thread_state *ts, const struct held_lock *held, const void *lock,
				 uint32_t class_id, uintptr_t ip)
{
	uint32_t gen_held, gen_new;
	lock_class_of(held->lock, &gen_held);
	lock_class_of(lock, &gen_new);
	uint64_t forward = instance_pair_key(held->lock, gen_held, lock, gen_new);
	if (key_set_contains(instance_pairs, MAX_INSTANCE_PAIRS, forward))
		return;
	uint64_t backward = instance_pair_key(lock, gen_new, held->lock, gen_held);
	if (key_set_contains(instance_pairs, MAX_INSTANCE_PAIRS, backward) &&
	    key_set_insert(reported_cycles, sizeof(reported_cycles) / sizeof(reported_cycles[0]),
			   forward ^ backward, NULL))
		print_instance_inversion(ts, held, lock, class_id, ip);
	key_set_insert(instance_pairs, MAX_INSTANCE_PAIRS, forward, "MAX_INSTANCE_PAIRS too low!");
}

/* An online QSBR thread is a reader all the time: its read side counts as
 * held, from where it registered. */
static struct held_lock qsbr_reader_entry(void)
{
	struct held_lock h = { 0 };
	h.kind = HELD_RCU_READ;
	h.flavor = FLAVOR_qsbr;
	h.underlying = FLAVOR_qsbr;
	h.read_recursive = 1;
	h.class_id = rcu_flavor_class(FLAVOR_qsbr);
	h.acquire_ip = registered_ip[FLAVOR_qsbr];
	return h;
}

/* Returns 1 when it reported; then later held locks of the same
 * acquisition record their edges without a report of their own (one bug,
 * one report: A taken behind B, C and D closes three cycles at once). */
static int validate_dependency(struct thread_state *ts, const struct held_lock *held, const void *lock,
			       uint32_t class_id, enum acquire_op op, uintptr_t ip,
			       const uintptr_t *frames, size_t nr_frames, int may_report)
{
	int reported = 0;
	int acquired_read = op == ACQUIRE_RLOCK;
	unsigned bit = (unsigned)held->read_recursive << 1 | (unsigned)acquired_read;
	struct lock_dependency *d = find_dependency(held->class_id, class_id);
	if (d && (d->types & (1u << bit)))
		return 0;
	/* Would held -> new close a cycle new -> ... -> held? */
	int found = may_report ? find_strong_path(class_id, acquired_read, held->class_id,
						  held->read_recursive) : 0;
	if (found) {
		struct path_step path[MAX_PATH];
		size_t n = path_to(held->class_id, found - 1, path);
		if (n && key_set_insert(reported_cycles, sizeof(reported_cycles) / sizeof(reported_cycles[0]),
					cycle_key(held->class_id, class_id, path, n), NULL)) {
			print_circular_bug(ts, held, lock, class_id, op, ip, path, n, frames, nr_frames);
			reported = 1;
		}
	}
	/* Validation goes on after a report: the edge is recorded either way,
	 * so one stress run finds every bug. */
	if (!d)
		d = add_dependency(held->class_id, class_id, held, frames, nr_frames);
	if (d) {
		if (!d->types)
			d->sync = op == ACQUIRE_SYNC;
		d->types |= (uint8_t)(1u << bit);
	}
	return reported;
}

void lock_graph_validate(struct thread_state *ts, const void *lock, uint32_t class_id,
			 enum acquire_op op, uintptr_t ip, uint64_t chain_key, int same_class)
{
	tracer_enter(ts);
	uintptr_t frames[DEPENDENCY_FRAMES];
	size_t nr_frames = 0;
	int captured = 0;
	graph_lock();
	if (same_class) {
		for (unsigned i = 0; i < ts->depth; i++) {
			const struct held_lock *h = &ts->held[i];
			if (h->class_id == class_id && h->lock != lock && h->kind != HELD_RCU_READ)
				check_instance_order(ts, h, lock, class_id, ip);
		}
	}
	if (!chain_is_validated(chain_key)) {
		struct held_lock qsbr = qsbr_reader_entry();
		int with_qsbr = qsbr_thread_is_reader(ts);
		int reported = 0;
		for (int i = with_qsbr ? -1 : 0; i < (int)ts->depth; i++) {
			const struct held_lock *h = i < 0 ? &qsbr : &ts->held[i];
			/* Same class: recursion (core check) or instances (above). */
			if (!h->class_id || h->class_id == class_id)
				continue;
			if (!captured) {
				nr_frames = backtrace_capture(frames, DEPENDENCY_FRAMES);
				captured = 1;
			}
			reported |= validate_dependency(ts, h, lock, class_id, op, ip, frames, nr_frames, !reported);
		}
		key_set_insert(validated_chains, MAX_LOCKDEP_CHAINS, chain_key, "MAX_LOCKDEP_CHAINS too low!");
	}
	graph_unlock();
	tracer_leave(ts);
}
