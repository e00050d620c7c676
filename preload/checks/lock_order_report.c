/* The splats of lock-order bugs the graph finds (graph/lock_graph.h):
 * kernel lockdep's print_circular_bug(), in its words, for a cycle of
 * classes and for two instances of one class taken in both orders. The
 * graph describes; this prints. */
#include <string.h>
#include "checks/lock_order_report.h"
#include "base/options.h"
#include "graph/instance_pairs.h"
#include "report/report.h"
#include "unwind/stack_depot.h"

static const char *op_name(int read, int sync)
{
	return sync ? "sync" : read ? "rlock" : "lock";
}

static void report_frames(uint32_t stack)
{
	const uintptr_t *frames;
	size_t n = stack_depot_fetch(stack, &frames);
	for (size_t i = 0; i < n && i < (size_t)tracer_options.max_frames; i++) {
		report_printf("       ");
		report_symbolized_ip(frames[i]);
		report_printf("\n");
	}
}

static void class_name(uint32_t class_id, char *buf, size_t size)
{
	lock_class_name(class_id, buf, size);
}

/* The current thread holds P (class of c->held) and acquires N (c->class_id);
 * the path goes N -> ... -> P in the existing graph. */
static void print_circular_bug_body(struct thread_state *ts, void *arg)
{
	const struct lock_cycle *c = arg;
	const struct held_lock *held = c->held;
	/* Copied before anything is named (the report lock serializes reports). */
	static struct lock_cycle_edge edges[LOCK_CYCLE_MAX_EDGES];
	size_t path_len = lock_graph_cycle_path(ts, c, edges, LOCK_CYCLE_MAX_EDGES);
	char n_name[256], p_name[256], x_name[256], name[256];
	class_name(c->class_id, n_name, sizeof(n_name));
	class_name(held->class_id, p_name, sizeof(p_name));
	report_record_site(c->ip, NULL, 0);
	report_record_lock("acquiring", c->lock, n_name, op_name(c->op == ACQUIRE_RLOCK, c->op == ACQUIRE_SYNC), 0);
	report_record_lock("holding", held->lock, p_name, op_name(held_read_recursive(held), 0), held->acquire_ip);
	/* The existing chain, from the lock being acquired to the one held. */
	report_record_lock("chain", NULL, n_name, op_name(c->op == ACQUIRE_RLOCK, c->op == ACQUIRE_SYNC), 0);
	for (size_t i = 0; i < path_len; i++) {
		lock_class_name(edges[i].to, name, sizeof(name));
		report_record_lock("chain", NULL, name, op_name(edges[i].acquired_read, edges[i].sync), 0);
	}
	report_printf("%s is trying to acquire lock:\n", report_task_name());
	report_printf("%016lx (%s), at: ", (unsigned long)c->lock, n_name);
	report_symbolized_ip(c->ip);
	report_printf("\n\nbut task is already holding lock:\n");
	if (held->kind == HELD_RCU_READ && held_flavor(held) != FLAVOR_srcu)
		report_printf("(%s), at: ", p_name);
	else
		report_printf("%016lx (%s), at: ", (unsigned long)held->lock, p_name);
	if (held->acquire_ip)
		report_symbolized_ip(held->acquire_ip);
	else
		report_printf("(an inlined read side: where it began is not known)");
	report_printf("\n\nwhich lock already depends on the new lock.\n\n");
	report_printf("\nthe existing dependency chain (in reverse order) is:\n");
	for (size_t i = path_len; i > 0; i--) {
		const struct lock_cycle_edge *d = &edges[i - 1];
		class_name(d->to, name, sizeof(name));
		report_printf("\n-> #%zu (%s){%s}:\n", i, name, op_name(d->acquired_read, d->sync));
		report_frames(d->stack);
	}
	report_printf("\n-> #0 (%s){%s}:\n", n_name, op_name(c->op == ACQUIRE_RLOCK, c->op == ACQUIRE_SYNC));
	report_frames(c->stack);

	report_printf("\nother info that might help us debug this:\n\n");
	if (path_len) {
		/* The last edge of the path: X held, P acquired. */
		const struct lock_cycle_edge *last = &edges[path_len - 1];
		int x_held_read = last->held_read;
		int p_acquired_read = last->acquired_read;
		class_name(last->from, x_name, sizeof(x_name));
		if (path_len > 1)
			report_printf("Chain exists of:\n  %s --> %s --> %s\n\n", n_name, x_name, p_name);
		report_printf(" Possible unsafe locking scenario:\n\n");
		report_printf("       CPU0                    CPU1\n");
		report_printf("       ----                    ----\n");
		report_printf("  %s(%s);\n", op_name(held_read_recursive(held), 0), p_name);
		report_printf("                               %s(%s);\n", op_name(x_held_read, 0), x_name);
		report_printf("                               %s(%s);\n", op_name(p_acquired_read, last->sync), p_name);
		report_printf("  %s(%s);\n", op_name(c->op == ACQUIRE_RLOCK, c->op == ACQUIRE_SYNC), n_name);
		report_printf("\n *** DEADLOCK ***\n\n");
	}
	report_held_locks(ts);
	report_backtrace();
}

static void print_circular_bug(struct thread_state *ts, const struct lock_cycle *c)
{
	report_emit(ts, REPORT_CIRCULAR_DEPENDENCY, 0, report_title_format[REPORT_TITLE_CIRCULAR_DEPENDENCY],
		    print_circular_bug_body, (void *)c);
}

/* Two instances of one class taken in both orders (x then y here, y then x
 * somewhere else): address-ordered locking never does that. */
static void print_instance_inversion_body(struct thread_state *ts, void *arg)
{
	const struct lock_instance_inversion *v = arg;
	const struct held_lock *held = v->held;
	char name[256], held_name[256];
	class_name(v->class_id, name, sizeof(name));
	/* Of one class, but for a pair watched across two (a nesting through
	 * another class, above). */
	class_name(held->class_id ? held->class_id : v->class_id, held_name, sizeof(held_name));
	report_record_site(v->ip, NULL, 0);
	report_record_lock("acquiring", v->lock, name, "lock", 0);
	report_record_lock("holding", held->lock, held_name, "lock", held->acquire_ip);
	report_record_lock("chain", NULL, name, "lock", 0);
	report_record_lock("chain", NULL, held_name, "lock", 0);
	report_printf("%s is trying to acquire lock:\n", report_task_name());
	report_printf("%016lx (%s), at: ", (unsigned long)v->lock, name);
	report_symbolized_ip(v->ip);
	report_printf("\n\nbut task is already holding lock:\n");
	report_printf("%016lx (%s), at: ", (unsigned long)held->lock, held_name);
	report_symbolized_ip(held->acquire_ip);
	if (!strcmp(name, held_name))
		report_printf("\n\nwhich lock already depends on the new lock: these two locks of class %s\n"
			      "were taken in the opposite order before (%016lx then %016lx).\n",
			      name, (unsigned long)v->lock, (unsigned long)held->lock);
	else
		report_printf("\n\nwhich lock already depends on the new lock: these two locks (of classes %s\n"
			      "and %s) were taken in the opposite order before (%016lx then %016lx).\n",
			      name, held_name, (unsigned long)v->lock, (unsigned long)held->lock);
	/* The kernel's chain, one edge each way between two instances of the
	 * class (named by class, as the records and the other chains are): #1
	 * the order taken before, where its second lock was taken (the caller
	 * of the lock call, or pair_frames frames), #0 this one. */
	report_printf("\n\nthe existing dependency chain (in reverse order) is:\n");
	report_printf("\n-> #1 (%s){lock}:\n", held_name);
	if ((v->other_where & ~PAIR_WHERE_ADDRESS_MASK) == PAIR_WHERE_IP) {
		report_printf("       ");
		report_symbolized_ip((uintptr_t)(v->other_where & PAIR_WHERE_ADDRESS_MASK));
		report_printf("\n       (the caller of the lock call only: pair_frames=8 in LOCKDEP_RCU_OPTIONS keeps 8 frames)\n");
	} else if (v->other_where) {
		report_frames((uint32_t)v->other_where);
	} else {
		report_printf("       (not known: its record was being rewritten)\n");
	}
	report_printf("\n-> #0 (%s){lock}:\n", name);
	if (v->stack) {
		report_frames(v->stack);
	} else {
		report_printf("       ");
		report_symbolized_ip(v->ip);
		report_printf("\n");
	}
	report_printf("\nother info that might help us debug this:\n\n");
	report_printf(" Possible unsafe locking scenario:\n\n");
	report_printf("       CPU0                    CPU1\n");
	report_printf("       ----                    ----\n");
	report_printf("  lock(%s#%016lx);\n", held_name, (unsigned long)held->lock);
	report_printf("                               lock(%s#%016lx);\n", name, (unsigned long)v->lock);
	report_printf("                               lock(%s#%016lx);\n", held_name, (unsigned long)held->lock);
	report_printf("  lock(%s#%016lx);\n", name, (unsigned long)v->lock);
	report_printf("\n *** DEADLOCK ***\n\n");
	report_held_locks(ts);
	report_backtrace();
}

static void print_instance_inversion(struct thread_state *ts, const struct lock_instance_inversion *v)
{
	report_emit(ts, REPORT_CIRCULAR_DEPENDENCY, 0, report_title_format[REPORT_TITLE_CIRCULAR_DEPENDENCY],
		    print_instance_inversion_body, (void *)v);
}

const struct lock_graph_sink lock_order_reports = {
	.cycle = print_circular_bug,
	.instance_inversion = print_instance_inversion,
};
