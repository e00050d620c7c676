/* The signal usage checks (check_signal_usage.h) and their two reports,
 * print_usage_bug() and print_irq_inversion_bug() after the kernel's.
 * The usage table is written with atomic ORs, without a lock: a usage is
 * new for exactly one thread, which then checks it and saves its stack. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "checks/check_signal_usage.h"
#include "unwind/backtrace.h"
#include "base/key_set.h"
#include "graph/lock_graph.h"
#include "base/options.h"
#include "report/report.h"
#include "runtime/signal_state.h"
#include "checks/signal_usage.h"
#include "runtime/tracer_stack.h"
#include "unwind/stack_depot.h"
#include "runtime/log_output.h"

#define USAGE_FRAMES 16

/* Per class, per usage, the signals (bit signo-1) it was seen with. */
struct class_signal_usage {
	uint64_t signals[NR_SIGNAL_USAGE];
	uint8_t listed_safe;        /* in signal_safe_classes[] */
};
static struct class_signal_usage class_usage[MAX_LOCK_CLASSES];

static uint32_t signal_safe_classes[MAX_SIGNAL_SAFE_CLASSES];
static uint32_t nr_signal_safe_classes;

/* (class, signal, usage) -> stack depot id of its first occurrence. The
 * key is claimed with a compare-and-swap, the stack stored after it (a
 * reader racing with the store sees no stack yet). */
struct usage_trace {
	uint64_t key;
	uint32_t stack;
};
static struct usage_trace usage_traces[MAX_SIGNAL_USAGE_TRACES];

/* Reports made: inversions by (safe class, unsafe class, signal),
 * inconsistent states by (class, signal, usage in the handler). */
#define MAX_REPORTED_INVERSIONS 4096
static uint64_t reported_inversions[MAX_REPORTED_INVERSIONS];

static uint64_t trace_key(uint32_t class_id, int signo, enum signal_usage_bit u)
{
	return ((uint64_t)class_id << 16 | (uint64_t)signo << 8 | (uint64_t)u) + 1;
}

static void save_usage_trace(uint32_t class_id, int signo, enum signal_usage_bit u, uint32_t stack)
{
	uint64_t key = trace_key(class_id, signo, u);
	uint32_t h = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 40);
	for (uint32_t probe = 0; probe < 64; probe++) {
		struct usage_trace *t = &usage_traces[(h + probe) & (MAX_SIGNAL_USAGE_TRACES - 1)];
		uint64_t expected = 0;
		if (__atomic_compare_exchange_n(&t->key, &expected, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
		    expected == key) {
			__atomic_store_n(&t->stack, stack, __ATOMIC_RELEASE);
			return;
		}
	}
	log_output_limit_once("MAX_SIGNAL_USAGE_TRACES too low!", "signal usages are kept without their stacks");
}

static uint32_t usage_trace(uint32_t class_id, int signo, enum signal_usage_bit u)
{
	uint64_t key = trace_key(class_id, signo, u);
	uint32_t h = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 40);
	for (uint32_t probe = 0; probe < 64; probe++) {
		const struct usage_trace *t = &usage_traces[(h + probe) & (MAX_SIGNAL_USAGE_TRACES - 1)];
		uint64_t cur = __atomic_load_n(&t->key, __ATOMIC_ACQUIRE);
		if (cur == key)
			return __atomic_load_n(&t->stack, __ATOMIC_ACQUIRE);
		if (!cur)
			return 0;
	}
	return 0;
}

/* The usages of class_id with signal signo, as USAGE_BIT()s. */
static unsigned usages_with(uint32_t class_id, int signo)
{
	unsigned bits = 0;
	for (int u = 0; u < NR_SIGNAL_USAGE; u++)
		if (__atomic_load_n(&class_usage[class_id].signals[u], __ATOMIC_ACQUIRE) & signal_bit(signo))
			bits |= USAGE_BIT(u);
	return bits;
}

static const char *held_kind_text(enum held_kind kind)
{
	switch (kind) {
	case HELD_MUTEX: return "mutex";
	case HELD_RWLOCK_READ: return "rwlock-read";
	case HELD_RWLOCK_WRITE: return "rwlock-write";
	case HELD_SPIN: return "spinlock";
	default: return "lock";
	}
}

static const char *held_type_name(enum held_kind kind)
{
	switch (kind) {
	case HELD_MUTEX: return "pthread_mutex_t";
	case HELD_SPIN: return "pthread_spinlock_t";
	default: return "pthread_rwlock_t";
	}
}

/* How a usage takes the lock, in the scenario tables. */
static const char *usage_op(enum signal_usage_bit u)
{
	return u & SIGNAL_USAGE_READ ? "rlock" : "lock";
}

static void print_trace(uint32_t stack, const char *indent)
{
	const uintptr_t *frames;
	size_t n = stack_depot_fetch(stack, &frames);
	if (!n)
		report_printf("%s(its stack was not saved)\n", indent);
	for (size_t i = 0; i < n && i < (size_t)tracer_options.max_frames; i++) {
		report_printf("%s", indent);
		report_symbolized_ip(frames[i]);
		report_printf("\n");
	}
}

static uintptr_t first_frame(uint32_t stack)
{
	const uintptr_t *frames;
	return stack_depot_fetch(stack, &frames) ? frames[0] : 0;
}

/* ---- inconsistent lock state ----------------------------------------------- */

struct usage_bug {
	const void *lock;
	uint32_t class_id;
	enum held_kind kind;
	int signo;
	enum signal_usage_bit new_usage, prev_usage;
	uintptr_t ip;
	int in_signal;              /* the handler running, or 0 */
};

static void print_usage_bug_body(struct thread_state *ts, void *arg)
{
	const struct usage_bug *b = arg;
	char name[256], sig[32];
	report_lock_name(b->lock, b->class_id, held_type_name(b->kind), name, sizeof(name));
	signal_name(b->signo, sig, sizeof(sig));
	uint32_t prev_stack = usage_trace(b->class_id, b->signo, b->prev_usage);
	int in_handler = !(b->new_usage & SIGNAL_USAGE_DIR);
	report_record_site(b->ip, NULL, 0);
	report_record_lock("acquiring", b->lock, name, signal_usage_name(b->new_usage), 0);
	report_record_lock("usage", NULL, name, signal_usage_name(b->prev_usage), first_frame(prev_stack));

	report_printf("inconsistent {%s} -> {%s} usage.\n", signal_usage_name(b->prev_usage),
		      signal_usage_name(b->new_usage));
	char running[32];
	if (in_handler)
		report_printf("%s [in the handler of %s] takes:\n", report_task_name(), sig);
	else if (b->in_signal)
		report_printf("%s [in the handler of %s, %s not blocked] takes:\n", report_task_name(),
			      signal_name(b->in_signal, running, sizeof(running)), sig);
	else
		report_printf("%s [%s not blocked] takes:\n", report_task_name(), sig);
	report_printf("%016lx (%s){%s}, at: ", (unsigned long)b->lock, name, held_kind_text(b->kind));
	report_symbolized_ip(b->ip);
	report_printf("\n{%s} state was registered at:\n", signal_usage_name(b->prev_usage));
	print_trace(prev_stack, "  ");
	report_printf("\n%s's handler takes %s, which is also taken with %s not blocked: if %s lands\n"
		      "while a thread holds it, the handler waits for a lock its own thread holds.\n", sig, name,
		      sig, sig);
	report_printf("\nother info that might help us debug this:\n");
	enum signal_usage_bit outside = in_handler ? b->prev_usage : b->new_usage;
	enum signal_usage_bit inside = in_handler ? b->new_usage : b->prev_usage;
	report_printf(" Possible unsafe locking scenario:\n\n");
	report_printf("       CPU0\n");
	report_printf("       ----\n");
	report_printf("  %s(%s);\n", usage_op(outside), name);
	report_printf("  <Interrupt: %s>\n", sig);
	report_printf("    %s(%s);\n", usage_op(inside), name);
	report_printf("\n *** DEADLOCK ***\n\n");
	report_held_locks(ts);
	report_backtrace();
}

static void print_usage_bug(struct thread_state *ts, const struct usage_bug *b)
{
	/* Two threads adding the two usages at once may each see the other's:
	 * one report per (class, signal, write or read in the handler). */
	enum signal_usage_bit inside = b->new_usage & SIGNAL_USAGE_DIR ? b->prev_usage : b->new_usage;
	uint64_t key = ((uint64_t)b->class_id << 16 | (uint64_t)b->signo << 8 | (uint64_t)inside | 0x80) *
		       0x9E3779B97F4A7C15ull;
	if (key_set_insert(reported_inversions, MAX_REPORTED_INVERSIONS, key | 1) != 2)
		return;
	report_emit(ts, REPORT_INCONSISTENT_LOCK_STATE, 0, report_title_format[REPORT_TITLE_INCONSISTENT_LOCK_STATE], print_usage_bug_body,
		    (void *)b);
}

/* ---- irq lock inversion --------------------------------------------------------- */

struct inversion_bug {
	const void *lock;
	uint32_t class_id;          /* the lock whose state just changed */
	enum held_kind kind;
	int signo;
	enum signal_usage_bit new_usage;
	uintptr_t ip;
	int forwards;               /* this lock is the safe one */
	uint32_t other;             /* the lock at the other end */
	struct dependency_step path[MAX_DEPENDENCY_PATH];   /* safe -> ... -> unsafe */
	size_t path_len;
};

static void print_class_usages(uint32_t class_id, int signo)
{
	char name[256];
	lock_class_name(class_id, name, sizeof(name));
	report_printf("-> (%s) {\n", name);
	unsigned bits = usages_with(class_id, signo);
	for (int u = 0; u < NR_SIGNAL_USAGE; u++)
		if (bits & USAGE_BIT(u)) {
			report_printf("   %s at:\n", signal_usage_name((enum signal_usage_bit)u));
			print_trace(usage_trace(class_id, signo, (enum signal_usage_bit)u), "      ");
		}
	report_printf(" }\n");
}

/* The kernel's print_shortest_lock_dependencies(): from the other lock to
 * this one, each class with its usages and where it was taken behind the
 * previous one on the path. */
static void print_shortest_dependencies(const struct inversion_bug *v)
{
	report_printf("\nthe shortest dependencies between 2nd lock and 1st lock:\n");
	if (v->forwards) {
		for (size_t i = v->path_len; i > 0; i--) {
			print_class_usages(v->path[i - 1].to, v->signo);
			report_printf(" ... acquired at:\n");
			print_trace(v->path[i - 1].stack, "      ");
			report_printf("\n");
		}
		print_class_usages(v->class_id, v->signo);
	} else {
		for (size_t i = 0; i < v->path_len; i++) {
			print_class_usages(v->path[i].from, v->signo);
			report_printf(" ... acquired at (taking the next one):\n");
			print_trace(v->path[i].stack, "      ");
			report_printf("\n");
		}
		print_class_usages(v->class_id, v->signo);
	}
}

static void print_irq_inversion_body(struct thread_state *ts, void *arg)
{
	const struct inversion_bug *v = arg;
	char name[256], other[256], safe[256], unsafe[256], middle[256], sig[32];
	report_lock_name(v->lock, v->class_id, held_type_name(v->kind), name, sizeof(name));
	lock_class_name(v->other, other, sizeof(other));
	signal_name(v->signo, sig, sizeof(sig));
	snprintf(safe, sizeof(safe), "%s", v->forwards ? name : other);
	snprintf(unsafe, sizeof(unsafe), "%s", v->forwards ? other : name);
	/* The first lock after the safe one on the path (the kernel's middle
	 * class): what the safe lock's holder waits for. */
	if (v->path_len)
		lock_class_name(v->path[0].to, middle, sizeof(middle));
	else
		snprintf(middle, sizeof(middle), "%s", unsafe);
	/* The lock whose state changed and the one at the other end: what the
	 * text names too, so logs without records group the same. */
	report_record_site(v->ip, NULL, 0);
	report_record_lock("acquiring", v->lock, name, signal_usage_name(v->new_usage), 0);
	report_record_lock("chain", NULL, other, v->forwards ? "signal-unsafe" : "signal-safe", 0);

	report_printf("%s just changed the state of lock:\n", report_task_name());
	report_printf("%016lx (%s){%s}, at: ", (unsigned long)v->lock, name, held_kind_text(v->kind));
	report_symbolized_ip(v->ip);
	if (v->forwards)
		report_printf("\nbut this lock took another, %s-unsafe lock in the past:\n", sig);
	else
		report_printf("\nbut this lock was taken by another, %s-safe lock in the past:\n", sig);
	report_printf(" (%s)\n\nand interrupts could create inverse lock ordering between them.\n\n", other);
	report_printf("%s is taken in %s's handler; %s, taken while %s is held, is taken elsewhere with\n"
		      "%s not blocked: the handler, landing while %s is held there, waits for %s,\n"
		      "whose holder waits for %s.\n", safe, sig, unsafe, safe, sig, unsafe, safe, unsafe);
	report_printf("\nother info that might help us debug this:\n");
	report_printf(" Possible interrupt unsafe locking scenario:\n\n");
	report_printf("       CPU0                    CPU1\n");
	report_printf("       ----                    ----\n");
	report_printf("  lock(%s);\n", unsafe);
	report_printf("                               block(%s);\n", sig);
	report_printf("                               lock(%s);\n", safe);
	report_printf("                               lock(%s);\n", middle);
	report_printf("  <Interrupt: %s>\n", sig);
	report_printf("    lock(%s);\n", safe);
	report_printf("\n *** DEADLOCK ***\n\n");
	report_held_locks(ts);
	print_shortest_dependencies(v);
	report_backtrace();
}

static void print_irq_inversion_bug(struct thread_state *ts, const struct inversion_bug *v)
{
	uint32_t safe = v->forwards ? v->class_id : v->other, unsafe = v->forwards ? v->other : v->class_id;
	uint64_t key = ((uint64_t)safe << 32 | unsafe) * 0x9E3779B97F4A7C15ull ^ (uint64_t)v->signo;
	if (key_set_insert(reported_inversions, MAX_REPORTED_INVERSIONS, key | 1) != 2)
		return;
	report_emit(ts, REPORT_IRQ_LOCK_INVERSION, 0, report_title_format[REPORT_TITLE_IRQ_LOCK_INVERSION],
		    print_irq_inversion_body, (void *)v);
}

/* ---- searching the graph ----------------------------------------------------------- */

/* A lock its holder can hold with the signal deliverable, reached by an
 * acquisition that waits for such a holder: a write usage waits for any
 * holder, a recursive read only for a writer. */
struct unsafe_match {
	int signo;
	uint32_t only;              /* 0: any class; else just this one */
	int new_read;               /* `only`'s new usage is a read */
};

static int is_signal_unsafe(uint32_t class_id, int taken_for_read, void *arg)
{
	const struct unsafe_match *m = arg;
	uint64_t bit = signal_bit(m->signo);
	if (m->only)
		return class_id == m->only && (!m->new_read || !taken_for_read);
	const struct class_signal_usage *u = &class_usage[class_id];
	return (__atomic_load_n(&u->signals[SIGNAL_ON_W], __ATOMIC_ACQUIRE) & bit) ||
	       (!taken_for_read && (__atomic_load_n(&u->signals[SIGNAL_ON_R], __ATOMIC_ACQUIRE) & bit));
}

/* From a safe class: held for a recursive read in the handler only, its
 * holder elsewhere blocks the handler only while holding it for write. */
static int held_for_read_only(uint32_t class_id, int signo)
{
	unsigned bits = usages_with(class_id, signo);
	return !(bits & USAGE_BIT(USED_IN_SIGNAL_W));
}

/* check_usage_forwards(): class_id just became signo-safe. */
static void check_usage_forwards(struct thread_state *ts, struct inversion_bug *v)
{
	struct unsafe_match m = { v->signo, 0, 0 };
	v->forwards = 1;
	v->other = lock_graph_find_forwards(ts, v->class_id, held_for_read_only(v->class_id, v->signo),
					    is_signal_unsafe, &m, v->path, &v->path_len);
	if (v->other)
		print_irq_inversion_bug(ts, v);
}

/* check_usage_backwards(): class_id just became signo-unsafe; the graph
 * has out-edges only, so search forwards from each safe class. */
static void check_usage_backwards(struct thread_state *ts, struct inversion_bug *v)
{
	struct unsafe_match m = { v->signo, v->class_id, v->new_usage & SIGNAL_USAGE_READ };
	v->forwards = 0;
	uint32_t n = __atomic_load_n(&nr_signal_safe_classes, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n && i < MAX_SIGNAL_SAFE_CLASSES; i++) {
		uint32_t safe = __atomic_load_n(&signal_safe_classes[i], __ATOMIC_ACQUIRE);
		if (!safe || safe == v->class_id ||
		    !(usages_with(safe, v->signo) & (USAGE_BIT(USED_IN_SIGNAL_W) | USAGE_BIT(USED_IN_SIGNAL_R))))
			continue;
		if (lock_graph_find_forwards(ts, safe, held_for_read_only(safe, v->signo), is_signal_unsafe, &m,
					     v->path, &v->path_len)) {
			v->other = safe;
			print_irq_inversion_bug(ts, v);
			return;
		}
	}
}

/* ---- marking ------------------------------------------------------------------------- */

static void remember_signal_safe(uint32_t class_id)
{
	if (__atomic_exchange_n(&class_usage[class_id].listed_safe, 1, __ATOMIC_ACQ_REL))
		return;
	uint32_t i = __atomic_fetch_add(&nr_signal_safe_classes, 1, __ATOMIC_ACQ_REL);
	if (i < MAX_SIGNAL_SAFE_CLASSES)
		__atomic_store_n(&signal_safe_classes[i], class_id, __ATOMIC_RELEASE);
	else
		log_output_limit_once("MAX_SIGNAL_SAFE_CLASSES too low!",
				  "locks taken in signal handlers beyond it are not checked against the graph");
}

/* One usage new for (class, signo): saved, then checked like
 * mark_lock_irq(): the class's own usages first, the graph if they agree. */
static void mark_signal_usage(struct thread_state *ts, const void *lock, uint32_t class_id, enum held_kind kind,
			      int signo, enum signal_usage_bit u, uintptr_t ip, uint32_t stack)
{
	uint64_t bit = signal_bit(signo);
	uint64_t was = __atomic_fetch_or(&class_usage[class_id].signals[u], bit, __ATOMIC_ACQ_REL);
	if (was & bit)
		return;   /* another thread marked it first */
	save_usage_trace(class_id, signo, u, stack);
	int in_handler = !(u & SIGNAL_USAGE_DIR);
	if (in_handler)
		remember_signal_safe(class_id);
	int conflict = signal_usage_first_conflict(u, usages_with(class_id, signo));
	if (conflict >= 0) {
		struct usage_bug b = { lock, class_id, kind, signo, u, (enum signal_usage_bit)conflict, ip,
				       signal_current_handler(signal_context()) };
		print_usage_bug(ts, &b);
		return;
	}
	struct inversion_bug v = { .lock = lock, .class_id = class_id, .kind = kind, .signo = signo,
				   .new_usage = u, .ip = ip };
	if (in_handler)
		check_usage_forwards(ts, &v);
	else
		check_usage_backwards(ts, &v);
}

static __attribute__((noinline, cold)) void mark_new_usages(struct thread_state *ts, const void *lock,
							    uint32_t class_id, enum held_kind kind,
							    enum signal_usage_bit in_usage, uint64_t new_in,
							    enum signal_usage_bit on_usage, uint64_t new_on, uintptr_t ip)
{
	tracer_enter(ts);
	uintptr_t frames[USAGE_FRAMES];
	uint32_t stack = stack_depot_save(frames, backtrace_capture(frames, USAGE_FRAMES));
	for (uint64_t left = new_in; left; left &= left - 1)
		mark_signal_usage(ts, lock, class_id, kind, __builtin_ctzll(left) + 1, in_usage, ip, stack);
	for (uint64_t left = new_on; left; left &= left - 1)
		mark_signal_usage(ts, lock, class_id, kind, __builtin_ctzll(left) + 1, on_usage, ip, stack);
	tracer_leave(ts);
}

static void record_signal_usage(struct thread_state *ts, const void *lock, uint32_t class_id, enum held_kind kind,
				int read, uintptr_t ip, int may_wait)
{
	struct signal_context *sc = signal_context();
	if (sc->depth)
		signal_frames_prune(sc, (uintptr_t)__builtin_frame_address(0));
	/* Outside handlers the mask is read now if unknown (one system call
	 * per change of it): the acquisition cache answers only in a known
	 * signal context (signal_context_cacheable()), untracked locks too. */
	if (!sc->depth && may_wait)
		(void)signal_blocked_mask(sc);
	if (!class_id || class_id >= MAX_LOCK_CLASSES)
		return;
	const struct class_signal_usage *u = &class_usage[class_id];
	enum signal_usage_bit in_usage = read ? USED_IN_SIGNAL_R : USED_IN_SIGNAL_W;
	enum signal_usage_bit on_usage = read ? SIGNAL_ON_R : SIGNAL_ON_W;
	int in_signal = may_wait ? signal_current_handler(sc) : 0;
	uint64_t new_in = 0, new_on = 0;
	if (in_signal && !(__atomic_load_n(&u->signals[in_usage], __ATOMIC_RELAXED) & signal_bit(in_signal)))
		new_in = signal_bit(in_signal);
	/* The mask is looked at only while this class may still become
	 * unsafe for some handled signal. */
	uint64_t maybe_on = __atomic_load_n(&handled_signals, __ATOMIC_RELAXED) &
			    ~__atomic_load_n(&u->signals[on_usage], __ATOMIC_RELAXED);
	if (maybe_on)
		new_on = maybe_on & ~signal_blocked_mask(sc);
	if (new_in | new_on)
		mark_new_usages(ts, lock, class_id, kind, in_usage, new_in, on_usage, new_on, ip);
}

/* ---- a new dependency joining a safe lock to an unsafe one ---------------------- */

struct bad_dependency {
	const void *lock;             /* being acquired, of class_id */
	uint32_t class_id;
	uintptr_t ip;
	struct held_lock prev;        /* the held lock of the new dependency */
	int have_prev;
	int signo;
	uint32_t safe, unsafe;
	struct dependency_step path[MAX_DEPENDENCY_PATH];   /* safe -> ... -> unsafe */
	size_t path_len;
};

/* "... which became SIGALRM-safe at:" and its first stack: the write
 * usage's if there is one, else the read usage's. */
static void print_became(uint32_t class_id, int signo, int safe)
{
	enum signal_usage_bit w = safe ? USED_IN_SIGNAL_W : SIGNAL_ON_W;
	enum signal_usage_bit u = usages_with(class_id, signo) & USAGE_BIT(w) ? w : (enum signal_usage_bit)(w | SIGNAL_USAGE_READ);
	char sig[32];
	report_printf("... which became %s-%s at:\n", signal_name(signo, sig, sizeof(sig)), safe ? "safe" : "unsafe");
	print_trace(usage_trace(class_id, signo, u), "  ");
}

static void print_bad_signal_dependency_body(struct thread_state *ts, void *arg)
{
	const struct bad_dependency *b = arg;
	char next[256], prev[256], safe[256], unsafe[256], middle[256], sig[32];
	lock_class_name(b->class_id, next, sizeof(next));
	lock_class_name(b->safe, safe, sizeof(safe));
	lock_class_name(b->unsafe, unsafe, sizeof(unsafe));
	lock_class_name(b->path_len ? b->path[0].to : b->unsafe, middle, sizeof(middle));
	signal_name(b->signo, sig, sizeof(sig));
	if (b->have_prev)
		lock_class_name(b->prev.class_id, prev, sizeof(prev));
	report_record_site(b->ip, NULL, 0);
	report_record_lock("acquiring", b->lock, next, "lock", 0);
	if (b->have_prev)
		report_record_lock("holding", b->prev.lock, prev, "lock", b->prev.acquire_ip);
	report_record_lock("chain", NULL, safe, "signal-safe", 0);
	report_record_lock("chain", NULL, unsafe, "signal-unsafe", 0);

	report_printf("%s is trying to acquire:\n", report_task_name());
	report_printf("%016lx (%s), at: ", (unsigned long)b->lock, next);
	report_symbolized_ip(b->ip);
	if (b->have_prev) {
		report_printf("\n\nand this task is already holding:\n");
		report_printf("%016lx (%s), at: ", (unsigned long)b->prev.lock, prev);
		report_symbolized_ip(b->prev.acquire_ip);
		report_printf("\nwhich would create a new lock dependency:\n (%s) -> (%s)\n", prev, next);
	} else {
		report_printf("\n");
	}
	report_printf("\nbut this new dependency connects a %s-safe lock:\n (%s)\n", sig, safe);
	print_became(b->safe, b->signo, 1);
	report_printf("\nto a %s-unsafe lock:\n (%s)\n", sig, unsafe);
	print_became(b->unsafe, b->signo, 0);
	report_printf("\nother info that might help us debug this:\n\n");
	report_printf(" Possible interrupt unsafe locking scenario:\n\n");
	report_printf("       CPU0                    CPU1\n");
	report_printf("       ----                    ----\n");
	report_printf("  lock(%s);\n", unsafe);
	report_printf("                               block(%s);\n", sig);
	report_printf("                               lock(%s);\n", safe);
	report_printf("                               lock(%s);\n", middle);
	report_printf("  <Interrupt: %s>\n", sig);
	report_printf("    lock(%s);\n", safe);
	report_printf("\n *** DEADLOCK ***\n\n");
	report_held_locks(ts);
	report_printf("\nthe dependencies from the %s-safe lock to the %s-unsafe lock:\n", sig, sig);
	for (size_t i = 0; i < b->path_len; i++) {
		char from[256], to[256];
		lock_class_name(b->path[i].from, from, sizeof(from));
		lock_class_name(b->path[i].to, to, sizeof(to));
		report_printf("-> (%s) -> (%s), %s taken at:\n", from, to, to);
		print_trace(b->path[i].stack, "  ");
	}
	report_backtrace();
}

void check_signal_safe_dependency(struct thread_state *ts, const void *lock, uint32_t class_id, uintptr_t ip)
{
	uint32_t n = __atomic_load_n(&nr_signal_safe_classes, __ATOMIC_ACQUIRE);
	if (!n || !class_id || class_id >= MAX_LOCK_CLASSES)
		return;
	tracer_enter(ts);
	uint64_t handled = __atomic_load_n(&handled_signals, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < n && i < MAX_SIGNAL_SAFE_CLASSES; i++) {
		uint32_t safe = __atomic_load_n(&signal_safe_classes[i], __ATOMIC_ACQUIRE);
		if (!safe)
			continue;
		uint64_t safe_for = handled & (__atomic_load_n(&class_usage[safe].signals[USED_IN_SIGNAL_W], __ATOMIC_ACQUIRE) |
					      __atomic_load_n(&class_usage[safe].signals[USED_IN_SIGNAL_R], __ATOMIC_ACQUIRE));
		for (; safe_for; safe_for &= safe_for - 1) {
			struct bad_dependency b = { .lock = lock, .class_id = class_id, .ip = ip, .safe = safe };
			b.signo = __builtin_ctzll(safe_for) + 1;
			struct unsafe_match m = { b.signo, 0, 0 };
			b.unsafe = lock_graph_find_forwards(ts, safe, held_for_read_only(safe, b.signo), is_signal_unsafe,
							    &m, b.path, &b.path_len);
			if (!b.unsafe)
				continue;
			/* Only a path through the new dependency is news: others
			 * were checked when they were made. */
			uint32_t prev_class = 0;
			for (size_t k = 0; k < b.path_len; k++)
				if (b.path[k].to == class_id)
					prev_class = b.path[k].from;
			if (!prev_class)
				continue;
			for (unsigned h = ts->depth; h-- > 0;)
				if (ts->held[h].kind != HELD_NONE && ts->held[h].class_id == prev_class) {
					b.prev = ts->held[h];
					b.have_prev = 1;
					break;
				}
			uint64_t key = ((uint64_t)safe << 32 | b.unsafe) * 0x9E3779B97F4A7C15ull ^ (uint64_t)b.signo;
			if (key_set_insert(reported_inversions, MAX_REPORTED_INVERSIONS, key | 1) != 2)
				continue;
			char title[128], sig[32];
			signal_name(b.signo, sig, sizeof(sig));
			snprintf(title, sizeof(title), report_title_format[REPORT_TITLE_SIGNAL_LOCK_ORDER], sig, sig);
			report_emit(ts, REPORT_IRQ_LOCK_INVERSION, 0, title, print_bad_signal_dependency_body, &b);
		}
	}
	tracer_leave(ts);
}

struct usage_job {
	struct thread_state *ts;
	const void *lock;
	uint32_t class_id;
	enum held_kind kind;
	int read;
	uintptr_t ip;
};

static void usage_job_run(void *p)
{
	struct usage_job *j = p;
	record_signal_usage(j->ts, j->lock, j->class_id, j->kind, j->read, j->ip, 1);
}

void signal_usage_acquire(struct thread_state *ts, const void *lock, uint32_t class_id, enum held_kind kind,
			  int read, uintptr_t ip)
{
	if (__builtin_expect(!stack_short(LOCK_CHECKS_STACK_NEEDED), 1)) {
		record_signal_usage(ts, lock, class_id, kind, read, ip, 1);
		return;
	}
	/* As lock_before_blocking_slow(): on the check stack, or not at all. */
	struct usage_job job = { ts, lock, class_id, kind, read, ip };
	(void)run_on_check_stack(ts, usage_job_run, &job);
}

void signal_usage_trylocked(struct thread_state *ts, const void *lock, uint32_t class_id, enum held_kind kind,
			    int read, uintptr_t ip)
{
	if (!class_id)
		class_id = lock_class_of(lock, ip);
	record_signal_usage(ts, lock, class_id, kind, read, ip, 0);
}

void signal_usage_enable(void)
{
	__atomic_store_n(&lock_graph_new_dependency_hook, check_signal_safe_dependency, __ATOMIC_RELEASE);
	__atomic_store_n(&signal_usage_tracked, 1, __ATOMIC_RELEASE);
	acquire_unusual_globals_set(UNUSUAL_SIGNALS, 1);
}
