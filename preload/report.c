/* Splat assembly and output. Reports are rare: here we may take a lock,
 * unwind, symbolize and allocate, always with the reentrancy guard up so
 * the wrappers let our own lock and libunwind calls through untouched. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "report.h"
#include "options.h"
#include "backtrace.h"
#include "symbolize.h"
#include "suppressions.h"

static const char *const report_kind_name[NR_REPORT_KINDS] = {
	[REPORT_SUSPICIOUS_RCU] = "suspicious RCU usage",
	[REPORT_BAD_UNLOCK] = "bad unlock balance",
	[REPORT_RECURSIVE_LOCKING] = "possible recursive locking",
	[REPORT_HELD_LOCK_FREED] = "held lock freed",
	[REPORT_LOCKS_HELD_AT_EXIT] = "locks held at thread end",
	[REPORT_CIRCULAR_DEPENDENCY] = "possible circular locking dependency",
	[REPORT_WARNING] = "lockdep assertion",
};

static unsigned long report_counts[NR_REPORT_KINDS];
static unsigned long suppressed_count;

/* The suppression kinds of the sanitizer-style rules. */
static const char *const suppression_kind[NR_REPORT_KINDS] = {
	[REPORT_SUSPICIOUS_RCU] = "suspicious_rcu",
	[REPORT_BAD_UNLOCK] = "bad_unlock",
	[REPORT_RECURSIVE_LOCKING] = "recursive_locking",
	[REPORT_HELD_LOCK_FREED] = "held_lock_freed",
	[REPORT_LOCKS_HELD_AT_EXIT] = "locks_held_at_exit",
	[REPORT_CIRCULAR_DEPENDENCY] = "circular_dependency",
	[REPORT_WARNING] = "lockdep_assertion",
};

/* Code addresses of the report being built (frames, where locks were
 * taken), matched against the suppressions at report_end(). */
#define MAX_REPORT_PCS 256
static uintptr_t report_pcs[MAX_REPORT_PCS];
static size_t nr_report_pcs;

static void remember_pc(uintptr_t pc)
{
	if (nr_report_pcs < MAX_REPORT_PCS)
		report_pcs[nr_report_pcs++] = pc;
}

static int report_is_suppressed(enum report_kind kind)
{
	if (!suppressions_count())
		return 0;
	static char names[MAX_REPORT_PCS][128];
	static const char *name_ptrs[MAX_REPORT_PCS];
	for (size_t i = 0; i < nr_report_pcs; i++) {
		symbolize_function(report_pcs[i], names[i], sizeof(names[i]));
		name_ptrs[i] = names[i];
	}
	return suppressions_match(suppression_kind[kind], name_ptrs, nr_report_pcs);
}

/* ---- once per call site ------------------------------------------------ */

#define MAX_REPORT_SITES 8192   /* power of two */
static uintptr_t report_sites[MAX_REPORT_SITES];

int report_site_once(enum report_kind kind, uintptr_t site)
{
	/* x86-64 user addresses use 47 bits: the kind fits above them. */
	uintptr_t key = (site << 4 | (uintptr_t)kind) + 1;
	uintptr_t h = key * 0x9E3779B97F4A7C15ull;
	for (unsigned probe = 0; probe < MAX_REPORT_SITES; probe++) {
		uintptr_t *slot = &report_sites[(h + probe) & (MAX_REPORT_SITES - 1)];
		uintptr_t cur = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		if (cur == key)
			return 0;
		if (cur == 0) {
			uintptr_t expected = 0;
			if (__atomic_compare_exchange_n(slot, &expected, key, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				return 1;
			if (expected == key)   /* another thread won the same site */
				return 0;
		}
	}
	report_limit_once("MAX_REPORT_SITES too low!", "further call sites are not reported");
	return 0;
}

/* ---- the report lock ----------------------------------------------------- */

/* A spinlock of our own, not a pthread mutex: it must not show up in the
 * program's lock state, and reports are rare and short enough to spin on. */
static int report_lock_word;

static void report_lock(void)
{
	while (__atomic_exchange_n(&report_lock_word, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void report_unlock(void)
{
	__atomic_store_n(&report_lock_word, 0, __ATOMIC_RELEASE);
}

void report_fork_prepare(void) { report_lock(); }
void report_fork_parent(void) { report_unlock(); }
void report_fork_child(void) { report_unlock(); }

/* ---- output -------------------------------------------------------------- */

static int log_fd = -1;
static pid_t log_fd_pid;

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

/* The destination: stderr, or log_path with %p replaced by the pid (reopened
 * in a forked child so each process gets its own log). */
static int report_fd(void)
{
	options_init();
	const char *path = tracer_options.log_path;
	if (!path[0])
		return 2;
	pid_t pid = getpid();
	if (log_fd >= 0 && log_fd_pid == pid)
		return log_fd;
	char name[LOG_PATH_MAX + 32];
	size_t n = 0;
	for (const char *p = path; *p && n < sizeof(name) - 24; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			n += (size_t)snprintf(name + n, sizeof(name) - n, "%d", (int)pid);
			p++;
		} else {
			name[n++] = *p;
		}
	}
	name[n] = 0;
	int fd = open(name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		char msg[LOG_PATH_MAX + 96];
		int m = snprintf(msg, sizeof(msg), "lockdep-rcu: cannot open log_path '%s': %s; writing to stderr\n",
				 name, strerror(errno));
		write_all(2, msg, m > 0 ? (size_t)m : 0);
		tracer_options.log_path[0] = 0;
		return 2;
	}
	if (log_fd >= 0 && log_fd_pid != pid)
		close(log_fd);   /* the parent's descriptor, inherited over fork */
	log_fd = fd;
	log_fd_pid = pid;
	return fd;
}

void report_raw_write(const char *buf, size_t len)
{
	int saved = errno;
	write_all(report_fd(), buf, len);
	errno = saved;
}

/* ---- building a report ------------------------------------------------- */

/* One report at a time (report lock), so one static buffer serves them all:
 * no allocation, no large stack frame on small thread stacks. */
#define REPORT_BUFFER_SIZE (64 * 1024)
static char report_buf[REPORT_BUFFER_SIZE];
static size_t report_len;
static int report_saved_errno;

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

const char *report_task_name(void)
{
	static __thread char name[48];
	char comm[17] = "";
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	snprintf(name, sizeof(name), "%s/%d", comm, (int)gettid());
	return name;
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

void report_begin(struct thread_state *ts, const char *title)
{
	tracer_enter(ts);
	report_saved_errno = errno;
	report_lock();
	report_len = 0;
	nr_report_pcs = 0;
	size_t width = strlen(title);
	report_printf("\n");
	report_rule('=', width);
	report_printf("%s\n", title);
	report_printf("lockdep-rcu %s, pid %d\n", LOCKDEP_RCU_VERSION, (int)getpid());
	report_rule('-', width);
}

void report_symbolized_ip(uintptr_t ip)
{
	remember_pc(ip);
	char where[512];
	if (tracer_options.symbolize)
		symbolize_code(ip, where, sizeof(where));
	else
		snprintf(where, sizeof(where), "0x%lx", (unsigned long)ip);
	report_printf("%s", where);
}

static const char *const held_kind_name[] = {
	[HELD_MUTEX] = "mutex",
	[HELD_RWLOCK_READ] = "rwlock-read",
	[HELD_RWLOCK_WRITE] = "rwlock-write",
	[HELD_SPIN] = "spinlock",
	[HELD_RCU_READ] = "rcu",
};

void report_held_lock(int index, const struct held_lock *h)
{
	char name[256] = "";
	if (h->kind == HELD_RCU_READ && h->flavor != FLAVOR_srcu) {
		report_printf(" #%d: (%s){%s}, at: ", index, flavor_lock_name[h->flavor],
			      held_kind_name[h->kind]);
	} else {
		if (tracer_options.symbolize)
			symbolize_data((uintptr_t)h->lock, name, sizeof(name));
		if (!name[0])
			snprintf(name, sizeof(name), "%s",
				 h->kind == HELD_RCU_READ ? "srcu_struct" :
				 h->kind == HELD_MUTEX ? "pthread_mutex_t" :
				 h->kind == HELD_SPIN ? "pthread_spinlock_t" : "pthread_rwlock_t");
		report_printf(" #%d: %016lx (%s%s){%s}, at: ", index, (unsigned long)h->lock,
			      h->kind == HELD_RCU_READ ? "srcu:" : "", name, held_kind_name[h->kind]);
	}
	report_symbolized_ip(h->acquire_ip);
	report_printf("%s\n", h->trylock ? " (trylock)" : "");
}

void report_held_locks(const struct thread_state *ts)
{
	const char *task = report_task_name();
	if (ts->depth == 0) {
		report_printf("no locks held by %s.\n", task);
		return;
	}
	report_printf("%u lock%s held by %s:\n", ts->depth, ts->depth == 1 ? "" : "s", task);
	for (unsigned i = 0; i < ts->depth; i++)
		report_held_lock((int)i, &ts->held[i]);
	if (ts->untracked)
		report_printf(" ... and %u more not tracked (MAX_LOCK_DEPTH %d)\n", ts->untracked, MAX_LOCK_DEPTH);
}

void report_backtrace(void)
{
	uintptr_t frames[128];
	int max = tracer_options.max_frames;
	report_backtrace_frames(frames, backtrace_capture(frames, (size_t)max));
}

void report_backtrace_frames(const uintptr_t *frames, size_t n)
{
	if (n > (size_t)tracer_options.max_frames)
		n = (size_t)tracer_options.max_frames;
	char comm[17] = "";
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	report_printf("\nstack backtrace:\n");
	report_printf("CPU: %d PID: %d TID: %d Comm: %s\n", sched_getcpu(), (int)getpid(),
		      (int)gettid(), comm);
	report_printf("Call Trace:\n");
	for (size_t i = 0; i < n; i++) {
		report_printf(" ");
		report_symbolized_ip(frames[i]);
		report_printf("\n");
	}
}

void report_end(struct thread_state *ts, enum report_kind kind)
{
	if (report_is_suppressed(kind)) {
		__atomic_fetch_add(&suppressed_count, 1, __ATOMIC_RELAXED);
		report_unlock();
		errno = report_saved_errno;
		tracer_leave(ts);
		return;
	}
	__atomic_fetch_add(&report_counts[kind], 1, __ATOMIC_RELAXED);
	int fd = report_fd();
	write_all(fd, report_buf, report_len);
	report_unlock();
	if (tracer_options.halt_on_error) {
		static const char msg[] = "lockdep-rcu: halt_on_error=1, exiting\n";
		write_all(fd, msg, sizeof(msg) - 1);
		_exit(tracer_options.exitcode ? tracer_options.exitcode : 1);
	}
	errno = report_saved_errno;
	tracer_leave(ts);
}

void report_limit_once(const char *title, const char *detail)
{
	/* A handful of distinct limits: remember the titles already printed. */
	static const char *printed[8];
	for (unsigned i = 0; i < 8; i++) {
		const char *cur = __atomic_load_n(&printed[i], __ATOMIC_ACQUIRE);
		if (cur == title)
			return;
		if (!cur) {
			const char *expected = NULL;
			if (!__atomic_compare_exchange_n(&printed[i], &expected, title, 0,
							 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				if (expected == title)
					return;
				continue;
			}
			char line[256];
			int n = snprintf(line, sizeof(line), "lockdep-rcu: BUG: %s %s; the program keeps running\n",
					 title, detail);
			report_raw_write(line, n > 0 ? (size_t)n : 0);
			return;
		}
	}
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
	unsigned long total = report_count();
	unsigned long suppressed = __atomic_load_n(&suppressed_count, __ATOMIC_RELAXED);
	if ((!total && !suppressed) || !tracer_options.print_summary)
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
	if (n < sizeof(line) - 1)
		line[n++] = '\n';
	report_raw_write(line, n < sizeof(line) ? n : sizeof(line) - 1);
}
