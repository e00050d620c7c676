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
#include <stdlib.h>
#include "harness.h"
#include "records.h"

#define FLAVOR "memb"

static const struct run_options preloaded = { .preload = 1 };
static const struct run_options plain = { .preload = 0 };
/* The recursive-locking scenarios hang for real after their report. */
static const struct run_options deadlocks = { .preload = 1, .timeout = 3 };

/* ---- reading a run -------------------------------------------------------- */

/* The comm of the main thread: the program name cut to 15 characters. */
static const char *comm_of(const char *target, char *buf, size_t size)
{
	snprintf(buf, size, "%s.%s", target, FLAVOR);
	if (size > 15)
		buf[15] = 0;
	return buf;
}

/* ---- the common expectations ---------------------------------------------- */

struct expected {
	const char *target, *scenario;
	const char *kind;         /* the record kind */
	const char *title;        /* verbatim kernel title */
	const char *func;         /* function of the buggy call site */
	int site;                 /* the n-th "site" line of stdout is the call site */
	int splats;               /* reports expected */
	int deadlock;             /* the scenario hangs after its report */
};

/* Runs the scenario under the preload and checks what every report has:
 * its kind and title, their count and no other report, the site's
 * function and file:line, the innermost frame of the Call Trace there,
 * reported by the main thread (its tid the pid, its comm the program's);
 * exit code 66 (or, for a deadlock, the report written before the hang).
 * The caller checks the rest and frees the records. */
static struct run_records expect_report(const struct expected *e)
{
	const char *s = e->scenario;
	struct run_records rr = run_target_records(e->target, FLAVOR, s, e->deadlock ? &deadlocks : &preloaded);
	int line = target_site_line(&rr.run, e->site ? e->site : 1);
	cr_expect_gt(line, 0, "[%s] the scenario printed its site:\n%s", s, rr.context);
	expect_records(&rr, e->kind, e->splats);
	expect_records(&rr, NULL, e->splats);
	char path[128], comm[32];
	snprintf(path, sizeof(path), "tests/targets/%s.c", e->target);
	const char *file = path;
	comm_of(e->target, comm, sizeof(comm));
	for (size_t i = 0; i < rr.count; i++) {
		const struct record *r = &rr.records[i];
		cr_expect_str_eq(r->title ? r->title : "", e->title, "[%s] title of record %zu\n%s", s, i, rr.context);
		cr_expect_eq(r->tid, r->pid, "[%s] by the main thread\n%s", s, rr.context);
		cr_expect_str_eq(r->comm ? r->comm : "", comm, "[%s] comm\n%s", s, rr.context);
	}
	const struct record *r = expect_record_at(&rr, e->kind, e->func, file, line);
	if (r)
		cr_expect(r->frame_count && frame_matches(&r->frames[0], e->func, file, line),
			  "[%s] the Call Trace starts at %s %s:%d\n%s", s, e->func, file, line, rr.context);
	if (e->deadlock) {
		cr_expect(rr.run.timed_out, "[%s] the scenario deadlocks after the report (exit %d, signal %d)",
			  s, rr.run.exit_code, rr.run.signal);
		cr_expect_eq(rr.run.signal, SIGKILL, "[%s] killed by the harness", s);
		cr_expect_null(strstr(rr.run.out, "not reached"), "[%s] stdout:\n%s", s, rr.run.out);
	} else {
		cr_expect_not(rr.run.timed_out, "[%s] timed out", s);
		cr_expect_eq(rr.run.exit_code, 66, "[%s] exit code %d\n%s", s, rr.run.exit_code, rr.context);
	}
	return rr;
}

/* The record of e's kind at its site. */
static const struct record *site_record(const struct run_records *rr, const struct expected *e)
{
	char file[128];
	snprintf(file, sizeof(file), "%s.c", e->target);
	return record_at(rr, e->kind, e->func, file, target_site_line(&rr->run, e->site ? e->site : 1));
}

/* The record's message is exactly want. */
static void expect_message(const struct run_records *rr, const struct record *r, const char *want)
{
	if (r)
		cr_expect_str_eq(r->message ? r->message : "", want, "message\n%s", rr->context);
}

/* A correct twin: no record, nothing in the log or on stderr, exit 0, and
 * stdout as without the preload (when compare_plain) and containing `want`. */
static void expect_silent(const char *target, const char *scenario, const char *want, int compare_plain)
{
	struct run_records rr = run_target_records(target, FLAVOR, scenario, &preloaded);
	expect_no_reports(&rr);
	cr_expect_not(rr.run.timed_out, "[%s %s] timed out", target, scenario);
	if (want)
		cr_expect(strstr(rr.run.out, want), "[%s %s] '%s' in stdout:\n%s", target, scenario, want, rr.run.out);
	if (compare_plain) {
		struct run p = run_target(target, FLAVOR, scenario, &plain);
		cr_expect_eq(p.exit_code, 0, "[%s %s] plain exit code %d", target, scenario, p.exit_code);
		cr_expect_str_eq(rr.run.out, p.out, "[%s %s] stdout differs with the preload:\n%s\nwithout:\n%s",
				 target, scenario, rr.run.out, p.out);
		run_free(&p);
	}
	run_records_free(&rr);
}

/* ---- 1. bad unlock balance ------------------------------------------------ */

#define BAD_UNLOCK_KIND "bad_unlock"
#define BAD_UNLOCK "WARNING: bad unlock balance detected!"
#define UNLOCK_TARGET "lock_unlock_balance"

/* One bad unlock report at the first site, of lock `name` (of C type
 * `type`), by the main thread, saying "<comm>/<tid> is trying to release
 * lock (<name>) at:", the site, then "but there are no more locks to
 * release!", and no lock held. */
static struct run_records expect_bad_unlock_run(const char *scenario, const char *func, const char *name,
						const char *type, const char *want_out)
{
	struct expected e = { UNLOCK_TARGET, scenario, BAD_UNLOCK_KIND, BAD_UNLOCK, func, 1, 1, 0 };
	struct run_records rr = expect_report(&e);
	const struct record *r = site_record(&rr, &e);
	char comm[32], want[512], list[256];
	comm_of(UNLOCK_TARGET, comm, sizeof(comm));
	snprintf(want, sizeof(want), "%s/%ld is trying to release lock (%s) at:", comm, r ? r->pid : -1L, name);
	expect_message(&rr, r, want);
	/* the lock released, and none held ("no locks held by ...") */
	snprintf(list, sizeof(list), "released:%s{%s}", name, type);
	expect_lock_list(&rr, r, list);
	/* the kernel's words after the site */
	cr_expect(strstr(rr.log, "\nbut there are no more locks to release!\n"), "[%s]\n%s", scenario, rr.context);
	cr_expect(strstr(rr.log, "SUMMARY: lockdep-rcu: 1 report: 1 bad unlock balance\n"), "[%s]\n%s",
		  scenario, rr.context);
	/* what the unlock returned, and errno after it, as without the preload */
	cr_expect(strstr(rr.run.out, want_out), "[%s] '%s' in stdout:\n%s", scenario, want_out, rr.run.out);
	struct run p = run_target(UNLOCK_TARGET, FLAVOR, scenario, &plain);
	cr_expect_str_eq(rr.run.out, p.out, "[%s] stdout with the preload:\n%s\nwithout:\n%s", scenario, rr.run.out,
			 p.out);
	run_free(&p);
	return rr;
}

static void expect_bad_unlock(const char *scenario, const char *func, const char *name, const char *type,
			      const char *want_out)
{
	struct run_records rr = expect_bad_unlock_run(scenario, func, name, type, want_out);
	run_records_free(&rr);
}

Test(locks, unlock_of_never_locked_mutex)
{
	expect_bad_unlock("bug-mutex-never-locked", "mutex_never_locked", "stats_lock", "pthread_mutex_t",
			  "unlock 0 errno 4242\n");
}

Test(locks, unlock_of_mutex_held_by_another_thread)
{
	/* error-checking mutex: glibc refuses with EPERM, the tracer reports,
	 * naming the holder, which keeps it: the lock released was taken by
	 * owner_thread */
	struct run_records rr = expect_bad_unlock_run("bug-mutex-other-thread", "mutex_held_by_other_thread",
						      "owner_lock", "pthread_mutex_t", "EPERM=1 errno 4242\n");
	const struct record *r = record_nth(&rr, BAD_UNLOCK_KIND, 0);
	const struct record_lock *l = r ? record_lock(r, "released", "owner_lock") : NULL;
	cr_expect(l && l->has_acquired_at && frame_matches(&l->acquired_at, "owner_thread", UNLOCK_TARGET ".c", 0),
		  "taken by owner_thread\n%s", rr.context);
	cr_expect(strstr(rr.log, "The C library refuses this release (EPERM): "), "%s", rr.context);
	run_records_free(&rr);
}

Test(locks, unlock_of_rwlock_not_held)
{
	expect_bad_unlock("bug-rwlock", "rwlock_not_held", "table_lock", "pthread_rwlock_t", "unlock 0 errno 4242\n");
}

Test(locks, unlock_of_spinlock_not_held)
{
	expect_bad_unlock("bug-spin", "spin_not_held", "counter_spin", "pthread_spinlock_t", "unlock 0 errno 4242\n");
}

Test(locks, unlock_of_c11_mtx_not_held)
{
	expect_bad_unlock("bug-mtx", "mtx_not_held", "queue_mtx", "mtx_t", "unlock 0 errno 4242\n");
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

#define RECURSIVE_KIND "recursive_locking"
#define RECURSIVE "WARNING: possible recursive locking detected"
#define RECURSIVE_TARGET "lock_recursive"

/* The new acquisition of lock `name` (of C type `type`) at the site, the
 * one already held, taken at the line before it (the first lock call), and
 * the one lock held (its kind `held_kind`) taken there. */
static void expect_recursive(const char *scenario, const char *func, const char *name, const char *type,
			     const char *held_kind)
{
	struct expected e = { RECURSIVE_TARGET, scenario, RECURSIVE_KIND, RECURSIVE, func, 1, 1, 1 };
	struct run_records rr = expect_report(&e);
	const struct record *r = site_record(&rr, &e);
	int line = target_site_line(&rr.run, 1);
	char comm[32], want[512];
	comm_of(RECURSIVE_TARGET, comm, sizeof(comm));
	snprintf(want, sizeof(want), "%s/%ld is trying to acquire lock:", comm, r ? r->pid : -1L);
	expect_message(&rr, r, want);
	snprintf(want, sizeof(want), "acquiring:%s{%s} holding:%s{%s} held:%s{%s}", name, type, name, type, name,
		 held_kind);
	expect_lock_list(&rr, r, want);
	if (r) {
		const struct record_lock *holding = record_lock(r, "holding", name);
		const struct record_lock *held = record_lock(r, "held", name);
		cr_expect(holding && holding->has_acquired_at &&
			  frame_matches(&holding->acquired_at, func, RECURSIVE_TARGET ".c", line - 1),
			  "[%s] already holding, taken at %s:%d\n%s", scenario, func, line - 1, rr.context);
		cr_expect(held && held->has_acquired_at &&
			  frame_matches(&held->acquired_at, func, RECURSIVE_TARGET ".c", line - 1),
			  "[%s] held, taken at %s:%d\n%s", scenario, func, line - 1, rr.context);
	}
	/* the kernel's scenario, which only the text draws */
	snprintf(want, sizeof(want), "  lock(%s);\n  lock(%s);\n\n *** DEADLOCK ***\n", name, name);
	cr_expect(strstr(rr.log, want), "[%s] '%s' in:\n%s", scenario, want, rr.context);
	run_records_free(&rr);
}

Test(locks, relock_of_held_default_mutex_is_reported_before_the_deadlock)
{
	expect_recursive("bug-mutex", "mutex_relock", "cache_lock", "pthread_mutex_t", "mutex");
}

Test(locks, wrlock_behind_own_rdlock_is_reported_before_the_deadlock)
{
	expect_recursive("bug-rwlock-write-after-read", "rwlock_write_behind_own_read", "route_lock",
			 "pthread_rwlock_t", "rwlock-read");
}

Test(locks, relock_of_held_spinlock_is_reported_before_spinning_forever)
{
	expect_recursive("bug-spin", "spin_relock", "ring_spin", "pthread_spinlock_t", "spinlock");
}

Test(locks, relock_of_held_c11_plain_mtx_is_reported_before_the_deadlock)
{
	expect_recursive("bug-mtx", "mtx_relock", "journal_mtx", "pthread_mutex_t", "mutex");
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

#define FREED_KIND "held_lock_freed"
#define FREED "BUG: held lock freed!"
#define DESTROY_TARGET "lock_destroy_held"

/* One report at the destroy site (the second "site"), naming the memory
 * range of the lock (its size), starting at the lock, and the lock held
 * there, taken at the first "site", as the one lock freed and the one lock
 * held; stdout (what destroy returned) the same as without the preload. */
static void expect_freed(const char *scenario, const char *func, const char *name,
			 const char *held_kind, unsigned long size, const char *want_out)
{
	struct expected e = { DESTROY_TARGET, scenario, FREED_KIND, FREED, func, 2, 1, 0 };
	struct run_records rr = expect_report(&e);
	const struct record *r = site_record(&rr, &e);
	char comm[32], want[512], prefix[128];
	comm_of(DESTROY_TARGET, comm, sizeof(comm));
	snprintf(want, sizeof(want), "%s/%ld is freeing memory ", comm, r ? r->pid : -1L);
	const char *message = r && r->message ? r->message : "";
	cr_expect(!strncmp(message, want, strlen(want)), "[%s] message starting '%s'\n%s", scenario, want, rr.context);
	unsigned long from = 0, to = 0;
	if (!strncmp(message, want, strlen(want))) {
		cr_expect_eq(sscanf(message + strlen(want), "%lx-%lx", &from, &to), 2, "[%s] range:\n%s", scenario,
			     rr.context);
		cr_expect_eq(to - from + 1, size, "[%s] %lx-%lx is not %lu bytes", scenario, from, to, size);
	}
	snprintf(want + strlen(want), sizeof(want) - strlen(want), "%016lx-%016lx, with a lock still held there!",
		 from, to);
	expect_message(&rr, r, want);
	/* A lock initialized by a call is named after its class, the init
	 * site ("func+0x1e"); a static one after its variable. */
	if (name[strlen(name) - 1] == '+')
		snprintf(prefix, sizeof(prefix), "%s0x*", name);
	else
		snprintf(prefix, sizeof(prefix), "%s", name);
	expect_lock(&rr, r, "freed", prefix, held_kind);
	expect_lock(&rr, r, "held", prefix, held_kind);
	if (r) {
		cr_expect_eq(record_lock_count(r, NULL), 2, "[%s] one lock freed, one held\n%s", scenario, rr.context);
		cr_expect_eq(record_lock_count(r, "freed"), 1, "[%s]\n%s", scenario, rr.context);
		int line = target_site_line(&rr.run, 1);
		for (size_t i = 0; i < r->lock_count; i++) {
			const struct record_lock *l = &r->locks[i];
			unsigned long address = l->address ? strtoul(l->address, NULL, 16) : 0;
			cr_expect_eq(address, from, "[%s] the %s lock at %lx\n%s", scenario, l->role, from, rr.context);
			cr_expect(l->has_acquired_at && frame_matches(&l->acquired_at, func, DESTROY_TARGET ".c", line),
				  "[%s] the %s lock acquired at %s %s.c:%d\n%s", scenario, l->role, func, DESTROY_TARGET,
				  line, rr.context);
		}
	}
	cr_expect(strstr(rr.log, "SUMMARY: lockdep-rcu: 1 report: 1 held lock freed\n"), "[%s]\n%s",
		  scenario, rr.context);
	/* The preload returns what glibc returns (EBUSY for a locked mutex),
	 * and leaves errno as it was. */
	struct run p2 = run_target(DESTROY_TARGET, FLAVOR, scenario, &plain);
	cr_expect_str_eq(rr.run.out, p2.out, "[%s] stdout with the preload:\n%s\nwithout:\n%s", scenario, rr.run.out,
			 p2.out);
	cr_expect(strstr(rr.run.out, want_out), "[%s] '%s' in stdout:\n%s", scenario, want_out, rr.run.out);
	run_free(&p2);
	run_records_free(&rr);
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
	struct expected e = { COND_TARGET, "bug-unlock-twice-after-wait", BAD_UNLOCK_KIND, BAD_UNLOCK,
			      "unlock_twice_after_wait", 1, 1, 0 };
	struct run_records rr = expect_report(&e);
	const struct record *r = site_record(&rr, &e);
	char comm[32], want[256];
	comm_of(COND_TARGET, comm, sizeof(comm));
	snprintf(want, sizeof(want), "%s/%ld is trying to release lock (queue_lock) at:", comm, r ? r->pid : -1L);
	expect_message(&rr, r, want);
	expect_lock_list(&rr, r, "released:queue_lock{pthread_mutex_t}");
	run_records_free(&rr);
}

Test(locks, lockdep_assert_held_after_unlocking_a_waited_mutex_fires)
{
	struct expected e = { COND_TARGET, "bug-assert-held-after-unlock", "lockdep_assertion", NULL,
			      "assert_held_after_unlock", 1, 1, 0 };
	char comm[32], title[256];
	comm_of(COND_TARGET, comm, sizeof(comm));
	/* the title names the thread and the site: checked below */
	struct run_records rr = run_target_records(COND_TARGET, FLAVOR, e.scenario, &preloaded);
	int line = target_site_line(&rr.run, 1);
	expect_records(&rr, e.kind, 1);
	expect_records(&rr, NULL, 1);
	const struct record *r = expect_record_at(&rr, e.kind, e.func, COND_TARGET ".c", line);
	if (r) {
		snprintf(title, sizeof(title), "WARNING: %s/%ld at tests/targets/%s.c:%d", comm, r->pid, COND_TARGET,
			 line);
		cr_expect_str_eq(r->title ? r->title : "", title, "title\n%s", rr.context);
		cr_expect_eq(r->tid, r->pid, "by the main thread\n%s", rr.context);
		cr_expect(r->frame_count && frame_matches(&r->frames[0], e.func, COND_TARGET ".c", line),
			  "the Call Trace starts at the site\n%s", rr.context);
		snprintf(title, sizeof(title), "tests/targets/%s.c:%d lockdep_assert_held(&queue_lock) failed: "
			 "the lock is not held", COND_TARGET, line);
		expect_message(&rr, r, title);
		cr_expect_eq(record_lock_count(r, NULL), 0, "no lock held\n%s", rr.context);
	}
	cr_expect_eq(rr.run.exit_code, 66, "%s", rr.context);
	run_records_free(&rr);
}

/* ---- 6. a correct lock-heavy program ----------------------------------------- */

Test(locks, lock_heavy_correct_program_is_silent)
{
	expect_silent("lock_heavy_ok", "ok", " ok 1\n", 1);
}

/* ---- 7. once per call site ----------------------------------------------------- */

Test(locks, same_buggy_unlock_site_hit_100_times_reports_once)
{
	struct expected e = { UNLOCK_TARGET, "bug-same-site-100", BAD_UNLOCK_KIND, BAD_UNLOCK,
			      "same_site_hundred_times", 1, 1, 0 };
	struct run_records rr = expect_report(&e);
	cr_expect(strstr(rr.log, "SUMMARY: lockdep-rcu: 1 report: 1 bad unlock balance\n"), "%s", rr.context);
	cr_expect(strstr(rr.run.out, "done\n"), "all 100 unlocks ran:\n%s", rr.run.out);
	run_records_free(&rr);
}

Test(locks, two_buggy_unlock_sites_report_twice)
{
	struct expected e = { UNLOCK_TARGET, "bug-two-sites", BAD_UNLOCK_KIND, BAD_UNLOCK, "two_sites", 1, 2, 0 };
	struct run_records rr = expect_report(&e);
	int first = target_site_line(&rr.run, 1), second = target_site_line(&rr.run, 2);
	cr_expect_gt(second, first, "%s", rr.context);
	/* one report at each site, each of its own lock */
	const struct record *r1 = expect_record_at(&rr, BAD_UNLOCK_KIND, "two_sites", UNLOCK_TARGET ".c", first);
	const struct record *r2 = expect_record_at(&rr, BAD_UNLOCK_KIND, "two_sites", UNLOCK_TARGET ".c", second);
	expect_frame_at(&rr, r2, "two_sites", UNLOCK_TARGET ".c", second);
	expect_lock_list(&rr, r1, "released:first_lock{pthread_mutex_t}");
	expect_lock_list(&rr, r2, "released:second_lock{pthread_mutex_t}");
	cr_expect(strstr(rr.log, "SUMMARY: lockdep-rcu: 2 reports: 2 bad unlock balance\n"), "%s", rr.context);
	run_records_free(&rr);
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
