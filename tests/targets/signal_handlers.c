/* Locks and RCU in signal handlers: lockdep's interrupt-safety rules, with
 * signals for interrupts. Each buggy scenario sits beside its correct twin.
 * Handlers are made to run at a known moment with raise() (synchronously,
 * on the raising thread), so no scenario really deadlocks: the tracer must
 * report what *could* deadlock the day the signal lands elsewhere.
 * Handlers record the line of their lock call in a variable (no stdio in a
 * handler); main prints it as "site N" afterwards. */
#include "target.h"
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t config_lock = PTHREAD_RWLOCK_INITIALIZER;
static volatile sig_atomic_t handler_site, handler_runs;

static void install(int signo, void (*handler)(int), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(signo, &sa, NULL)) {
		perror("sigaction");
		exit(3);
	}
}

static void block(int signo, int how)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, signo);
	if (pthread_sigmask(how, &set, NULL)) {
		perror("pthread_sigmask");
		exit(3);
	}
}

static void lock_and_unlock(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
}

static void *lock_and_unlock_table(void *arg)
{
	(void)arg;
	lock_and_unlock(&table_lock);
	return NULL;
}

static void print_handler_site(void)
{
	printf("site %d\n", (int)handler_site);
}

/* ---- inconsistent lock state ------------------------------------------- */

static void alarm_takes_table_lock(int signo)
{
	(void)signo;
	pthread_mutex_lock(&table_lock); handler_site = __LINE__;
	pthread_mutex_unlock(&table_lock);
	handler_runs++;
}

/* table_lock taken with SIGALRM deliverable, then in SIGALRM's handler:
 * {SIGNAL-ON-W} -> {IN-SIGNAL-W}. */
SCENARIO bug_in_handler_after_unblocked_use(void)
{
	install(SIGALRM, alarm_takes_table_lock, SA_RESTART);
	pthread_mutex_lock(&table_lock); printf("site %d\n", __LINE__);
	pthread_mutex_unlock(&table_lock);
	raise(SIGALRM);
	print_handler_site();
}

/* The reverse order: {IN-SIGNAL-W} -> {SIGNAL-ON-W}. */
SCENARIO bug_unblocked_use_after_handler(void)
{
	install(SIGALRM, alarm_takes_table_lock, SA_RESTART);
	raise(SIGALRM);
	print_handler_site();
	pthread_mutex_lock(&table_lock); printf("site %d\n", __LINE__);
	pthread_mutex_unlock(&table_lock);
}

/* The deadlock itself: SIGALRM lands while main holds table_lock, and the
 * handler waits for it forever. Reported before the handler blocks. */
SCENARIO bug_deadlock_in_handler(void)
{
	install(SIGALRM, alarm_takes_table_lock, SA_RESTART);
	pthread_mutex_lock(&table_lock);
	raise(SIGALRM);
	pthread_mutex_unlock(&table_lock);
}

/* Correct twin: outside the handler the lock is only taken with SIGALRM
 * blocked, so the handler can never interrupt its holder. */
SCENARIO ok_blocked_around_the_lock(void)
{
	install(SIGALRM, alarm_takes_table_lock, SA_RESTART);
	for (int i = 0; i < 3; i++) {
		block(SIGALRM, SIG_BLOCK);
		lock_and_unlock(&table_lock);
		block(SIGALRM, SIG_UNBLOCK);
		raise(SIGALRM);
	}
	/* sigprocmask() is pthread_sigmask() in a single-threaded program */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, &old);
	lock_and_unlock(&table_lock);
	sigprocmask(SIG_SETMASK, &old, NULL);
	raise(SIGALRM);
	/* another thread: it inherits the blocked mask of its creator */
	block(SIGALRM, SIG_BLOCK);
	in_thread(lock_and_unlock_table);
	block(SIGALRM, SIG_UNBLOCK);
}

/* The tracer answers repeated acquisitions from a cache keyed by the
 * signals they leave deliverable: table_lock taken often with SIGALRM
 * blocked (alone, and nested under stats_lock), then once with it
 * deliverable (nested), then in SIGALRM's handler: the deliverable use
 * must have been recorded, {SIGNAL-ON-W} -> {IN-SIGNAL-W}. */
static pthread_mutex_t outer_lock = PTHREAD_MUTEX_INITIALIZER;

SCENARIO bug_deliverable_use_after_many_blocked_ones(void)
{
	install(SIGALRM, alarm_takes_table_lock, SA_RESTART);
	block(SIGALRM, SIG_BLOCK);
	for (int i = 0; i < 100; i++) {
		lock_and_unlock(&table_lock);
		pthread_mutex_lock(&outer_lock);
		lock_and_unlock(&table_lock);
		pthread_mutex_unlock(&outer_lock);
	}
	block(SIGALRM, SIG_UNBLOCK);
	lock_and_unlock(&outer_lock);   /* the new mask is known again after this one */
	pthread_mutex_lock(&outer_lock);
	pthread_mutex_lock(&table_lock); printf("site %d\n", __LINE__);
	pthread_mutex_unlock(&table_lock);
	pthread_mutex_unlock(&outer_lock);
	raise(SIGALRM);
	print_handler_site();
}

/* A lock held after a trylock is held all the same: taken by trylock with
 * SIGALRM deliverable, then in SIGALRM's handler. */
SCENARIO bug_trylock_then_handler(void)
{
	install(SIGALRM, alarm_takes_table_lock, SA_RESTART);
	if (pthread_mutex_trylock(&table_lock) == 0) {
		printf("site %d\n", __LINE__ - 1);
		pthread_mutex_unlock(&table_lock);
	}
	raise(SIGALRM);
	print_handler_site();
}

static void alarm_tries_table_lock(int signo)
{
	(void)signo;
	if (pthread_mutex_trylock(&table_lock) == 0)
		pthread_mutex_unlock(&table_lock);
}

/* Correct: a handler that only tries the lock never waits for it. */
SCENARIO ok_trylock_in_handler(void)
{
	install(SIGALRM, alarm_tries_table_lock, SA_RESTART);
	raise(SIGALRM);
	lock_and_unlock(&table_lock);
	raise(SIGALRM);
}

/* ---- read variants ------------------------------------------------------ */

static void alarm_reads_config(int signo)
{
	(void)signo;
	pthread_rwlock_rdlock(&config_lock); handler_site = __LINE__;
	pthread_rwlock_unlock(&config_lock);
}

/* A read lock in the handler, a write lock with SIGALRM deliverable:
 * {IN-SIGNAL-R} -> {SIGNAL-ON-W}. */
SCENARIO bug_write_lock_after_read_in_handler(void)
{
	install(SIGALRM, alarm_reads_config, SA_RESTART);
	raise(SIGALRM);
	print_handler_site();
	pthread_rwlock_wrlock(&config_lock); printf("site %d\n", __LINE__);
	pthread_rwlock_unlock(&config_lock);
}

/* Correct twin: reads on both sides of a reader-preferring rwlock never
 * wait for each other. */
SCENARIO ok_reads_in_and_out_of_handler(void)
{
	install(SIGALRM, alarm_reads_config, SA_RESTART);
	raise(SIGALRM);
	pthread_rwlock_rdlock(&config_lock);
	pthread_rwlock_unlock(&config_lock);
	raise(SIGALRM);
}

/* ---- irq lock inversion: through the dependency graph -------------------- */

static void alarm_takes_stats_lock(int signo)
{
	(void)signo;
	pthread_mutex_lock(&stats_lock); handler_site = __LINE__;
	pthread_mutex_unlock(&stats_lock);
}

/* stats_lock is SIGALRM-safe (taken in the handler, elsewhere only with
 * SIGALRM blocked) but is held while taking table_lock, which is taken
 * with SIGALRM deliverable: the handler, landing while table_lock is held,
 * waits for stats_lock, whose holder waits for table_lock. Found when the
 * handler first takes stats_lock (forwards). */
SCENARIO bug_safe_lock_takes_unsafe_lock(void)
{
	install(SIGALRM, alarm_takes_stats_lock, SA_RESTART);
	lock_and_unlock(&table_lock);                 /* SIGALRM-unsafe */
	block(SIGALRM, SIG_BLOCK);
	pthread_mutex_lock(&stats_lock);
	pthread_mutex_lock(&table_lock); printf("site %d\n", __LINE__);
	pthread_mutex_unlock(&table_lock);
	pthread_mutex_unlock(&stats_lock);
	block(SIGALRM, SIG_UNBLOCK);
	raise(SIGALRM);
	print_handler_site();
}

/* The same bug, found when table_lock is first taken with SIGALRM
 * deliverable (backwards). */
SCENARIO bug_unsafe_use_of_lock_a_safe_lock_takes(void)
{
	install(SIGALRM, alarm_takes_stats_lock, SA_RESTART);
	raise(SIGALRM);                               /* stats_lock SIGALRM-safe */
	block(SIGALRM, SIG_BLOCK);
	pthread_mutex_lock(&stats_lock);
	lock_and_unlock(&table_lock);
	pthread_mutex_unlock(&stats_lock);
	block(SIGALRM, SIG_UNBLOCK);
	pthread_mutex_lock(&table_lock); printf("site %d\n", __LINE__);
	pthread_mutex_unlock(&table_lock);
}

/* The same bug, found when the dependency is made: both usages are known
 * before stats_lock is first held while taking table_lock. */
SCENARIO bug_dependency_joins_safe_and_unsafe_locks(void)
{
	install(SIGALRM, alarm_takes_stats_lock, SA_RESTART);
	raise(SIGALRM);                               /* stats_lock SIGALRM-safe */
	lock_and_unlock(&table_lock);                 /* table_lock SIGALRM-unsafe */
	block(SIGALRM, SIG_BLOCK);
	pthread_mutex_lock(&stats_lock);
	pthread_mutex_lock(&table_lock); printf("site %d\n", __LINE__);
	pthread_mutex_unlock(&table_lock);
	pthread_mutex_unlock(&stats_lock);
	block(SIGALRM, SIG_UNBLOCK);
}

/* Correct twin: table_lock too is only taken with SIGALRM blocked. */
SCENARIO ok_safe_lock_takes_safe_lock(void)
{
	install(SIGALRM, alarm_takes_stats_lock, SA_RESTART);
	raise(SIGALRM);
	block(SIGALRM, SIG_BLOCK);
	pthread_mutex_lock(&stats_lock);
	lock_and_unlock(&table_lock);
	pthread_mutex_unlock(&stats_lock);
	lock_and_unlock(&table_lock);
	block(SIGALRM, SIG_UNBLOCK);
	raise(SIGALRM);
}

/* ---- handlers that take no lock; no handler at all ------------------------- */

static volatile sig_atomic_t alarms;

static void alarm_counts(int signo)
{
	(void)signo;
	alarms++;
	static const char msg[] = "alarm\n";
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		alarms--;
}

/* Correct: the handler uses only async-signal-safe calls; the program
 * locks freely with SIGALRM deliverable. */
SCENARIO ok_async_signal_safe_handler(void)
{
	install(SIGALRM, alarm_counts, SA_RESTART);
	for (int i = 0; i < 3; i++) {
		lock_and_unlock(&table_lock);
		raise(SIGALRM);
		pthread_mutex_lock(&stats_lock);
		lock_and_unlock(&table_lock);
		pthread_mutex_unlock(&stats_lock);
	}
}

static void *signal_thread(void *arg)
{
	(void)arg;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	int signo;
	if (sigwait(&set, &signo) == 0)
		lock_and_unlock(&table_lock);   /* an ordinary thread, not a handler */
	return NULL;
}

/* Correct: no handler; SIGALRM blocked everywhere and taken by sigwait()
 * on a thread of its own, which then locks like any thread. */
SCENARIO ok_sigwait_thread(void)
{
	block(SIGALRM, SIG_BLOCK);
	pthread_t t;
	pthread_create(&t, NULL, signal_thread, NULL);
	lock_and_unlock(&table_lock);
	pthread_kill(t, SIGALRM);
	pthread_join(t, NULL);
	lock_and_unlock(&table_lock);
}

/* ---- nesting, one-shot handlers, siglongjmp ------------------------------------ */

static void usr2_raises_alarm(int signo)
{
	(void)signo;
	raise(SIGALRM);                      /* nested: SIGALRM's handler runs now */
	lock_and_unlock(&stats_lock);        /* in SIGUSR2's handler again */
}

/* table_lock taken with SIGALRM deliverable, then in SIGALRM's handler
 * nested in SIGUSR2's: one report, naming SIGALRM. stats_lock is taken in
 * SIGUSR2's handler after the nested one returned, and elsewhere only with
 * SIGUSR2 blocked: silent (the nesting was unwound right). */
SCENARIO bug_nested_handler(void)
{
	install(SIGALRM, alarm_takes_table_lock, SA_RESTART);
	install(SIGUSR2, usr2_raises_alarm, SA_RESTART);
	lock_and_unlock(&table_lock);
	raise(SIGUSR2);
	print_handler_site();
	block(SIGUSR2, SIG_BLOCK);
	lock_and_unlock(&stats_lock);
	block(SIGUSR2, SIG_UNBLOCK);
}

/* SA_RESETHAND: the handler runs once, then the action is SIG_DFL again
 * (as sigaction() reports it); the lock it took stays SIGALRM-safe. */
SCENARIO ok_reset_hand(void)
{
	install(SIGALRM, alarm_takes_table_lock, SA_RESETHAND);
	raise(SIGALRM);
	struct sigaction now;
	sigaction(SIGALRM, NULL, &now);
	if (now.sa_handler != SIG_DFL || handler_runs != 1) {
		printf("SA_RESETHAND: handler %p after one run (%d)\n", (void *)now.sa_handler, (int)handler_runs);
		exit(1);
	}
	block(SIGALRM, SIG_BLOCK);
	lock_and_unlock(&table_lock);
	block(SIGALRM, SIG_UNBLOCK);
}

static sigjmp_buf escape;

static void alarm_jumps_out(int signo)
{
	(void)signo;
	lock_and_unlock(&stats_lock);
	siglongjmp(escape, 1);
}

/* A handler left by siglongjmp() never returns: after the jump, main is
 * not in a handler any more. table_lock, taken after the jump (twice, the
 * second time from another thread), is never taken in a handler: silent. */
SCENARIO ok_siglongjmp_out_of_handler(void)
{
	install(SIGALRM, alarm_jumps_out, 0);
	for (int i = 0; i < 3; i++) {
		if (sigsetjmp(escape, 1) == 0)
			raise(SIGALRM);
		lock_and_unlock(&table_lock);
	}
	in_thread(lock_and_unlock_table);
	/* stats_lock was taken in the handler: elsewhere only with it blocked */
	block(SIGALRM, SIG_BLOCK);
	lock_and_unlock(&stats_lock);
	block(SIGALRM, SIG_UNBLOCK);
}

/* The same on the alternate signal stack (SA_ONSTACK): its addresses say
 * nothing about the thread's own stack, the handler is left all the same. */
SCENARIO ok_siglongjmp_out_of_altstack_handler(void)
{
	static char altstack[64 * 1024];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack), .ss_flags = 0 };
	if (sigaltstack(&ss, NULL))
		abort();
	install(SIGALRM, alarm_jumps_out, SA_ONSTACK);
	for (int i = 0; i < 3; i++) {
		if (sigsetjmp(escape, 1) == 0)
			raise(SIGALRM);
		lock_and_unlock(&table_lock);
	}
	in_thread(lock_and_unlock_table);
	block(SIGALRM, SIG_BLOCK);
	lock_and_unlock(&stats_lock);
	block(SIGALRM, SIG_UNBLOCK);
}

/* SA_NODEFER: the signal stays deliverable in its own handler, which may
 * then interrupt itself while it holds the lock. */
SCENARIO bug_nodefer_handler_takes_lock(void)
{
	install(SIGALRM, alarm_takes_table_lock, SA_NODEFER);
	raise(SIGALRM);
	print_handler_site();
}

/* ---- RCU in handlers ------------------------------------------------------- */

static void alarm_synchronizes(int signo)
{
	(void)signo;
	synchronize_rcu(); handler_site = __LINE__;
}

/* synchronize_rcu() in a handler: waits for readers the handler may have
 * interrupted (its own thread's, or one blocked on it). */
SCENARIO bug_synchronize_rcu_in_handler(void)
{
	rcu_register_thread();
	install(SIGALRM, alarm_synchronizes, SA_RESTART);
	raise(SIGALRM);
	print_handler_site();
	rcu_unregister_thread();
}

static void alarm_barrier(int signo)
{
	(void)signo;
	rcu_barrier(); handler_site = __LINE__;
}

SCENARIO bug_rcu_barrier_in_handler(void)
{
	rcu_register_thread();
	install(SIGALRM, alarm_barrier, SA_RESTART);
	raise(SIGALRM);
	print_handler_site();
	rcu_unregister_thread();
}

static int *shared_value;

static void alarm_reads_rcu(int signo)
{
	(void)signo;
#ifndef TARGET_QSBR
	rcu_read_lock();
	int *p = rcu_dereference(shared_value);
	handler_runs += p ? *p : 0;
	rcu_read_unlock();
#endif
}

/* Correct (memb, mb, signal, bp): a read side in a handler; the updater
 * waits for a grace period outside any handler. */
SCENARIO ok_read_side_in_handler(void)
{
	static int value = 1;
	rcu_register_thread();
	install(SIGALRM, alarm_reads_rcu, SA_RESTART);
	rcu_assign_pointer(shared_value, &value);
	for (int i = 0; i < 3; i++) {
		raise(SIGALRM);
#ifdef TARGET_QSBR
		rcu_thread_offline();
#endif
		synchronize_rcu();
#ifdef TARGET_QSBR
		rcu_thread_online();
#endif
	}
	rcu_unregister_thread();
}

static void *urcu_reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	for (int i = 0; i < 2000; i++) {
		rcu_read_lock();
		int *p = rcu_dereference(shared_value);
		if (p)
			lock_and_unlock(&table_lock);
		rcu_read_unlock();
#ifdef TARGET_QSBR
		rcu_quiescent_state();
#endif
	}
	rcu_unregister_thread();
	return NULL;
}

/* Correct: liburcu-signal's own SIGUSR1 handler interrupts readers and
 * lockers (in the signal flavor; plain grace periods in the others). */
SCENARIO ok_urcu_grace_periods_under_locks(void)
{
	static int values[2] = { 1, 2 };
	rcu_assign_pointer(shared_value, &values[0]);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, urcu_reader, NULL);
	rcu_register_thread();
#ifdef TARGET_QSBR
	rcu_thread_offline();
#endif
	for (int i = 0; i < 50; i++) {
		pthread_mutex_lock(&stats_lock);
		rcu_assign_pointer(shared_value, &values[i & 1]);
		pthread_mutex_unlock(&stats_lock);
		synchronize_rcu();
		lock_and_unlock(&table_lock);
	}
#ifdef TARGET_QSBR
	rcu_thread_online();
#endif
	rcu_unregister_thread();
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

/* Dirty-page tracking (incremental GCs, checkpointers): pages are
 * write-protected, the SIGSEGV handler of a write records the page under
 * dirty_lock and unprotects it; the main code takes dirty_lock to collect,
 * never touching tracked memory while holding it. The fault arrives only
 * at the faulting write, so the handler never interrupts a holder: kernel
 * lockdep does not count a page fault as an interrupt context either. The
 * twin: the same handler run by raise() is a signal that can interrupt. */
static char *tracked;
static long tracked_page;
static pthread_mutex_t dirty_lock = PTHREAD_MUTEX_INITIALIZER;
static int dirty_pages;

static void on_write_fault(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	char *at = si->si_addr;
	pthread_mutex_lock(&dirty_lock);
	dirty_pages++;
	pthread_mutex_unlock(&dirty_lock);
	if (si->si_code > 0)
		mprotect(tracked + (at - tracked) / tracked_page * tracked_page, (size_t)tracked_page,
			 PROT_READ | PROT_WRITE);
}

static int collect_dirty(void)
{
	pthread_mutex_lock(&dirty_lock);
	int n = dirty_pages;
	dirty_pages = 0;
	pthread_mutex_unlock(&dirty_lock);
	mprotect(tracked, (size_t)tracked_page * 4, PROT_READ);
	return n;
}

static void track_pages(int raise_too)
{
	tracked_page = sysconf(_SC_PAGESIZE);
	tracked = mmap(NULL, (size_t)tracked_page * 4, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct sigaction sa = { .sa_sigaction = on_write_fault, .sa_flags = SA_SIGINFO };
	sigaction(SIGSEGV, &sa, NULL);
	for (int round = 0; round < 3; round++) {
		for (int p = 0; p <= round; p++)
			tracked[p * tracked_page] = (char)round;   /* faults: the handler */
		printf("round %d: %d dirty\n", round, collect_dirty());
	}
	if (raise_too)
		raise(SIGSEGV);   /* sent, not a fault: it interrupts */
	printf("done\n");
}

SCENARIO ok_fault_handler_takes_lock(void) { track_pages(0); }
SCENARIO bug_raised_segv_handler_takes_lock(void) { track_pages(1); }

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "ok-fault-handler-takes-lock", ok_fault_handler_takes_lock },
		{ "bug-raised-segv-handler-takes-lock", bug_raised_segv_handler_takes_lock },
		{ "bug-in-handler-after-unblocked-use", bug_in_handler_after_unblocked_use },
		{ "bug-unblocked-use-after-handler", bug_unblocked_use_after_handler },
		{ "bug-deadlock-in-handler", bug_deadlock_in_handler },
		{ "ok-blocked-around-the-lock", ok_blocked_around_the_lock },
		{ "bug-deliverable-use-after-many-blocked-ones", bug_deliverable_use_after_many_blocked_ones },
		{ "bug-trylock-then-handler", bug_trylock_then_handler },
		{ "ok-trylock-in-handler", ok_trylock_in_handler },
		{ "bug-write-lock-after-read-in-handler", bug_write_lock_after_read_in_handler },
		{ "ok-reads-in-and-out-of-handler", ok_reads_in_and_out_of_handler },
		{ "bug-safe-lock-takes-unsafe-lock", bug_safe_lock_takes_unsafe_lock },
		{ "bug-unsafe-use-of-lock-a-safe-lock-takes", bug_unsafe_use_of_lock_a_safe_lock_takes },
		{ "bug-dependency-joins-safe-and-unsafe-locks", bug_dependency_joins_safe_and_unsafe_locks },
		{ "ok-safe-lock-takes-safe-lock", ok_safe_lock_takes_safe_lock },
		{ "ok-async-signal-safe-handler", ok_async_signal_safe_handler },
		{ "ok-sigwait-thread", ok_sigwait_thread },
		{ "bug-nested-handler", bug_nested_handler },
		{ "ok-reset-hand", ok_reset_hand },
		{ "ok-siglongjmp-out-of-handler", ok_siglongjmp_out_of_handler },
		{ "ok-siglongjmp-out-of-altstack-handler", ok_siglongjmp_out_of_altstack_handler },
		{ "bug-nodefer-handler-takes-lock", bug_nodefer_handler_takes_lock },
		{ "bug-synchronize-rcu-in-handler", bug_synchronize_rcu_in_handler },
		{ "bug-rcu-barrier-in-handler", bug_rcu_barrier_in_handler },
		{ "ok-read-side-in-handler", ok_read_side_in_handler },
		{ "ok-urcu-grace-periods-under-locks", ok_urcu_grace_periods_under_locks },
		{ NULL, NULL },
	};
	int ret = run_scenario(argc, argv, scenarios);
	if (ret == 0)
		printf("done\n");
	return ret;
}
