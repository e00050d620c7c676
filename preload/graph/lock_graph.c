/* The dependency graph, cycle search and the circular-dependency report.
 * The graph lock covers the edges and the search; it is taken once per new
 * chain of held classes (the wrappers' fast path only reads the
 * validated-chain set), and never held while stacks are captured or
 * anything is named: stacks are captured before new edges are added, and
 * reports are printed after the lock is dropped. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "graph/lock_graph.h"
#include "graph/instance_pairs.h"
#include "unwind/backtrace.h"
#include "base/options.h"
#include "unwind/stack_depot.h"
#include "runtime/tracer_lock.h"
#include "base/key_set.h"
#include "rcu/urcu_calls.h"
#include "runtime/log_output.h"
#include "runtime/self_check.h"

int lock_graph_enabled = 1;
void (*lock_graph_new_dependency_hook)(struct thread_state *ts, const void *lock, uint32_t class_id, uintptr_t ip);
uint64_t validated_chains[MAX_LOCKDEP_CHAINS];

/* An edge from -> to: `to` was acquired while `from` was held. Edges are
 * never removed or moved: once published, readers need no lock. */
struct lock_dependency {
	uint32_t from, to;
	uint32_t next_out;       /* next edge leaving `from`; 0 ends the list */
	uint32_t stack;          /* stack depot id: the acquisition of `to` */
	uintptr_t from_ip;       /* where `from` was taken */
	uint8_t types;           /* bit (held_read << 1 | acquired_read): combinations seen */
	uint8_t sync;            /* first seen as a grace-period wait */
	uint8_t urcu_workers_only;   /* only ever made by threads liburcu started */
	uint8_t in_reported_cycle;   /* part of a cycle that was reported (graph_path) */
	uint32_t gate;           /* lock_graph_gate() of every time it was taken,
				    when that was always the same; else 0 */
};

static struct lock_dependency dependencies[MAX_LOCKDEP_EDGES];
static uint32_t nr_dependencies = 1;   /* 0 ends lists */

/* A signal handler that interrupts a validation on its own thread skips
 * its own validation instead of waiting for itself. */
static struct tracer_lock graph = TRACER_LOCK_INITIALIZER(TRACER_LOCK_GRAPH, "lock graph");
void lock_graph_fork_prepare(struct thread_state *self)
{
	tracer_lock_fork_prepare(&graph, self);
	lock_classes_fork_prepare(self);
}

void lock_graph_fork_parent(void)
{
	lock_classes_fork_parent();
	tracer_lock_fork_parent(&graph);
}

void lock_graph_fork_child(struct thread_state *self)
{
	lock_classes_fork_child(self);
	/* A vanished thread was adding an edge: the lists may be half-linked.
	 * The child's validator stays off rather than walk them. */
	if (tracer_lock_fork_child(&graph, self))
		lock_graph_enabled = 0;
}

uint32_t rcu_flavor_classes[NR_FLAVORS];

uint32_t rcu_flavor_class_slow(enum rcu_flavor flavor)
{
	uint32_t id = lock_class_for_key((uintptr_t)flavor, CLASS_RCU_FLAVOR, 0, NULL);
	__atomic_store_n(&rcu_flavor_classes[flavor], id, __ATOMIC_RELAXED);
	return id;
}

/* Cycles reported: each is printed once. Full, a cycle may be printed again
 * (never missed). */
#define MAX_REPORTED_CYCLES (1u << 14)
static uint64_t reported_cycles[MAX_REPORTED_CYCLES];

/* 1 the first time a cycle (its key) is seen. */
static int report_cycle_once(uint64_t key)
{
	int added = key_set_insert(reported_cycles, MAX_REPORTED_CYCLES, key);
	if (!added)
		log_output_limit_once("MAX_REPORTED_CYCLES too low!", "a cycle reported before may be reported again");
	return added != 1;
}

/* ---- edges ------------------------------------------------------------- */

static struct lock_dependency *find_dependency(uint32_t from, uint32_t to)
{
	for (uint32_t e = lock_classes[from].first_dependency; e; e = dependencies[e].next_out)
		if (dependencies[e].to == to)
			return &dependencies[e];
	return NULL;
}

static struct lock_dependency *add_dependency(uint32_t from, uint32_t to, const struct held_lock *held,
					      uint32_t stack, int by_urcu_worker, uint32_t gate)
{
	uint32_t nr_classes = lock_classes_count();
	if (TRACER_WARN_ON(!from || !to || from >= nr_classes || to >= nr_classes || self_check_fault()))
		return NULL;
	if (nr_dependencies >= MAX_LOCKDEP_EDGES) {
		log_output_limit_once("MAX_LOCKDEP_EDGES too low!",
				  "dependency table full: new lock orders are not validated any more");
		return NULL;
	}
	struct lock_dependency *d = &dependencies[nr_dependencies];
	d->from = from;
	d->to = to;
	d->types = 0;
	d->from_ip = held->acquire_ip;
	d->stack = stack;
	d->urcu_workers_only = (uint8_t)by_urcu_worker;
	d->gate = gate;
	d->next_out = lock_classes[from].first_dependency;
	/* Published last: a lock-free reader of the list sees it whole. */
	__atomic_store_n(&lock_classes[from].first_dependency, nr_dependencies++, __ATOMIC_RELEASE);
	return d;
}

size_t lock_graph_snapshot(struct thread_state *ts, struct dependency_view *out, size_t max)
{
	if (!tracer_lock_acquire(&graph, ts))
		return 0;
	size_t n = 0;
	for (uint32_t e = 1; e < nr_dependencies && n < max; e++) {
		const struct lock_dependency *d = &dependencies[e];
		if (!d->types || lock_classes[d->from].dead || lock_classes[d->to].dead)
			continue;
		out[n++] = (struct dependency_view){
			.from = d->from, .to = d->to, .stack = d->stack,
			.read_only = !(d->types & 0x5),   /* never acquired but for read */
			.sync = d->sync, .in_reported_cycle = d->in_reported_cycle,
			.urcu_workers_only = d->urcu_workers_only,
		};
	}
	tracer_lock_release(&graph);
	return n;
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

/* The one breadth-first search over those states, from `start` (reached
 * by a read iff start_read): the first state, in breadth-first order, for
 * which match() says yes, the start included. Returns its class (0: none)
 * and whether it was reached by a read in *found_read; path_to() then
 * walks back its parents. Breadth first, so the path is a shortest one.
 * Always inlined: each caller's match() inlines into its copy. */
static inline __attribute__((always_inline)) uint32_t
strong_search(uint32_t start, int start_read, int (*match)(uint32_t class_id, int reached_by_read, void *arg),
	      void *arg, int *found_read)
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
		if (match(node, reached_by_read, arg)) {
			*found_read = reached_by_read;
			return node;
		}
		for (uint32_t e = lock_classes[node].first_dependency; e; e = dependencies[e].next_out) {
			const struct lock_dependency *d = &dependencies[e];
			for (int bit = 0; bit < 4; bit++) {
				if (!(d->types & (1u << bit)))
					continue;
				int held_read = bit >> 1, acquired_read = bit & 1;
				if (reached_by_read && held_read)
					continue;   /* read-read at `node`: no wait there */
				struct search_state *st = &search[d->to][acquired_read];
				if (st->stamp == search_stamp || lock_classes[d->to].dead)
					continue;
				st->stamp = search_stamp;
				st->parent_edge = e;
				st->parent_read = (uint8_t)reached_by_read;
				st->parent_bit = (uint8_t)bit;
				if (tail < sizeof(search_queue) / sizeof(search_queue[0]))
					search_queue[tail++] = d->to << 1 | (uint32_t)acquired_read;
			}
		}
	}
	return 0;
}

struct target_state {
	uint32_t target;
	int target_held_read;
};

/* The target, in a state that waits for it being held as it is: a read
 * acquisition does not wait for a recursive read holder. */
static int is_target(uint32_t class_id, int reached_by_read, void *arg)
{
	const struct target_state *t = arg;
	return class_id == t->target && !(reached_by_read && t->target_held_read);
}

/* Is there a strong path from `start` (reached by a read iff start_read) to
 * `target`, ending at target in a state compatible with target being held
 * for read (target_held_read)? Returns the final state + 1, or 0. */
static int find_strong_path(uint32_t start, int start_read, uint32_t target, int target_held_read)
{
	struct target_state t = { target, target_held_read };
	int found_read;
	return strong_search(start, start_read, is_target, &t, &found_read) ? found_read + 1 : 0;
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

/* The kernel's find_usage_forwards(), over the same states as
 * find_strong_path(): the first class past `from` that the caller's
 * match() accepts. */
struct other_match {
	uint32_t from;
	int (*match)(uint32_t class_id, int taken_for_read, void *arg);
	void *arg;
};

static int matches_other(uint32_t class_id, int reached_by_read, void *arg)
{
	const struct other_match *m = arg;
	return class_id != m->from && m->match(class_id, reached_by_read, m->arg);
}

uint32_t lock_graph_find_forwards(struct thread_state *ts, uint32_t from, int from_read,
				  int (*match)(uint32_t class_id, int taken_for_read, void *arg), void *arg,
				  struct dependency_step *path, size_t *path_len)
{
	*path_len = 0;
	if (!from || !tracer_lock_acquire(&graph, ts))
		return 0;
	struct other_match m = { from, match, arg };
	int found_read = 0;
	uint32_t found = strong_search(from, from_read, matches_other, &m, &found_read);
	if (found) {
		struct path_step steps[MAX_PATH];
		size_t n = path_to(found, found_read, steps);
		if (n > MAX_DEPENDENCY_PATH)
			n = MAX_DEPENDENCY_PATH;
		for (size_t i = 0; i < n; i++) {
			const struct lock_dependency *d = &dependencies[steps[i].edge];
			path[i] = (struct dependency_step){ d->from, d->to, d->stack, (uint8_t)(steps[i].bit & 1) };
		}
		*path_len = n;
	}
	tracer_lock_release(&graph);
	return found;
}

/* ---- what was found -------------------------------------------------------
 * Handed to the sink after the graph lock is dropped. A cycle found during
 * validation is remembered by its ends; the printer asks for its path
 * (lock_graph_cycle_path()), searched again under the graph lock: the
 * graph only grows, so it is still there. */

size_t lock_graph_cycle_path(struct thread_state *ts, const struct lock_cycle *c,
			     struct lock_cycle_edge *edges, size_t max)
{
	struct path_step path[MAX_PATH];
	size_t n = 0;
	if (!tracer_lock_acquire(&graph, ts))
		return 0;
	int found = find_strong_path(c->class_id, c->op == ACQUIRE_RLOCK, c->held->class_id,
				     held_read_recursive(c->held));
	if (found)
		n = path_to(c->held->class_id, found - 1, path);
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++) {
		const struct lock_dependency *d = &dependencies[path[i].edge];
		edges[i] = (struct lock_cycle_edge){
			.from = d->from, .to = d->to, .stack = d->stack,
			.held_read = (uint8_t)(path[i].bit >> 1), .acquired_read = (uint8_t)(path[i].bit & 1),
			.sync = d->sync,
		};
	}
	tracer_lock_release(&graph);
	return n;
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

/* An inversion of two instances of one class: reported once per pair. */
int lock_graph_report_instance_inversion(struct thread_state *ts, const struct held_lock *held, uint32_t gen_held,
					 const void *lock, uint32_t gen_new, uint32_t class_id, uintptr_t ip,
					 const struct instance_pair_probe *probe, uint64_t other_where,
					 const void *wrapper_frame, const struct lock_graph_sink *sink)
{
	/* Both orders stay. */
	instance_pairs_insert(probe, PAIR_INVERTED, instance_pair_capture(wrapper_frame, ip));
	uint64_t x = (uint64_t)(uintptr_t)held->lock ^ (uint64_t)gen_held << 48;
	uint64_t y = (uint64_t)(uintptr_t)lock ^ (uint64_t)gen_new << 48;
	if (!report_cycle_once(chain_mix(chain_mix(0x1d, x < y ? x : y), x < y ? y : x) | 1))
		return 0;
	/* This order's stack for the report's #0, before the report lock
	 * (the depot has a lock of its own). */
	uint32_t stack = (uint32_t)instance_pair_capture_stack((size_t)tracer_options.max_frames);
	struct lock_instance_inversion v = { held, lock, class_id, ip, other_where, stack };
	tracer_enter(ts);
	sink->instance_inversion(ts, &v);
	tracer_leave(ts);
	return 1;
}

/* One held lock of the same class as the new one, another instance: the
 * pair cache is lock-free, so same-class nesting (two accounts) never
 * serializes threads on the graph lock. */
/* The gate of an order held -> lock (lock_graph_gate(), the outermost lock
 * held exclusively, when it is neither of the two), as 14 bits in
 * PAIR_GATE_MASK's place; 0 for none. */
static uint64_t instance_pair_gate(const struct thread_state *ts, const void *held, const void *lock)
{
	uint32_t gate = lock_graph_gate(ts);
	if (!gate || ts->held[0].lock == held || ts->held[0].lock == lock)
		return 0;
	uint64_t g = gate >> 18;
	return (g ? g : 1) << PAIR_GATE_SHIFT;
}

int lock_graph_check_instance_pair(struct thread_state *ts, const struct held_lock *held, uint32_t gen_held,
				   const void *lock, uint32_t gen_new, uint32_t class_id, uintptr_t ip,
				   const struct lock_graph_sink *sink)
{
	if (!gen_held)
		lock_class_of_kind(held->lock, held->kind, held->acquire_ip, &gen_held);
	struct instance_pair_probe probe;
	uint64_t other_where = 0;
	enum instance_pair_seen seen = instance_pairs_probe(held->lock, gen_held, lock, gen_new, &probe, &other_where);
	uint64_t gate = instance_pair_gate(ts, held->lock, lock);
	if (__builtin_expect(seen != PAIR_INVERTED, 1)) {
		if (seen == PAIR_NEW)
			instance_pairs_insert(&probe, seen, instance_pair_capture(NULL, ip) | gate);
		return 0;
	}
	/* Both orders under one gate lock: they never overlap (QEMU's
	 * AioContext locks, each order under the Big QEMU Lock). Both stay
	 * recorded; an order taken later without the gate is reported. */
	if (gate && probe.other_gate == gate >> PAIR_GATE_SHIFT) {
		instance_pairs_insert(&probe, PAIR_INVERTED, instance_pair_capture(NULL, ip) | gate);
		return 0;
	}
	return lock_graph_report_instance_inversion(ts, held, gen_held, lock, gen_new, class_id, ip, &probe,
						    other_where, NULL, sink);
}

/* The read sides no wrapper saw begin count as held: an online QSBR
 * thread's (from where it registered), and inlined ones (_LGPL_SOURCE;
 * where they began is not known: acquire_ip 0). */
static struct held_lock implicit_reader_entry(enum rcu_flavor flavor, uintptr_t ip)
{
	struct held_lock h = { 0 };
	h.kind = HELD_RCU_READ;
	h.attr = HELD_ATTR_RCU(flavor, flavor);
	h.references = 1;
	h.class_id = rcu_flavor_class(flavor);
	h.acquire_ip = ip;
	return h;
}

static unsigned dependency_bit(const struct held_lock *held, enum acquire_op op)
{
	return (unsigned)held_read_recursive(held) << 1 | (unsigned)(op == ACQUIRE_RLOCK);
}

/* Whether held -> new is already in the graph with this kind of acquisition
 * (and, made by the program, as the program's). */
static int dependency_known(const struct held_lock *held, uint32_t class_id, enum acquire_op op,
			    int by_urcu_worker, uint32_t gate)
{
	const struct lock_dependency *d = find_dependency(held->class_id, class_id);
	return d && (d->types & (1u << dependency_bit(held, op))) && (by_urcu_worker || !d->urcu_workers_only) &&
	       (!d->gate || d->gate == gate);
}

/* The gate of the edge from held (lock_graph_gate()): none out of the
 * outermost lock itself. */
static uint32_t edge_gate(const struct thread_state *ts, const struct held_lock *held)
{
	return held != &ts->held[0] && held >= ts->held && held < ts->held + MAX_LOCK_DEPTH ? lock_graph_gate(ts) : 0;
}

/* Whether every edge of the path was only ever taken under `gate`. */
static int path_gated(const struct path_step *path, size_t n, uint32_t gate)
{
	if (!gate)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (dependencies[path[i].edge].gate != gate)
			return 0;
	return 1;
}

/* liburcu's own locks against grace periods: liburcu-cds's resize worker
 * (a thread liburcu starts) is an online QSBR reader when it takes its
 * hash table's resize mutex, and holds the mutex across synchronize_rcu();
 * with one such worker, and every other user of the mutex offline (the
 * documented rule for cds_lfht_resize(): never from a read side), a grace
 * period never waits for a reader blocked on it. So a cycle whose only
 * "read side -> liburcu's lock" edges come from liburcu's own threads is
 * liburcu's design, not reported (the built-in exemption docs/lock-order.md
 * lists); the same edge made by a program thread (cds_lfht_resize() from
 * an online QSBR thread) is the program's bug, and reported. */
static int reader_into_internal(uint32_t from, uint32_t to)
{
	return lock_classes[from].key_kind == CLASS_RCU_FLAVOR && lock_classes[to].urcu_internal;
}

static int cycle_is_liburcu_design(uint32_t held_class, uint32_t new_class, int by_urcu_worker,
				   const struct path_step *path, size_t n)
{
	int exempt = 0;
	if (reader_into_internal(held_class, new_class)) {
		if (!by_urcu_worker)
			return 0;
		exempt = 1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct lock_dependency *d = &dependencies[path[i].edge];
		if (reader_into_internal(d->from, d->to)) {
			if (!d->urcu_workers_only)
				return 0;
			exempt = 1;
		}
	}
	return exempt;
}

/* Whether the path passes through one of the classes in `classes`. */
static int path_visits(const struct path_step *path, size_t n, const uint32_t *classes, int nr_classes)
{
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < nr_classes; j++)
			if (dependencies[path[i].edge].to == classes[j])
				return 1;
	return 0;
}

/* A cycle through a subclass the validator gave a class nested in itself
 * through another: the subclass of one lock depends on the path that took
 * it (a pad nested through an encoder's lock on the buffer path, directly
 * on the event path), so such cycles are not the class order they look
 * like. They are judged by instances: the class pairs along them are
 * watched (every acquisition of one with the other held records its
 * instance pair and checks the inverse), and only two instances taken in
 * both orders are reported. */
static int cycle_through_auto_nested(uint32_t held_class, uint32_t new_class, const struct path_step *path, size_t n)
{
	if (lock_classes[held_class].auto_nested || lock_classes[new_class].auto_nested)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (lock_classes[dependencies[path[i].edge].to].auto_nested)
			return 1;
	return 0;
}

static void watch_class_pair(uint32_t a, uint32_t b);

static void watch_cycle(uint32_t held_class, uint32_t new_class, const struct path_step *path, size_t n)
{
	watch_class_pair(held_class, new_class);
	for (size_t i = 0; i < n; i++)
		watch_class_pair(dependencies[path[i].edge].from, dependencies[path[i].edge].to);
}

/* Under the graph lock: would held -> new close a cycle new -> ... -> held?
 * Returns 1 for a cycle to report: not reported before, and independent of
 * the cycles this acquisition closed already (its path does not go
 * through their held locks: A taken behind B and C, after A->B->C, closes
 * A->B->A, and A->B->C->A only through it), and not through a subclass of
 * automatic nesting (then *watched is set: judged by instances). Records the edge either way:
 * validation goes on after a report, so one stress run finds every bug. */
static int validate_dependency(const struct held_lock *held, uint32_t class_id, enum acquire_op op,
			       uint32_t stack, const uint32_t *cycle_classes, int nr_cycle_classes,
			       int by_urcu_worker, int *watched, uint32_t gate)
{
	int new_cycle = 0;
	unsigned bit = dependency_bit(held, op);
	struct lock_dependency *d = find_dependency(held->class_id, class_id);
	int ungated = d && d->gate && d->gate != gate;   /* taken under another gate, or none */
	if (ungated)
		d->gate = 0;
	/* An edge liburcu's threads made, now made by the program, is new to
	 * the cycle search (see cycle_is_liburcu_design()). */
	int now_the_programs = d && d->urcu_workers_only && !by_urcu_worker;
	if (now_the_programs)
		d->urcu_workers_only = 0;
	if (d && (d->types & (1u << bit)) && !now_the_programs && !ungated)
		return 0;
	int found = find_strong_path(class_id, op == ACQUIRE_RLOCK, held->class_id, held_read_recursive(held));
	if (found) {
		struct path_step path[MAX_PATH];
		size_t n = path_to(held->class_id, found - 1, path);
		if (n && cycle_through_auto_nested(held->class_id, class_id, path, n)) {
			watch_cycle(held->class_id, class_id, path, n);
			*watched = 1;
			found = 0;
			n = 0;
		}
		/* Every edge of it, and this one, only ever under one gate:
		 * the waits it needs can never be at once. */
		if (n && path_gated(path, n, gate) && (!d || d->gate == gate))
			n = 0;
		new_cycle = n && !path_visits(path, n - 1, cycle_classes, nr_cycle_classes) &&
			    !cycle_is_liburcu_design(held->class_id, class_id, by_urcu_worker, path, n) &&
			    report_cycle_once(cycle_key(held->class_id, class_id, path, n));
		for (size_t i = 0; new_cycle && i < n; i++)
			dependencies[path[i].edge].in_reported_cycle = 1;
	}
	if (!d)
		d = add_dependency(held->class_id, class_id, held, stack, by_urcu_worker, gate);
	if (d) {
		if (!d->types)
			d->sync = op == ACQUIRE_SYNC;
		d->types |= (uint8_t)(1u << bit);
		if (new_cycle)
			d->in_reported_cycle = 1;
	}
	return new_cycle;
}

/* The entries of this thread that the new lock depends on; the implicit
 * ones are built in `implicit` (NR_URCU_FLAVORS of them at most). */
static int dependency_sources(struct thread_state *ts, uint32_t class_id, struct held_lock *implicit,
			      struct held_lock **out, int max)
{
	int n = 0, nr_implicit = 0;
	if (qsbr_thread_is_reader(ts) && n < max) {
		implicit[nr_implicit] = implicit_reader_entry(FLAVOR_qsbr, registered_ip[FLAVOR_qsbr]);
		out[n++] = &implicit[nr_implicit++];
	}
	for (unsigned inl = urcu_readable_flavors ? inline_readers(ts) : 0; inl && n < max; inl &= inl - 1) {
		implicit[nr_implicit] = implicit_reader_entry((enum rcu_flavor)__builtin_ctz(inl), 0);
		out[n++] = &implicit[nr_implicit++];
	}
	for (unsigned i = 0; i < ts->depth && n < max; i++) {
		struct held_lock *h = &ts->held[i];
		if (h->kind == HELD_NONE)
			continue;
		uint32_t id = h->class_id ? h->class_id : held_class_lookup(h);
		/* Same class: recursion (core check) or instances (above). */
		if (id && id != class_id)
			out[n++] = h;
	}
	return n;
}

void lock_graph_check_instances(struct thread_state *ts, const void *lock, uint32_t class_id, uintptr_t ip,
				const struct instance_hint *hint, const struct lock_graph_sink *sink)
{
	uint32_t gen_new = hint->lock_generation ? hint->lock_generation : lock_instance_generation(lock);
	for (unsigned i = hint->held_index; i < ts->depth; i++) {
		const struct held_lock *h = &ts->held[i];
		if (h->kind != HELD_NONE && h->kind != HELD_RCU_READ && h->class_id == class_id && h->lock != lock)
			lock_graph_check_instance_pair(ts, h, i == hint->held_index ? hint->held_generation : 0,
						       lock, gen_new, class_id, ip, sink);
	}
}

/* ---- a class nested in itself through another ------------------------------ */

/* Held S (an instance), then G (another class), then another instance of S:
 * OpenSSL 3's parent and child provider stores, one class made at one site,
 * with the child's own lock between. Class by class that is the cycle S ->
 * G -> S (the kernel reports it, and wants a nesting annotation); the
 * instances make a hierarchy. Taken directly, two instances of one class
 * are checked as instances (instance_pairs.h); taken through G, the inner
 * one is taken as nested (the next subclass of S, as the annotation would
 * make it), and what that could hide, G's instance taken before that S
 * instance somewhere and after it elsewhere (the child's own gbl and store
 * inverted, whose class order S -> G the parent made first), is watched
 * instance by instance: the class pair (S, G) is marked, and every
 * acquisition of a G lock with an S lock held is checked against the
 * instance pairs recorded here. */
#define MAX_WATCHED_PAIRS 4096   /* power of two */
static uint64_t watched_pairs[MAX_WATCHED_PAIRS];
int lock_graph_watching;

/* A class's identity whatever its subclass. */
static uint64_t class_identity(uint32_t class_id)
{
	const struct lock_class *c = &lock_classes[class_id];
	return (uint64_t)c->key * 31 + c->key_kind;
}

static uint64_t watched_key(uint32_t held_class, uint32_t new_class)
{
	return chain_mix(class_identity(held_class), class_identity(new_class)) | 1;
}

/* Both orders of a class pair watched instance by instance. */
static void watch_class_pair(uint32_t a, uint32_t b)
{
	key_set_insert(watched_pairs, MAX_WATCHED_PAIRS, watched_key(a, b));
	key_set_insert(watched_pairs, MAX_WATCHED_PAIRS, watched_key(b, a));
	__atomic_store_n(&lock_graph_watching, 1, __ATOMIC_RELEASE);
}

/* Under the graph lock: whether every cycle the acquisition of `lock`
 * (class_id) closes is a nesting through another class: each source that
 * closes one has an instance of class_id held below it. 0 when none closes
 * a cycle, or one closes a cycle of its own. */
static int nested_through(struct thread_state *ts, const void *lock, uint32_t class_id, enum acquire_op op,
			  struct held_lock *const *sources, int nr_sources, uint64_t *closing)
{
	int nested = 0;
	*closing = 0;
	for (int i = 0; i < nr_sources && i < 64; i++) {
		const struct held_lock *h = sources[i];
		if (!find_strong_path(class_id, op == ACQUIRE_RLOCK, h->class_id, held_read_recursive(h)))
			continue;
		if (h < ts->held || h >= ts->held + MAX_LOCK_DEPTH)
			return 0;   /* an implicit read side: a cycle of its own */
		int below = 0;
		for (const struct held_lock *b = ts->held; b < h && !below; b++)
			below = b->kind != HELD_NONE && b->kind != HELD_RCU_READ && b->lock != lock &&
				class_identity(b->class_id) == class_identity(class_id);
		if (!below)
			return 0;
		*closing |= 1ull << i;
		nested = 1;
	}
	return nested;
}

/* What the validated-chain set holds for a chain whose new lock was taken
 * as nested, as subclass nested_class, with nothing new to add: the chain's
 * own key would skip the decision (lock_graph_validate()). */
static uint64_t nested_chain_key(uint64_t chain_key, uint32_t nested_class)
{
	return chain_mix(chain_key ^ 0x6e65737465640000ull, nested_class) | 1;
}

/* The subclass of class_id next to the ones this thread holds. */
static uint32_t next_nesting(struct thread_state *ts, uint32_t class_id)
{
	unsigned k = 1;
	for (int again = 1; again && k < MAX_LOCK_SUBCLASSES - 1;) {
		again = 0;
		uint32_t nested = lock_class_nested(class_id, k);
		for (unsigned i = 0; i < ts->depth && !again; i++)
			again = ts->held[i].kind != HELD_NONE && ts->held[i].class_id == nested;
		k += (unsigned)again;
	}
	return lock_class_nested(class_id, k);
}

/* Whether this thread holds another lock of class_id's class, any subclass
 * (TLS only: the test before any graph work). */
static int holds_other_instance(const struct thread_state *ts, const void *lock, uint32_t class_id)
{
	for (unsigned i = 0; i < ts->depth; i++) {
		const struct held_lock *h = &ts->held[i];
		if (h->kind != HELD_NONE && h->kind != HELD_RCU_READ && h->lock != lock && h->class_id &&
		    class_identity(h->class_id) == class_identity(class_id))
			return 1;
	}
	return 0;
}

void lock_graph_check_watched(struct thread_state *ts, const void *lock, uint32_t class_id, uint32_t generation,
			      uintptr_t ip, const struct lock_graph_sink *sink)
{
	tracer_enter(ts);
	uint32_t gen_new = generation ? generation : lock_instance_generation(lock);
	for (unsigned i = 0; i < ts->depth; i++) {
		const struct held_lock *h = &ts->held[i];
		if (h->kind != HELD_NONE && h->kind != HELD_RCU_READ && h->class_id && h->lock != lock &&
		    key_set_contains(watched_pairs, MAX_WATCHED_PAIRS, watched_key(h->class_id, class_id)) &&
		    lock_graph_check_instance_pair(ts, h, lock_instance_generation(h->lock), lock, gen_new,
						   class_id, ip, sink))
			ts->inversion_reported = 1;
	}
	tracer_leave(ts);
}

/* Class pairs just watched: the threads' acquisition caches drop what they
 * validated before, which answered without the instance check (it skips
 * lock_graph_check_watched()); each acquisition of a watched pair is
 * checked, and its instance order recorded, before the cache may answer
 * it again. Else an order cached before the watching, taken again, was
 * never recorded, and its inverse went unreported (the differential test
 * lock_order/fast_paths_report_what_the_general_path_reports). Outside
 * the graph lock: the epoch has a lock of its own. */
static void watching_started(void)
{
	lock_instance_epoch_advance();
}

/* The nesting decided: (S, G) watched, and each pair held G -> new S
 * checked and recorded like any watched pair (an inverse recorded before,
 * once the pair was watched, is reported here; one taken before any
 * watching was not recorded: the class order S -> G it made was then
 * all there was to see). */
static void watch_nesting(struct thread_state *ts, const void *lock, uint32_t class_id, uintptr_t ip,
			  struct held_lock *const *sources, uint64_t closing, int nr_sources,
			  const struct lock_graph_sink *sink)
{
	uint32_t gen_new = lock_instance_generation(lock);
	for (int i = 0; i < nr_sources && i < 64; i++) {
		if (!(closing >> i & 1))
			continue;
		const struct held_lock *g = sources[i];
		key_set_insert(watched_pairs, MAX_WATCHED_PAIRS, watched_key(class_id, g->class_id));
		__atomic_store_n(&lock_graph_watching, 1, __ATOMIC_RELEASE);
		lock_graph_check_instance_pair(ts, g, lock_instance_generation(g->lock), lock, gen_new, class_id, ip,
					       sink);
	}
	watching_started();
}

uint32_t lock_graph_validate(struct thread_state *ts, const void *lock, uint32_t class_id,
			     enum acquire_op op, uintptr_t ip, uint64_t chain_key,
			     const struct lock_graph_sink *sink)
{
	if (!tracer_checking() || TRACER_WARN_ON(class_id >= lock_classes_count()))
		return class_id;
	tracer_enter(ts);
	int nested = 0;
	if (chain_is_validated(chain_key))
		goto out;
	struct held_lock implicit[NR_URCU_FLAVORS], *sources[MAX_LOCK_DEPTH + NR_URCU_FLAVORS];
	int nr_sources = dependency_sources(ts, class_id, implicit, sources, MAX_LOCK_DEPTH + NR_URCU_FLAVORS);

	/* A class nested in itself through another: taken as nested. */
	if (op != ACQUIRE_SYNC && !ts->in_urcu && holds_other_instance(ts, lock, class_id)) {
		/* Decided before for these held locks, with nothing new to add:
		 * the same subclass (next_nesting() depends on the held classes
		 * alone, which the chain's key holds). */
		uint32_t candidate = next_nesting(ts, class_id);
		if (candidate != class_id && chain_is_validated(nested_chain_key(chain_key, candidate))) {
			class_id = candidate;
			goto out;
		}
		uint64_t closing;   /* sources that close a cycle: a bit each (MAX_LOCK_DEPTH + flavors < 64) */
		if (!tracer_lock_acquire(&graph, ts))
			goto out;
		nested = nested_through(ts, lock, class_id, op, sources, nr_sources, &closing);
		tracer_lock_release(&graph);
		uint32_t nested_class = nested ? next_nesting(ts, class_id) : 0;
		if (nested_class && nested_class != class_id) {
			__atomic_store_n(&lock_classes[nested_class].auto_nested, 1, __ATOMIC_RELAXED);
			watch_nesting(ts, lock, class_id, ip, sources, closing, nr_sources, sink);
			class_id = nested_class;
			nr_sources = dependency_sources(ts, class_id, implicit, sources,
							MAX_LOCK_DEPTH + NR_URCU_FLAVORS);
		} else {
			nested = 0;   /* no subclass to be had (the class table full): as before */
		}
	}

	/* Is anything new? Most misses of the chain set are chains whose
	 * edges all exist already (a new combination of known orders). */
	if (!tracer_lock_acquire(&graph, ts))
		goto out;   /* a handler interrupted our own validation */
	int any_new = 0;
	for (int i = 0; i < nr_sources && !any_new; i++)
		any_new = !dependency_known(sources[i], class_id, op, ts->urcu_worker, edge_gate(ts, sources[i]));
	if (!any_new) {
		/* A nesting goes in under a key of its own (nested_chain_key()):
		 * the chain's key validated would skip the decision next time, and
		 * the lock be taken as its own class (GStreamer's pad locks along
		 * a pipeline: a false cycle from the third buffer). */
		key_cache_insert(validated_chains, MAX_LOCKDEP_CHAINS,
				 nested ? nested_chain_key(chain_key, class_id) : chain_key);
		tracer_lock_release(&graph);
		goto out;
	}
	tracer_lock_release(&graph);

	/* New edges: their stack, captured outside the lock. */
	uintptr_t frames[DEPENDENCY_FRAMES];
	uint32_t stack = stack_depot_save(frames, backtrace_capture(frames, DEPENDENCY_FRAMES));

	struct lock_cycle cycles[MAX_CYCLES_PER_ACQUISITION];
	uint32_t cycle_classes[MAX_CYCLES_PER_ACQUISITION];
	int nr_cycles = 0;
	if (!tracer_lock_acquire(&graph, ts))
		goto out;
	/* Outermost first: when paths overlap, the cycle through the outer
	 * lock is the smaller one (A->B->A before A->B->C->A). */
	int watched = 0;
	for (int i = 0; i < nr_sources; i++)
		if (validate_dependency(sources[i], class_id, op, stack, cycle_classes, nr_cycles, ts->urcu_worker,
					&watched, edge_gate(ts, sources[i])) &&
		    nr_cycles < MAX_CYCLES_PER_ACQUISITION) {
			cycle_classes[nr_cycles] = sources[i]->class_id;
			cycles[nr_cycles++] = (struct lock_cycle){ sources[i], { 0 }, lock, class_id, op, ip, stack };
		}
	/* A nesting is decided each time (the chain's key is of the class
	 * before it). */
	if (!nested)
		key_cache_insert(validated_chains, MAX_LOCKDEP_CHAINS, chain_key);
	tracer_lock_release(&graph);
	/* A cycle judged by instances: this acquisition's own pairs now (the
	 * watching starts with it). */
	if (watched) {
		watching_started();
		lock_graph_check_watched(ts, lock, class_id, 0, ip, sink);
	}

	/* Every cycle this acquisition closes is a deadlock of its own. Its
	 * site is the program's call (liburcu's lock-free hash table takes
	 * locks on the program's behalf). */
	uintptr_t site = nr_cycles ? urcu_program_site(ip) : ip;
	if (ts->inversion_reported)
		nr_cycles = 0;   /* the same bug, reported by its instances */
	for (int i = 0; i < nr_cycles; i++) {
		cycles[i].ip = site;
		if (cycles[i].held >= implicit && cycles[i].held < implicit + NR_URCU_FLAVORS) {
			cycles[i].implicit = *cycles[i].held;
			cycles[i].held = &cycles[i].implicit;
		}
		sink->cycle(ts, &cycles[i]);
	}
	/* A new dependency may join a signal-safe lock to a signal-unsafe one
	 * (the kernel's check_irq_usage() in check_prev_add()). */
	void (*hook)(struct thread_state *, const void *, uint32_t, uintptr_t) =
		__atomic_load_n(&lock_graph_new_dependency_hook, __ATOMIC_ACQUIRE);
	if (hook)
		hook(ts, lock, class_id, ip);
out:
	tracer_leave(ts);
	return class_id;
}
