/* Splat assembly and output. Reports are rare: here we may take the report
 * lock, unwind and symbolize, always with the reentrancy guard up so the
 * wrappers let our own calls through untouched. Nothing here allocates. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include "report/report.h"
#include "symbolize/symbolizer_lock.h"
#include "unwind/cfi_unwind.h"
#include "unwind/backtrace.h"
#include "classes/lock_classes.h"
#include "runtime/log_output.h"
#include "base/options.h"
#include "base/suppressions.h"
#include "runtime/sandbox.h"
#include "symbolize/symbolize.h"
#include "runtime/tracer_lock.h"
#include "runtime/tracer_stack.h"
#include "rcu/urcu_reader_state.h"
#include "report/report_record.h"
#include "runtime/self_check.h"

static unsigned long report_counts[NR_REPORT_KINDS];
/* The reports this process has written. Each report's header line and
 * record carry its number (reports_written + 1 while it is built), so a
 * reader pairs a report's text with its record exactly. Under
 * symbolizer_lock; a forked child numbers its own from 1. */
static unsigned long reports_written;
static unsigned long suppressed_count;
static unsigned long dropped_count;   /* asked for by a handler inside a report */

/* ---- reports in flight ----------------------------------------------------
 * reports_in_flight counts reports between the decision to print them and
 * their write; reports_done is a futex word bumped at each completion, on
 * which exit(), abort() and the losers of a site race wait. */
static int reports_in_flight;
static int reports_done;

static void in_flight_begin(void)
{
	__atomic_add_fetch(&reports_in_flight, 1, __ATOMIC_ACQ_REL);
}

static void in_flight_end(void)
{
	__atomic_sub_fetch(&reports_in_flight, 1, __ATOMIC_ACQ_REL);
	__atomic_add_fetch(&reports_done, 1, __ATOMIC_RELEASE);
	tracer_futex_wake_all(&reports_done);
}

/* Waits until done() or REPORT_WAIT_MS without progress. */
static void wait_for(int (*done)(const void *), const void *arg)
{
	/* Done already, the common case: no clock read (the first one in a
	 * forked child faults the clock's page in, at every _exit). */
	if (done(arg))
		return;
	long deadline = tracer_monotonic_ms() + REPORT_WAIT_MS;
	for (;;) {
		int seen = __atomic_load_n(&reports_done, __ATOMIC_ACQUIRE);
		if (done(arg))
			return;
		long left = deadline - tracer_monotonic_ms();
		if (left <= 0)
			return;
		tracer_futex_wait(&reports_done, seen, left < 100 ? (int)left : 100);
		if (__atomic_load_n(&reports_done, __ATOMIC_ACQUIRE) != seen)
			deadline = tracer_monotonic_ms() + REPORT_WAIT_MS;   /* progress */
	}
}

static int nothing_in_flight(const void *unused)
{
	(void)unused;
	return __atomic_load_n(&reports_in_flight, __ATOMIC_ACQUIRE) == 0;
}

void report_wait_in_flight(void)
{
	struct thread_state *ts = thread_state();
	/* A thread inside its own report (exit() from a signal handler...)
	 * would wait for itself. */
	if (ts->in_tracer)
		return;
	wait_for(nothing_in_flight, NULL);
}

/* ---- once per call site ---------------------------------------------------
 * An open-addressing set of (site, kind) keys. Each slot also has the
 * thread printing its report, until it is written: a racing thread waits
 * for it instead of running ahead. */

#define MAX_REPORT_SITES 8192   /* power of two */
static uintptr_t report_sites[MAX_REPORT_SITES];
static const void *report_site_owner[MAX_REPORT_SITES];
/* Slots of report_sites[] in use (under sites_lock): a forked child whose
 * parent reported nothing has no owner to clear, and does not read the
 * 64 KiB of report_site_owner[] (16 page faults in every child). */
static unsigned report_sites_used;

static uintptr_t site_key(enum report_kind kind, uintptr_t site)
{
	/* x86-64 user addresses use 47 bits: the kind fits above them. */
	return (site << 4 | (uintptr_t)kind) + 1;
}

static int site_written(const void *slot_index)
{
	size_t i = (size_t)(uintptr_t)slot_index;
	return __atomic_load_n(&report_site_owner[i], __ATOMIC_ACQUIRE) == NULL;
}

static struct tracer_lock sites_lock = TRACER_LOCK_INITIALIZER(TRACER_LOCK_REPORT_SITES, "report sites");

/* The slot of key, or of the free slot where it would go; -1 when full. */
static long site_slot(uintptr_t key)
{
	uintptr_t h = key * 0x9E3779B97F4A7C15ull;
	for (unsigned probe = 0; probe < MAX_REPORT_SITES; probe++) {
		size_t i = (h + probe) & (MAX_REPORT_SITES - 1);
		uintptr_t cur = __atomic_load_n(&report_sites[i], __ATOMIC_ACQUIRE);
		if (cur == key || cur == 0)
			return (long)i;
	}
	return -1;
}

/* The site is reported already or being reported: wait for another
 * thread's report to be out (never for our own). */
static int site_taken(size_t i, const struct thread_state *ts)
{
	const void *owner = __atomic_load_n(&report_site_owner[i], __ATOMIC_ACQUIRE);
	if (owner && owner != ts)
		wait_for(site_written, (const void *)(uintptr_t)i);
	return 0;
}

int report_site_once(enum report_kind kind, uintptr_t site)
{
	if (!tracer_checking())
		return 0;   /* a self-check failed: no new report (self_check.h) */
	uintptr_t key = site_key(kind, site);
	struct thread_state *ts = thread_state();
	/* Lock-free: a site reported before (the common case of a bug that
	 * repeats in a loop). */
	long i = site_slot(key);
	if (i >= 0 && __atomic_load_n(&report_sites[i], __ATOMIC_ACQUIRE) == key)
		return site_taken((size_t)i, ts);
	if (!tracer_lock_acquire(&sites_lock, ts))
		return 0;   /* a handler interrupted our own claim: skip */
	i = site_slot(key);
	int won = 0;
	if (i >= 0 && __atomic_load_n(&report_sites[i], __ATOMIC_RELAXED) == 0) {
		/* Counted before the owner is set (release), so that no child
		 * sees an owner the count misses, even one forked while this
		 * thread held sites_lock past the fork preparation's timeout.
		 * The owner is visible before the key (release below). */
		__atomic_store_n(&report_sites_used, report_sites_used + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&report_site_owner[i], (const void *)ts, __ATOMIC_RELEASE);
		__atomic_store_n(&report_sites[i], key, __ATOMIC_RELEASE);
		won = 1;
		in_flight_begin();
	}
	tracer_lock_release(&sites_lock);
	if (won)
		return 1;
	if (i < 0) {
		log_output_limit_once("MAX_REPORT_SITES too low!", "further call sites are not reported");
		return 0;
	}
	return site_taken((size_t)i, ts);
}

static void report_site_written(enum report_kind kind, uintptr_t site)
{
	uintptr_t key = site_key(kind, site);
	uintptr_t h = key * 0x9E3779B97F4A7C15ull;
	for (unsigned probe = 0; probe < MAX_REPORT_SITES; probe++) {
		size_t i = (h + probe) & (MAX_REPORT_SITES - 1);
		uintptr_t cur = __atomic_load_n(&report_sites[i], __ATOMIC_ACQUIRE);
		if (cur == key) {
			__atomic_store_n(&report_site_owner[i], NULL, __ATOMIC_RELEASE);
			return;
		}
		if (!cur)
			return;
	}
}

/* ---- the report being built ---------------------------------------------
 * One report at a time (the report lock), so static buffers serve them
 * all: no allocation, nothing large on the program's stack. */

/* The report lock is the symbolizer's (symbolizer_lock.h): a report names
 * frames as it prints them. */

#define REPORT_BUFFER_SIZE (64 * 1024)
static char report_buf[REPORT_BUFFER_SIZE];
static size_t report_len;

#define MAX_CAPTURED_FRAMES 136
static uintptr_t captured_frames[MAX_CAPTURED_FRAMES];
static size_t nr_captured_frames;
static const char *capture_failure;

/* Code addresses of the report being built (frames, where locks were
 * taken), matched against the suppressions when it is complete. */
#define MAX_REPORT_PCS 256
static uintptr_t report_pcs[MAX_REPORT_PCS];
static size_t nr_report_pcs;

static void remember_pc(uintptr_t pc)
{
	if (nr_report_pcs < MAX_REPORT_PCS)
		report_pcs[nr_report_pcs++] = pc;
}

void report_load_suppressions(void)
{
	if (!tracer_options.suppressions[0])
		return;
	char err[512];
	int ret = suppressions_load(tracer_options.suppressions, err, sizeof(err));
	if (ret == -2)
		log_output_die_unreadable("suppressions", err);
	if (ret < 0) {
		char line[700];
		int n = snprintf(line, sizeof(line),
				 "lockdep-rcu: ignoring option 'suppressions' in LOCKDEP_RCU_OPTIONS: %s\n", err);
		log_output_write(line, n < 0 ? 0 : (size_t)n >= sizeof(line) ? sizeof(line) - 1 : (size_t)n);
	}
}

static int report_is_suppressed(enum report_kind kind)
{
	if (kind >= NR_REPORT_KINDS || !suppressions_count())
		return 0;
	static char names[MAX_REPORT_PCS][128];
	static const char *name_ptrs[MAX_REPORT_PCS];
	for (size_t i = 0; i < nr_report_pcs; i++) {
		symbolize_function(report_pcs[i], names[i], sizeof(names[i]));
		name_ptrs[i] = names[i];
	}
	return suppressions_match(report_record_kind[kind], name_ptrs, nr_report_pcs);
}

void report_printf(const char *fmt, ...)
{
	if (report_len >= sizeof(report_buf) - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(report_buf + report_len, sizeof(report_buf) - report_len, fmt, ap);
	va_end(ap);
	if (n > 0)
		report_len += (size_t)n;
	if (report_len > sizeof(report_buf) - 1)
		report_len = sizeof(report_buf) - 1;
}

/* A thread's name as the text shows it: a control byte as \xNN, so that
 * no name (the program's to choose, any bytes) starts a line of its own
 * in the log, a title for instance. The record keeps the name as it is,
 * escaped by JSON's rules. */
static void comm_for_text(const char *raw, char *buf, size_t size)
{
	size_t n = 0;
	for (; *raw && n + 5 < size; raw++) {
		unsigned char c = (unsigned char)*raw;
		if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
		else
			buf[n++] = (char)c;
	}
	buf[n] = 0;
}

/* The calling thread's name, for the text. */
static void current_comm(char buf[REPORT_COMM_MAX])
{
	char comm[17];
	report_comm(comm);
	comm_for_text(comm, buf, REPORT_COMM_MAX);
}

const char *report_task_name(void)
{
	static __thread char name[REPORT_TASK_MAX];
	char comm[REPORT_COMM_MAX];
	current_comm(comm);
	snprintf(name, sizeof(name), "%s/%d", comm, (int)report_tid(thread_state()));
	return name;
}

/* Another thread's name as it is ("?" when it cannot be read). */
static void thread_comm_raw(int tid, char comm[17])
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	int fd = in_sandbox() ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, comm, 16);
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		strcpy(comm, "?");
		return;
	}
	if (comm[n - 1] == '\n')   /* the kernel ends the file with one */
		n--;
	comm[n] = 0;
}

void report_thread_comm(int tid, char *buf, size_t size)
{
	char comm[17];
	thread_comm_raw(tid, comm);
	comm_for_text(comm, buf, size);
}

/* The thread the next report of this thread is about (report_next_about()),
 * and of the report being built (under the symbolizer lock). */
static __thread int next_subject_tid;
static int report_subject_tid;

void report_next_about(int tid)
{
	next_subject_tid = tid;
}

static void report_rule(char c, size_t len)
{
	char line[160];
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	memset(line, c, len);
	line[len] = '\n';
	line[len + 1] = 0;
	report_printf("%s", line);
}

void report_symbolized_ip(uintptr_t ip)
{
	remember_pc(ip);
	/* The kernel's signal return trampoline (glibc's __restore_rt, often
	 * without a symbol): named as gdb names it. */
	if (cfi_unwind_is_signal_frame(ip)) {
		report_printf("<signal handler called>");
		return;
	}
	char where[512];
	if (tracer_options.symbolize)
		symbolize_code(ip, where, sizeof(where));
	else
		snprintf(where, sizeof(where), "0x%lx", (unsigned long)ip);
	report_printf("%s", where);
}

static const char *const held_kind_name[NR_HELD_KINDS] = {
	[HELD_NONE] = "?",
	[HELD_MUTEX] = "mutex",
	[HELD_RWLOCK_READ] = "rwlock-read",
	[HELD_RWLOCK_WRITE] = "rwlock-write",
	[HELD_SPIN] = "spinlock",
	[HELD_RCU_READ] = "rcu",
};

static const char *held_type_name(const struct held_lock *h)
{
	switch (h->kind) {
	case HELD_MUTEX: return "pthread_mutex_t";
	case HELD_SPIN: return "pthread_spinlock_t";
	case HELD_RCU_READ: return "srcu_struct";
	default: return "pthread_rwlock_t";
	}
}

void report_lock_name(const void *lock, uint32_t class_id, const char *type_name, char *buf, size_t size)
{
	buf[0] = 0;
	if (class_id)
		lock_class_name(class_id, buf, size);
	if ((!buf[0] || buf[0] == '?') && lock && tracer_options.symbolize)
		symbolize_data((uintptr_t)lock, buf, size);
	if (!buf[0])
		snprintf(buf, size, "%s", type_name);
}

/* How the held locks listed in a report figure in its record: "held" (the
 * context of the report) unless the body says they are the bug itself. */
static const char *held_lock_role = "held";

void report_held_locks_as(const char *role)
{
	held_lock_role = role;
}

void report_record_lock(const char *role, const void *lock, const char *name, const char *kind,
			uintptr_t acquired_at)
{
	record_lock(role, lock, name, kind, acquired_at);
}

void report_record_site(uintptr_t ip, const char *file, int line)
{
	if (file)
		record_site_source(file, line);
	else
		record_site(ip, 1);
}

void report_held_lock(int index, struct held_lock *h)
{
	char name[256];
	const char *kind_name = held_kind_name[h->kind < NR_HELD_KINDS ? h->kind : HELD_NONE];
	if (h->kind == HELD_RCU_READ && held_flavor(h) != FLAVOR_srcu) {
		report_printf(" #%d: (%s){%s}, at: ", index, flavor_lock_name[held_flavor(h)], kind_name);
		record_lock(held_lock_role, NULL, flavor_lock_name[held_flavor(h)], kind_name, h->acquire_ip);
	} else {
		uint32_t class_id = h->class_id ? h->class_id : held_class_lookup(h);
		report_lock_name(h->lock, class_id, held_type_name(h), name, sizeof(name));
		report_printf(" #%d: %016lx (%s){%s}, at: ", index, (unsigned long)h->lock, name, kind_name);
		record_lock(held_lock_role, h->lock, name, kind_name, h->acquire_ip);
	}
	report_symbolized_ip(h->acquire_ip);
	if (held_is_aggregate(h))
		report_printf(" (and %u more locks of its class)", h->references - 1u);
	else if (h->references > 1)
		report_printf(" (taken %u times)", h->references);
	report_printf("%s%s\n", held_is_trylock(h) ? " (trylock)" : "",
		      held_is_inherited(h) ? " (inherited over fork)" : "");
}

void report_held_locks_of(const char *task, const struct held_lock *held, unsigned depth, unsigned untracked,
			  const unsigned *inline_nesting)
{
	unsigned n = 0, inlined = 0;
	for (unsigned i = 0; i < depth; i++)
		n += held[i].kind != HELD_NONE;
	for (int f = 0; inline_nesting && f < NR_URCU_FLAVORS; f++)
		if (inline_nesting[f]) {
			inlined |= 1u << f;
			n++;
		}
	if (n == 0 && !untracked) {
		report_printf("no locks held by %s.\n", task);
		return;
	}
	report_printf("%u lock%s held by %s:\n", n, n == 1 ? "" : "s", task);
	int index = 0;
	/* Inlined read sides began before anything we saw: outermost. */
	for (unsigned left = inlined; left; left &= left - 1)
		report_printf(" #%d: (%s){rcu}, at: (an inlined read side, nesting %u: where it began is not known)\n",
			      index++, flavor_lock_name[__builtin_ctz(left)], inline_nesting[__builtin_ctz(left)]);
	for (unsigned i = 0; i < depth; i++)
		if (held[i].kind != HELD_NONE) {
			struct held_lock copy = held[i];
			report_held_lock(index++, &copy);
		}
	if (untracked)
		report_printf(" ... and %u more not tracked (MAX_LOCK_DEPTH %d)\n", untracked, MAX_LOCK_DEPTH);
}

void report_held_locks(struct thread_state *ts)
{
	unsigned nesting[NR_URCU_FLAVORS] = { 0 };
	unsigned inlined = urcu_readable_flavors ? inline_readers(ts) : 0;
	for (unsigned left = inlined; left; left &= left - 1)
		nesting[__builtin_ctz(left)] = urcu_inline_nesting((enum rcu_flavor)__builtin_ctz(left));
	report_held_locks_of(report_task_name(), ts->held, ts->depth, ts->untracked, nesting);
}

/* The kernel's dump_stack() layout. cpu < 0: another thread's, whose CPU
 * we do not know. */
static void print_call_trace(int cpu, int tid, const char *comm, const uintptr_t *frames, size_t n)
{
	if (n > (size_t)tracer_options.max_frames)
		n = (size_t)tracer_options.max_frames;
	report_printf("\nstack backtrace:\n");
	if (cpu < 0)
		report_printf("CPU: ? PID: %d TID: %d Comm: %s\n", (int)report_pid(), tid, comm);
	else
		report_printf("CPU: %d PID: %d TID: %d Comm: %s\n", cpu, (int)report_pid(), tid, comm);
	report_printf("Call Trace:\n");
	for (size_t i = 0; i < n; i++) {
		report_printf(" ");
		report_symbolized_ip(frames[i]);
		report_printf("\n");
		record_frame(frames[i]);
	}
}

void report_backtrace_of(int tid, const char *comm, const uintptr_t *frames, size_t n)
{
	print_call_trace(-1, tid, comm, frames, n);
}

void report_backtrace_frames(const uintptr_t *frames, size_t n)
{
	char comm[REPORT_COMM_MAX];
	current_comm(comm);
	print_call_trace(sched_getcpu(), (int)report_tid(thread_state()), comm, frames, n);
}

void report_backtrace(void)
{
	report_backtrace_frames(captured_frames, nr_captured_frames);
	if (!nr_captured_frames && capture_failure)
		report_printf(" (no frames: %s)\n", capture_failure);
}

/* ---- emitting ------------------------------------------------------------ */

struct report_job {
	struct thread_state *ts;
	enum report_kind kind;
	uintptr_t site;
	const char *title;
	void (*body)(struct thread_state *, void *);
	void *arg;
	int suppressed;
	const char *record;
	size_t record_len;
};

/* On the tracer's stack: the whole text, and the suppression decision. */
static void build_report(void *p)
{
	struct report_job *job = p;
	symbolizer_report_body(1);
	report_len = 0;
	nr_report_pcs = 0;
	held_lock_role = "held";
	/* Notices (kind NR_REPORT_KINDS) have no record and no number. */
	unsigned long seq = job->kind < NR_REPORT_KINDS ? reports_written + 1 : 0;
	char subject_comm[17] = "";
	if (report_subject_tid)
		thread_comm_raw(report_subject_tid, subject_comm);
	record_begin(job->kind < NR_REPORT_KINDS ? report_record_kind[job->kind] : REPORT_NOTICE_RECORD_KIND, job->title,
		     seq, report_subject_tid, subject_comm);
	if (job->site)
		record_site(job->site, 1);
	size_t width = strlen(job->title);
	report_printf("\n");
	report_rule('=', width);
	report_printf("%s\n", job->title);
	if (seq)
		report_printf("lockdep-rcu %s, pid %d, report %lu\n", LOCKDEP_RCU_VERSION, (int)report_pid(), seq);
	else
		report_printf("lockdep-rcu %s, pid %d\n", LOCKDEP_RCU_VERSION, (int)report_pid());
	report_rule('-', width);
	size_t header = report_len;
	job->body(job->ts, job->arg);
	/* the first line of the body says what happened */
	const char *first = report_buf + header;
	const char *eol = memchr(first, '\n', report_len - header);
	record_message(first, eol ? (size_t)(eol - first) : report_len - header);
	job->suppressed = report_is_suppressed(job->kind);
	job->record = record_end(&job->record_len);
	symbolizer_report_body(0);
}

void report_emit(struct thread_state *ts, enum report_kind kind, uintptr_t site, const char *title,
		 void (*body)(struct thread_state *, void *), void *arg)
{
	report_emit_keyed(ts, kind, site, site, title, body, arg);
}

void report_emit_keyed(struct thread_state *ts, enum report_kind kind, uintptr_t site, uintptr_t once_key,
		       const char *title, void (*body)(struct thread_state *, void *), void *arg)
{
	int subject = next_subject_tid;   /* this report's, whatever becomes of it */
	next_subject_tid = 0;
	/* A self-check failed: no new report. One already claimed by
	 * report_site_once() is written (its claim waits for it). */
	if (!once_key && kind < NR_REPORT_KINDS && !tracer_checking())
		return;
	int saved_errno = errno;
	int cancel = tracer_cancel_off();
	tracer_enter(ts);
	if (!once_key)
		in_flight_begin();
	if (!tracer_lock_acquire(&symbolizer_lock, ts)) {
		/* A signal handler interrupted this thread's own report (or its
		 * fork preparation holds the lock): the buffer is in use. */
		if (kind < NR_REPORT_KINDS)
			__atomic_fetch_add(&dropped_count, 1, __ATOMIC_RELAXED);
		goto out;
	}
	report_subject_tid = subject;
	nr_captured_frames = backtrace_capture(captured_frames, MAX_CAPTURED_FRAMES);
	capture_failure = backtrace_unavailable_reason();
	struct report_job job = { ts, kind, site, title, body, arg, 0, NULL, 0 };
	run_on_tracer_stack(build_report, &job);
	if (job.suppressed) {
		__atomic_fetch_add(&suppressed_count, 1, __ATOMIC_RELAXED);
	} else {
		if (kind < NR_REPORT_KINDS) {
			__atomic_fetch_add(&report_counts[kind], 1, __ATOMIC_RELAXED);
			reports_written++;
		}
		log_output_write(report_buf, report_len);
		if (kind < NR_REPORT_KINDS)
			log_output_write_record(job.record, job.record_len);
	}
	tracer_lock_release(&symbolizer_lock);
	if (!job.suppressed && kind < NR_REPORT_KINDS && tracer_options.abort_on_error) {
		static const char msg[] = "lockdep-rcu: abort_on_error=1, aborting\n";
		log_output_write(msg, sizeof(msg) - 1);
		report_print_summary();
		fflush(NULL);
		/* The exported abort(), as for _exit() below: SIGABRT with the
		 * program's handler if any, then a core dump, or the debugger
		 * stops here with the report's caller on the stack. */
		abort();
	}
	if (!job.suppressed && kind < NR_REPORT_KINDS && tracer_options.halt_on_error) {
		static const char msg[] = "lockdep-rcu: halt_on_error=1, exiting\n";
		log_output_write(msg, sizeof(msg) - 1);
		report_print_summary();
		fflush(NULL);   /* the program's buffered output is not lost */
		/* Through the exported _exit() on purpose: the process ends as any
		 * _exit() does under the tracer (lock_stat, graph, log cleanup). */
		_exit(tracer_options.exitcode ? tracer_options.exitcode : 1);
	}
out:
	if (once_key)
		report_site_written(kind, once_key);
	in_flight_end();
	tracer_leave(ts);
	tracer_cancel_restore(cancel);
	errno = saved_errno;
}

struct depth_limit {
	const void *lock;
	uintptr_t ip;
};

static void print_depth_limit(struct thread_state *ts, void *arg)
{
	struct depth_limit *d = arg;
	report_printf("%s is trying to acquire lock %016lx at: ", report_task_name(), (unsigned long)d->lock);
	report_symbolized_ip(d->ip);
	report_printf("\nbut it already holds %d locks: this acquisition and deeper ones are not tracked\n"
		      "(each recursive relock of a lock counts once).\n\n", MAX_LOCK_DEPTH);
	report_held_locks(ts);
	report_backtrace();
}

void report_depth_limit(struct thread_state *ts, const void *lock, uintptr_t ip)
{
	static int printed;
	if (__atomic_exchange_n(&printed, 1, __ATOMIC_ACQ_REL))
		return;
	struct depth_limit d = { lock, ip };
	report_emit(ts, REPORT_NOTICE, 0, "lockdep-rcu: BUG: MAX_LOCK_DEPTH too low!", print_depth_limit, &d);
}

unsigned long report_count(void)
{
	unsigned long total = 0;
	for (int k = 0; k < NR_REPORT_KINDS; k++)
		total += __atomic_load_n(&report_counts[k], __ATOMIC_RELAXED);
	return total;
}

void report_print_summary(void)
{
	static int printed;
	if (!process_is_ours())
		return;
	unsigned long total = report_count();
	unsigned long suppressed = __atomic_load_n(&suppressed_count, __ATOMIC_RELAXED);
	unsigned long dropped = __atomic_load_n(&dropped_count, __ATOMIC_RELAXED);
	if ((!total && !suppressed && !dropped) || !tracer_options.print_summary)
		return;
	if (__atomic_exchange_n(&printed, 1, __ATOMIC_ACQ_REL))
		return;
	char line[512];
	size_t n = (size_t)snprintf(line, sizeof(line), "SUMMARY: lockdep-rcu: %lu report%s", total,
				    total == 1 ? "" : "s");
	const char *sep = ": ";
	for (int k = 0; k < NR_REPORT_KINDS && n < sizeof(line); k++) {
		unsigned long c = __atomic_load_n(&report_counts[k], __ATOMIC_RELAXED);
		if (!c)
			continue;
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%lu %s", sep, c, report_kind_name[k]);
		sep = ", ";
	}
	if (suppressed && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, "; %lu suppressed", suppressed);
	if (dropped && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n,
				      "; %lu not printed (asked for by a signal handler during a report)", dropped);
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	log_output_write(line, n);
}

/* ---- fork ------------------------------------------------------------------ */

void report_fork_prepare(struct thread_state *self)
{
	tracer_lock_fork_prepare(&symbolizer_lock, self);
	tracer_lock_fork_prepare(&sites_lock, self);
}

void report_fork_parent(void)
{
	tracer_lock_fork_parent(&sites_lock);
	tracer_lock_fork_parent(&symbolizer_lock);
}

/* The child is a new process: its reports, its counts, its summary. Sites
 * already reported stay reported (the child's own first reports of them
 * would repeat the parent's in a shared log); sites whose reports other
 * threads were writing are done, since those threads are gone. */
void report_fork_child(struct thread_state *self)
{
	tracer_lock_fork_child(&symbolizer_lock, self);
	sandbox_fork_child(self);
	/* Only what changes is written: a page written in the child is a
	 * page copied, and a parent that reported nothing has only zeros. */
	for (int k = 0; k < NR_REPORT_KINDS; k++)
		if (report_counts[k])
			report_counts[k] = 0;
	if (suppressed_count | dropped_count | reports_written)
		suppressed_count = dropped_count = reports_written = 0;
	tracer_lock_fork_child(&sites_lock, self);
	/* A report this thread was writing when a signal handler forked goes
	 * on in the child too. */
	int in_flight = tracer_lock_held_by(&symbolizer_lock, self);
	if (reports_in_flight != in_flight)
		reports_in_flight = in_flight;
	for (size_t i = 0; report_sites_used && i < MAX_REPORT_SITES; i++)
		if (report_site_owner[i] && report_site_owner[i] != self)
			report_site_owner[i] = NULL;
	log_output_fork_child();
}
