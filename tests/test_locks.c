/* The pthread and C11 lock checks: bad unlock balance, possible recursive
 * locking (reported before the deadlock), held lock freed; failed lock
 * calls that change nothing; condition variables; a lock-heavy correct
 * program; one report per call site. Every buggy scenario sits next to its
 * correct twin in tests/targets/lock_*.c. The lock checks do not depend on
 * the liburcu flavor: everything runs the "memb" build. */
#include <malloc.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>
#include <pthread.h>
#include "harness.h"

#define FLAVOR "memb"

static const struct run_options preloaded = { .preload = 1 };
static const struct run_options plain = { .preload = 0 };
/* The recursive-locking scenarios hang for real after their report. */
static const struct run_options deadlocks = { .preload = 1, .timeout = 3 };

/* ---- reading a run -------------------------------------------------------- */

/* The n-th "site <line>" the scenario printed (n from 1), or -1. */
static int site_line(const struct run *r, int n)
{
	const char *p = r->out;
	int line = -1;
	for (int i = 0; i < n && p; i++) {
		p = strstr(p, "site ");
		if (p && sscanf(p, "site %d", &line) == 1)
			p += 5;
	}
	return p ? line : -1;
}

/* The pid in the first report's header ("lockdep-rcu <version>, pid N"):
 * the main thread's tid too. */
static int report_pid(const struct run *r)
{
	const char *p = strstr(r->err, ", pid ");
	int pid = -1;
	if (p)
		sscanf(p, ", pid %d", &pid);
	return pid;
}

/* The comm of the main thread: the program name cut to 15 characters. */
static const char *comm_of(const char *target, char *buf, size_t size)
{
	snprintf(buf, size, "%s.%s", target, FLAVOR);
	if (size > 15)
		buf[15] = 0;
	return buf;
}

/* Whether a "Call Trace:" of the log has the frame
 * " func+0x.../0x... [target.memb] .../target.c:line". */
static int backtrace_has(const char *log, const char *func, const char *target, int line)
{
	char start[160], end[160];
	snprintf(start, sizeof(start), " %s+0x", func);
	snprintf(end, sizeof(end), "/%s.c:%d", target, line);
	size_t end_len = strlen(end);
	for (const char *trace = log; (trace = strstr(trace, "Call Trace:\n")); ) {
		trace += strlen("Call Trace:\n");
		for (const char *l = trace; *l == ' '; ) {
			const char *nl = strchr(l, '\n');
			if (!nl)
				break;
			if (!strncmp(l, start, strlen(start)) && (size_t)(nl - l) >= end_len &&
			    !strncmp(nl - end_len, end, end_len))
				return 1;
			l = nl + 1;
		}
	}
	return 0;
}

/* ---- the common expectations ---------------------------------------------- */

struct expected {
	const char *target, *scenario;
	const char *title;        /* verbatim kernel title */
	const char *func;         /* function of the buggy call site */
	int site;                 /* the n-th "site" line of stdout is the call site */
	int splats;               /* reports expected */
	int deadlock;             /* the scenario hangs after its report */
};

/* Runs the scenario under the preload and checks what every report has:
 * title, count, site function and file:line in the backtrace, exit code
 * 66 (or, for a deadlock, the report printed before the hang). The caller
 * checks the rest and frees the run. */
static struct run expect_report(const struct expected *e)
{
	const char *s = e->scenario;
	struct run r = run_target(e->target, FLAVOR, s, e->deadlock ? &deadlocks : &preloaded);
	int line = site_line(&r, e->site ? e->site : 1);
	cr_expect_gt(line, 0, "[%s] the scenario printed its site:\n%s", s, r.out);
	cr_expect_eq(splat_count(r.err), e->splats, "[%s] %d report(s) expected:\n%s", s, e->splats, r.err);
	char title[160];
	snprintf(title, sizeof(title), "\n%s\n", e->title);
	cr_expect_eq(count_of(r.err, title), e->splats, "[%s] title '%s':\n%s", s, e->title, r.err);
	cr_expect(backtrace_has(r.err, e->func, e->target, line),
		  "[%s] frame ' %s+0x...%s.c:%d' in the backtrace:\n%s", s, e->func, e->target, line, r.err);
	if (e->deadlock) {
		cr_expect(r.timed_out, "[%s] the scenario deadlocks after the report (exit %d, signal %d)",
			  s, r.exit_code, r.signal);
		cr_expect_eq(r.signal, SIGKILL, "[%s] killed by the harness", s);
		cr_expect_null(strstr(r.out, "not reached"), "[%s] stdout:\n%s", s, r.out);
	} else {
		cr_expect_not(r.timed_out, "[%s] timed out", s);
		cr_expect_eq(r.exit_code, 66, "[%s] exit code %d, stderr:\n%s", s, r.exit_code, r.err);
	}
	return r;
}

/* A correct twin: nothing on stderr, exit 0, and stdout as without the
 * preload (when compare_plain) and containing `want`. */
static void expect_silent(const char *target, const char *scenario, const char *want, int compare_plain)
{
	struct run r = run_target(target, FLAVOR, scenario, &preloaded);
	cr_expect_str_empty(r.err, "[%s %s] expected no report:\n%s", target, scenario, r.err);
	cr_expect_eq(r.exit_code, 0, "[%s %s] exit code %d", target, scenario, r.exit_code);
	cr_expect_not(r.timed_out, "[%s %s] timed out", target, scenario);
	if (want)
		cr_expect(strstr(r.out, want), "[%s %s] '%s' in stdout:\n%s", target, scenario, want, r.out);
	if (compare_plain) {
		struct run p = run_target(target, FLAVOR, scenario, &plain);
		cr_expect_eq(p.exit_code, 0, "[%s %s] plain exit code %d", target, scenario, p.exit_code);
		cr_expect_str_eq(r.out, p.out, "[%s %s] stdout differs with the preload:\n%s\nwithout:\n%s",
				 target, scenario, r.out, p.out);
		run_free(&p);
	}
	run_free(&r);
}

/* ---- 1. bad unlock balance ------------------------------------------------ */

#define BAD_UNLOCK "WARNING: bad unlock balance detected!"
#define UNLOCK_TARGET "lock_unlock_balance"

/* One bad unlock report at the first site, of lock `name`, by the main
 * thread, with "<comm>/<tid> is trying to release lock (<name>) at:" then
 * the site, then "but there are no more locks to release!". */
static struct run expect_bad_unlock_run(const char *scenario, const char *func, const char *name,
					const char *want_out)
{
	struct expected e = { UNLOCK_TARGET, scenario, BAD_UNLOCK, func, 1, 1, 0 };
	struct run r = expect_report(&e);
	char comm[32], want[512];
	comm_of(UNLOCK_TARGET, comm, sizeof(comm));
	snprintf(want, sizeof(want), "%s/%d is trying to release lock (%s) at:\n%s+0x", comm,
		 report_pid(&r), name, func);
	cr_expect(strstr(r.err, want), "[%s] '%s' in:\n%s", scenario, want, r.err);
	snprintf(want, sizeof(want), "/%s.c:%d\nbut there are no more locks to release!\n",
		 UNLOCK_TARGET, site_line(&r, 1));
	cr_expect(strstr(r.err, want), "[%s] site file:line '%s' in:\n%s", scenario, want, r.err);
	snprintf(want, sizeof(want), "no locks held by %s/%d.\n", comm, report_pid(&r));
	cr_expect(strstr(r.err, want), "[%s] '%s' in:\n%s", scenario, want, r.err);
	cr_expect(strstr(r.err, "SUMMARY: lockdep-rcu: 1 report: 1 bad unlock balance\n"), "[%s]\n%s",
		  scenario, r.err);
	/* what the unlock returned, and errno after it, as without the preload */
	cr_expect(strstr(r.out, want_out), "[%s] '%s' in stdout:\n%s", scenario, want_out, r.out);
	struct run p = run_target(UNLOCK_TARGET, FLAVOR, scenario, &plain);
	cr_expect_str_eq(r.out, p.out, "[%s] stdout with the preload:\n%s\nwithout:\n%s", scenario, r.out, p.out);
	run_free(&p);
	return r;
}

static void expect_bad_unlock(const char *scenario, const char *func, const char *name,
			      const char *want_out)
{
	struct run r = expect_bad_unlock_run(scenario, func, name, want_out);
	run_free(&r);
}

Test(locks, unlock_of_never_locked_mutex)
{
	expect_bad_unlock("bug-mutex-never-locked", "mutex_never_locked", "stats_lock", "unlock 0 errno 4242\n");
}

Test(locks, unlock_of_mutex_held_by_another_thread)
{
	/* error-checking mutex: glibc refuses with EPERM, the tracer reports,
	 * naming the holder, which keeps it */
	struct run r = expect_bad_unlock_run("bug-mutex-other-thread", "mutex_held_by_other_thread", "owner_lock",
					 "EPERM=1 errno 4242\n");
	cr_expect(strstr(r.err, "which took it at:\nowner_thread+0x"), "%s", r.err);
	cr_expect(strstr(r.err, "The C library refuses this release (EPERM): "), "%s", r.err);
	run_free(&r);
}

Test(locks, unlock_of_rwlock_not_held)
{
	expect_bad_unlock("bug-rwlock", "rwlock_not_held", "table_lock", "unlock 0 errno 4242\n");
}

Test(locks, unlock_of_spinlock_not_held)
{
	expect_bad_unlock("bug-spin", "spin_not_held", "counter_spin", "unlock 0 errno 4242\n");
}

Test(locks, unlock_of_c11_mtx_not_held)
{
	expect_bad_unlock("bug-mtx", "mtx_not_held", "queue_mtx", "unlock 0 errno 4242\n");
}

Test(locks, balanced_lock_unlock_of_each_kind_is_silent)
{
	expect_silent(UNLOCK_TARGET, "ok-each-kind", "balanced 0 0 0 0 0 0 0 0 0 0 0 0\n", 1);
	expect_silent(UNLOCK_TARGET, "ok-threads", "done\n", 1);
}

Test(locks, recursive_mutex_locked_and_unlocked_twice_is_silent)
{
	expect_silent(UNLOCK_TARGET, "ok-recursive-mutex", "recursive 0 0 0 0\n", 1);
}

Test(locks, rwlock_read_locked_and_unlocked_twice_is_silent)
{
	expect_silent(UNLOCK_TARGET, "ok-rwlock-read-twice", "read twice 0 0 0 0\n", 1);
}

/* ---- 2. possible recursive locking, before the deadlock ------------------- */

#define RECURSIVE "WARNING: possible recursive locking detected"
#define RECURSIVE_TARGET "lock_recursive"

static void expect_recursive(const char *scenario, const char *func, const char *name,
			     const char *held_kind)
{
	struct expected e = { RECURSIVE_TARGET, scenario, RECURSIVE, func, 1, 1, 1 };
	struct run r = expect_report(&e);
	int line = site_line(&r, 1);
	char comm[32], want[512];
	comm_of(RECURSIVE_TARGET, comm, sizeof(comm));
	snprintf(want, sizeof(want), "%s/%d is trying to acquire lock:\n", comm, report_pid(&r));
	cr_expect(strstr(r.err, want), "[%s] '%s' in:\n%s", scenario, want, r.err);
	/* the new acquisition, at the site, then the one already held, at the
	 * line before it (the first lock call) */
	snprintf(want, sizeof(want), "(%s), at: %s+0x", name, func);
	cr_expect_eq(count_of(r.err, want), 2, "[%s] '%s' twice in:\n%s", scenario, want, r.err);
	snprintf(want, sizeof(want), "/%s.c:%d\n\nbut task is already holding lock:\n", RECURSIVE_TARGET, line);
	cr_expect(strstr(r.err, want), "[%s] '%s' in:\n%s", scenario, want, r.err);
	snprintf(want, sizeof(want), "/%s.c:%d\n\nother info that might help us debug this:\n",
		 RECURSIVE_TARGET, line - 1);
	cr_expect(strstr(r.err, want), "[%s] first acquisition '%s' in:\n%s", scenario, want, r.err);
	snprintf(want, sizeof(want), "  lock(%s);\n  lock(%s);\n\n *** DEADLOCK ***\n", name, name);
	cr_expect(strstr(r.err, want), "[%s] '%s' in:\n%s", scenario, want, r.err);
	snprintf(want, sizeof(want), "1 lock held by %s/%d:\n #0: ", comm, report_pid(&r));
	cr_expect(strstr(r.err, want), "[%s] '%s' in:\n%s", scenario, want, r.err);
	snprintf(want, sizeof(want), " (%s){%s}, at: %s+0x", name, held_kind, func);
	cr_expect(strstr(r.err, want), "[%s] '%s' in:\n%s", scenario, want, r.err);
	run_free(&r);
}

Test(locks, relock_of_held_default_mutex_is_reported_before_the_deadlock)
{
	expect_recursive("bug-mutex", "mutex_relock", "cache_lock", "mutex");
}

Test(locks, wrlock_behind_own_rdlock_is_reported_before_the_deadlock)
{
	expect_recursive("bug-rwlock-write-after-read", "rwlock_write_behind_own_read", "route_lock",
			 "rwlock-read");
}

Test(locks, relock_of_held_spinlock_is_reported_before_spinning_forever)
{
	expect_recursive("bug-spin", "spin_relock", "ring_spin", "spinlock");
}

Test(locks, relock_of_held_c11_plain_mtx_is_reported_before_the_deadlock)
{
	expect_recursive("bug-mtx", "mtx_relock", "journal_mtx", "mutex");
}

Test(locks, relock_of_recursive_mutex_is_silent)
{
	expect_silent(RECURSIVE_TARGET, "ok-recursive-mutex", "recursive 0 0 0 0\n", 1);
}

Test(locks, relock_of_errorcheck_mutex_returns_edeadlk_silently)
{
	char want[64];
	snprintf(want, sizeof(want), "errorcheck 0 %d 0 EDEADLK=1\n", EDEADLK);
	expect_silent(RECURSIVE_TARGET, "ok-errorcheck-mutex", want, 1);
}

Test(locks, relock_of_recursive_c11_mtx_is_silent)
{
	char want[64];
	snprintf(want, sizeof(want), "mtx recursive 0 0 0 0 success=%d\n", thrd_success);
	expect_silent(RECURSIVE_TARGET, "ok-recursive-mtx", want, 1);
}

/* ---- 3. held lock freed ----------------------------------------------------- */

/* What glibc's malloc_usable_size() says of a block the size of a mutex:
 * the range a free() gives back. */
static unsigned long malloc_usable_size_of_mutex(void)
{
	void *p = malloc(sizeof(pthread_mutex_t));
	unsigned long n = malloc_usable_size(p);
	free(p);
	return n;
}

#define FREED "BUG: held lock freed!"
#define DESTROY_TARGET "lock_destroy_held"

/* One report at the destroy site (the second "site"), naming the memory
 * range of the lock (its size) and the lock held there, taken at the first
 * "site"; stdout (what destroy returned) the same as without the preload. */
static void expect_freed(const char *scenario, const char *func, const char *name,
			 const char *held_kind, unsigned long size, const char *want_out)
{
	struct expected e = { DESTROY_TARGET, scenario, FREED, func, 2, 1, 0 };
	struct run r = expect_report(&e);
	char comm[32], want[512];
	comm_of(DESTROY_TARGET, comm, sizeof(comm));
	snprintf(want, sizeof(want), "%s/%d is freeing memory ", comm, report_pid(&r));
	const char *p = strstr(r.err, want);
	cr_expect(p, "[%s] '%s' in:\n%s", scenario, want, r.err);
	unsigned long from = 0, to = 0;
	if (p) {
		cr_expect_eq(sscanf(p + strlen(want), "%lx-%lx", &from, &to), 2, "[%s] range:\n%s", scenario, p);
		cr_expect_eq(to - from + 1, size, "[%s] %lx-%lx is not %lu bytes", scenario, from, to, size);
	}
	cr_expect(strstr(r.err, ", with a lock still held there!\n #0: "), "[%s]\n%s", scenario, r.err);
	/* A lock initialized by a call is named after its class, the init
	 * site ("func+0x1e"); a static one after its variable. */
	if (name[strlen(name) - 1] == '+')
		snprintf(want, sizeof(want), "%016lx (%s0x", from, name);
	else
		snprintf(want, sizeof(want), "%016lx (%s){%s}, at: %s+0x", from, name, held_kind, func);
	const char *held = strstr(r.err, want);
	cr_expect(held, "[%s] '%s' in:\n%s", scenario, want, r.err);
	snprintf(want, sizeof(want), "){%s}, at: %s+0x", held_kind, func);
	cr_expect(held && strstr(held, want), "[%s] '%s' in:\n%s", scenario, want, r.err);
	snprintf(want, sizeof(want), "/%s.c:%d\n", DESTROY_TARGET, site_line(&r, 1));
	const char *eol = held ? strchr(held, '\n') : NULL;
	const char *at = held ? strstr(held, want) : NULL;
	cr_expect(at && eol && at + strlen(want) - 1 == eol, "[%s] acquired at '%s' (end of the #0 line):\n%s",
		  scenario, want, r.err);
	cr_expect(strstr(r.err, "SUMMARY: lockdep-rcu: 1 report: 1 held lock freed\n"), "[%s]\n%s",
		  scenario, r.err);
	/* The preload returns what glibc returns (EBUSY for a locked mutex),
	 * and leaves errno as it was. */
	struct run p2 = run_target(DESTROY_TARGET, FLAVOR, scenario, &plain);
	cr_expect_str_eq(r.out, p2.out, "[%s] stdout with the preload:\n%s\nwithout:\n%s", scenario, r.out, p2.out);
	cr_expect(strstr(r.out, want_out), "[%s] '%s' in stdout:\n%s", scenario, want_out, r.out);
	run_free(&p2);
	run_free(&r);
}

Test(locks, destroy_of_held_mutex_returns_ebusy_and_is_reported)
{
	char want[64];
	snprintf(want, sizeof(want), "destroy %d EBUSY=1 errno 4242\nunlock 0 destroy 0\n", EBUSY);
	expect_freed("bug-mutex", "destroy_held_mutex", "session_lock", "mutex", sizeof(pthread_mutex_t), want);
}

Test(locks, destroy_of_held_heap_mutex_is_reported)
{
	char want[64];
	snprintf(want, sizeof(want), "destroy %d errno 4242\n", EBUSY);
	expect_freed("bug-heap-mutex", "destroy_held_heap_mutex", "destroy_held_heap_mutex+", "mutex",
		     sizeof(pthread_mutex_t), want);
}

/* Memory given back with a lock held there, no destroy: reported as the
 * kernel's debug_check_no_locks_freed() does, and the thread goes on (the
 * lock the memory held is forgotten: an acquisition after the munmap read
 * it and crashed). */
Test(locks, munmap_or_free_of_memory_with_a_held_lock_is_reported)
{
	expect_freed("bug-munmap-mutex", "munmap_held_mutex", "munmap_held_mutex+", "mutex", 4096,
		     "munmap 0 errno 4242\n");
	expect_freed("bug-free-mutex", "free_held_mutex", "free_held_mutex+", "mutex",
		     malloc_usable_size_of_mutex(), "freed errno 4242\n");
	/* the twin: released first, then given back */
	expect_silent(DESTROY_TARGET, "ok-munmap-free", "munmap 0\n", 1);
}

Test(locks, destroy_of_write_held_rwlock_is_reported)
{
	expect_freed("bug-rwlock", "destroy_held_rwlock", "index_lock", "rwlock-write",
		     sizeof(pthread_rwlock_t), "destroy 0 errno 4242\n");
}

Test(locks, destroy_of_read_held_rwlock_is_reported)
{
	expect_freed("bug-rwlock-read", "destroy_read_held_rwlock", "index_lock", "rwlock-read",
		     sizeof(pthread_rwlock_t), "destroy 0 errno 4242\n");
}

Test(locks, destroy_of_held_spinlock_is_reported)
{
	expect_freed("bug-spin", "destroy_held_spin", "slot_spin", "spinlock",
		     sizeof(pthread_spinlock_t), "destroy 0 errno 4242\n");
}

Test(locks, destroy_of_held_c11_mtx_is_reported)
{
	expect_freed("bug-mtx", "destroy_held_mtx", "pool_mtx", "mutex", sizeof(mtx_t), "destroyed errno 4242\n");
}

Test(locks, unlock_then_destroy_is_silent)
{
	expect_silent(DESTROY_TARGET, "ok", "destroy 0 0 0 0 0 0 0 0 0 0 0\n", 1);
	expect_silent(DESTROY_TARGET, "ok-heap", "destroy 0\n", 1);
}

/* ---- 4. failed lock calls change nothing ----------------------------------- */

#define FAILED_TARGET "lock_failed_calls"
#define SENTINEL 4242   /* errno the target sets before each call */

/* Silent, and every return value and errno as without the preload; each of
 * `lines` (a NULL-terminated list) in stdout. */
static void expect_failures_unchanged(const char *scenario, const char *const *lines)
{
	expect_silent(FAILED_TARGET, scenario, "done\n", 1);
	struct run r = run_target(FAILED_TARGET, FLAVOR, scenario, &preloaded);
	for (; *lines; lines++)
		cr_expect(strstr(r.out, *lines), "[%s] '%s' in stdout:\n%s", scenario, *lines, r.out);
	run_free(&r);
}

#define RET(name, value) name " ret=" #value " errno=4242\n"

Test(locks, trylock_refused_with_ebusy_changes_nothing)
{
	char busy[64];
	snprintf(busy, sizeof(busy), "mtx_trylock work_mtx ret=%d errno=%d\n", thrd_busy, SENTINEL);
	_Static_assert(EBUSY == 16, "the lines below spell EBUSY as 16");
	const char *const lines[] = {
		RET("trylock data_lock", 16), RET("trylock checked_lock", 16),
		RET("tryrdlock map_lock", 16), RET("trywrlock map_lock", 16),
		RET("trywrlock log_lock", 16), RET("spin_trylock seq_spin", 16), busy,
		RET("lock data_lock", 0), RET("unlock data_lock", 0),
		RET("mtx_unlock work_mtx", 0), NULL,
	};
	expect_failures_unchanged("ok-trylock-busy", lines);
}

/* Also with lock_stat on, whose counting took the lock with a trylock
 * first: the clock variants then returned 0 with the lock taken where glibc
 * refuses the clock (EINVAL, nothing taken). */
Test(locks, an_unsupported_clock_is_refused_as_without_the_preload)
{
	const char *const lines[] = {
		RET("clocklock cputime clock", 22), RET("trylock after", 0), RET("unlock after", 0),
		RET("clockwrlock cputime clock", 22), RET("clockrdlock cputime clock", 22),
		RET("trywrlock after", 0), RET("unlock after wr", 0), NULL,
	};
	expect_failures_unchanged("ok-unsupported-clock", lines);
	struct run_options with_stat = { .preload = 1, .options = "lock_stat=1", .timeout = 20 };
	struct run r = run_target(FAILED_TARGET, FLAVOR, "ok-unsupported-clock", &with_stat);
	for (const char *const *line = lines; *line; line++)
		cr_expect(strstr(r.out, *line), "lock_stat=1: '%s' in stdout:\n%s", *line, r.out);
	run_free(&r);
}

Test(locks, trylock_of_own_held_lock_refused_changes_nothing)
{
	const char *const lines[] = {
		RET("trylock data_lock", 16), RET("tryrdlock after wrlock", 16),
		RET("spin_trylock seq_spin", 16), RET("unlock data_lock", 0), NULL,
	};
	expect_failures_unchanged("ok-trylock-own", lines);
}

Test(locks, timed_locks_that_time_out_change_nothing)
{
	_Static_assert(ETIMEDOUT == 110 && EINVAL == 22, "the lines below spell errno values");
	char timedout[64];
	snprintf(timedout, sizeof(timedout), "mtx_timedlock work_mtx ret=%d errno=%d\n", thrd_timedout,
		 SENTINEL);
	const char *const lines[] = {
		RET("timedlock data_lock", 110), RET("clocklock data_lock", 110),
		RET("timedlock checked_lock", 110), RET("timedrdlock map_lock", 110),
		RET("timedwrlock map_lock", 110), RET("timedwrlock log_lock", 110),
		RET("clockwrlock log_lock", 110), RET("clockrdlock map_lock", 110), timedout,
		RET("timedlock bad deadline", 22), RET("timedwrlock bad deadline", 22),
		RET("timedlock past deadline", 110), RET("wrlock log_lock", 0), NULL,
	};
	expect_failures_unchanged("ok-timedlock-timeout", lines);
}

Test(locks, timedlock_of_own_errorcheck_mutex_returns_edeadlk_silently)
{
	_Static_assert(EDEADLK == 35, "the lines below spell EDEADLK as 35");
	const char *const lines[] = {
		RET("timedlock checked_lock", 35), RET("unlock checked_lock", 0), NULL,
	};
	expect_failures_unchanged("ok-timedlock-own-errorcheck", lines);
}

Test(locks, rwlock_relock_refused_with_edeadlk_changes_nothing)
{
	const char *const lines[] = {
		RET("wrlock map_lock again", 35), RET("rdlock map_lock", 35),
		RET("timedwrlock map_lock", 35), RET("unlock map_lock", 0), NULL,
	};
	expect_failures_unchanged("ok-rwlock-relock-edeadlk", lines);
}

/* pthread_mutex_lock, _trylock and _timedlock of a robust mutex whose owner
 * died return EOWNERDEAD with the mutex ACQUIRED: the correct
 * pthread_mutex_consistent() + unlock must not be a bad unlock balance. */
Test(locks, robust_mutex_acquired_with_eownerdead_counts_as_held)
{
	_Static_assert(EOWNERDEAD == 130, "the lines below spell EOWNERDEAD as 130");
	const char *const lines[] = {
		RET("lock robust", 130), RET("trylock robust", 130), RET("timedlock robust", 130),
		RET("consistent", 0), RET("unlock robust", 0), RET("unlock robust again", 0), NULL,
	};
	expect_failures_unchanged("ok-robust-owner-died", lines);
}

/* ---- 5. condition variables ------------------------------------------------- */

#define COND_TARGET "lock_condvar"

Test(locks, pthread_cond_wait_producer_consumer_is_silent)
{
	expect_silent(COND_TARGET, "ok-cond-wait", "sum 2001000\n", 1);
}

Test(locks, pthread_cond_timedwait_producer_consumer_is_silent)
{
	expect_silent(COND_TARGET, "ok-cond-timedwait", "sum 2001000\n", 1);
}

Test(locks, pthread_cond_clockwait_producer_consumer_is_silent)
{
	expect_silent(COND_TARGET, "ok-cond-clockwait", "sum 2001000\n", 1);
}

Test(locks, cond_waits_timing_out_hold_the_mutex_again)
{
	char want[96];
	snprintf(want, sizeof(want), "timedwait %d clockwait %d unlock 0 ETIMEDOUT=1\n", ETIMEDOUT, ETIMEDOUT);
	expect_silent(COND_TARGET, "ok-cond-timeouts", want, 1);
}

Test(locks, c11_cnd_wait_producer_consumer_is_silent)
{
	expect_silent(COND_TARGET, "ok-cnd-wait", "sum 2001000\n", 1);
}

Test(locks, c11_cnd_timedwait_producer_consumer_is_silent)
{
	expect_silent(COND_TARGET, "ok-cnd-timedwait", "sum 2001000\n", 1);
}

Test(locks, c11_cnd_timedwait_timing_out_holds_the_mutex_again)
{
	char want[96];
	snprintf(want, sizeof(want), "cnd_timedwait %d unlock 0 timedout=1\n", thrd_timedout);
	expect_silent(COND_TARGET, "ok-cnd-timeout", want, 1);
}

Test(locks, cancellation_inside_cond_wait_with_unlocking_cleanup_is_silent)
{
	expect_silent(COND_TARGET, "ok-cancel-in-wait", "cancelled 1 trylock 0 unlock 0\n", 1);
	expect_silent(COND_TARGET, "ok-cancel-in-timedwait", "cancelled 1 trylock 0 unlock 0\n", 1);
}

/* The twins that show the silence above means something: one unlock too
 * many after a wait, and lockdep_assert_held() after the unlock. */
Test(locks, one_unlock_too_many_after_a_cond_wait_is_reported)
{
	struct expected e = { COND_TARGET, "bug-unlock-twice-after-wait", BAD_UNLOCK,
			      "unlock_twice_after_wait", 1, 1, 0 };
	struct run r = expect_report(&e);
	cr_expect(strstr(r.err, " is trying to release lock (queue_lock) at:\n"), "%s", r.err);
	run_free(&r);
}

Test(locks, lockdep_assert_held_after_unlocking_a_waited_mutex_fires)
{
	struct run r = run_target(COND_TARGET, FLAVOR, "bug-assert-held-after-unlock", &preloaded);
	char comm[32], want[256];
	comm_of(COND_TARGET, comm, sizeof(comm));
	snprintf(want, sizeof(want), "WARNING: %s/%d at tests/targets/%s.c:%d\n", comm, report_pid(&r),
		 COND_TARGET, site_line(&r, 1));
	cr_expect(strstr(r.err, want), "'%s' in:\n%s", want, r.err);
	cr_expect(strstr(r.err, "lockdep_assert_held(&queue_lock) failed"), "%s", r.err);
	cr_expect(backtrace_has(r.err, "assert_held_after_unlock", COND_TARGET, site_line(&r, 1)), "%s", r.err);
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	cr_expect_eq(r.exit_code, 66);
	run_free(&r);
}

/* ---- 6. a correct lock-heavy program ----------------------------------------- */

Test(locks, lock_heavy_correct_program_is_silent)
{
	expect_silent("lock_heavy_ok", "ok", " ok 1\n", 1);
}

/* ---- 7. once per call site ----------------------------------------------------- */

Test(locks, same_buggy_unlock_site_hit_100_times_reports_once)
{
	struct expected e = { UNLOCK_TARGET, "bug-same-site-100", BAD_UNLOCK,
			      "same_site_hundred_times", 1, 1, 0 };
	struct run r = expect_report(&e);
	cr_expect(strstr(r.err, "SUMMARY: lockdep-rcu: 1 report: 1 bad unlock balance\n"), "%s", r.err);
	cr_expect(strstr(r.out, "done\n"), "all 100 unlocks ran:\n%s", r.out);
	run_free(&r);
}

Test(locks, two_buggy_unlock_sites_report_twice)
{
	struct expected e = { UNLOCK_TARGET, "bug-two-sites", BAD_UNLOCK, "two_sites", 1, 2, 0 };
	struct run r = expect_report(&e);
	int second = site_line(&r, 2);
	cr_expect_gt(second, site_line(&r, 1), "%s", r.out);
	cr_expect(backtrace_has(r.err, "two_sites", UNLOCK_TARGET, second), "second site %d:\n%s", second, r.err);
	cr_expect(strstr(r.err, " is trying to release lock (first_lock) at:\n"), "%s", r.err);
	cr_expect(strstr(r.err, " is trying to release lock (second_lock) at:\n"), "%s", r.err);
	cr_expect(strstr(r.err, "SUMMARY: lockdep-rcu: 2 reports: 2 bad unlock balance\n"), "%s", r.err);
	run_free(&r);
}

/* ---- without the preload -------------------------------------------------------- */

Test(locks, buggy_scenarios_print_nothing_without_the_preload)
{
	static const char *const bugs[][2] = {
		{ UNLOCK_TARGET, "bug-mutex-never-locked" }, { UNLOCK_TARGET, "bug-two-sites" },
		{ DESTROY_TARGET, "bug-mutex" }, { DESTROY_TARGET, "bug-spin" },
		{ COND_TARGET, "bug-unlock-twice-after-wait" },
	};
	for (size_t i = 0; i < sizeof(bugs) / sizeof(bugs[0]); i++) {
		struct run r = run_target(bugs[i][0], FLAVOR, bugs[i][1], &plain);
		cr_expect_str_empty(r.err, "[%s %s]\n%s", bugs[i][0], bugs[i][1], r.err);
		cr_expect_eq(r.exit_code, 0, "[%s %s]", bugs[i][0], bugs[i][1]);
		run_free(&r);
	}
}
