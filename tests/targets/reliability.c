/* The tracer never breaks the process it is in. Each scenario is a program
 * that must run exactly as it does without the preload (or a buggy one
 * whose report must come out whole): small thread stacks, signal handlers
 * entering the tracer's paths, fork at awkward moments, descriptors, the
 * exit sequence, perturb and cancellation. */
#include "target.h"
#include <dirent.h>
#include <grp.h>
#include <spawn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t never_locked = PTHREAD_MUTEX_INITIALIZER;

/* A bad unlock: the cheapest report to provoke. */
__attribute__((noinline)) static void unlock_unheld(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
	__asm__ volatile("" ::: "memory");
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* ---- stacks ---------------------------------------------------------------- */

static void *report_on_small_stack(void *arg)
{
	(void)arg;
	unlock_unheld(&never_locked);
	printf("thread continued after the report\n");
	return NULL;
}

static void run_with_stack(size_t size)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	if (pthread_attr_setstacksize(&attr, size)) {
		printf("setstacksize failed\n");
		exit(3);
	}
	pthread_t t;
	if (pthread_create(&t, &attr, report_on_small_stack, NULL)) {
		printf("pthread_create failed\n");
		exit(3);
	}
	pthread_join(t, NULL);
	printf("joined\n");
}

SCENARIO stack_16k(void) { run_with_stack(PTHREAD_STACK_MIN); }

/* A correct program that sizes its threads' stacks to what it uses: a
 * PTHREAD_STACK_MIN thread goes `deep_bytes` down its stack, then (in the
 * first run) nests two mutexes for the first time there. The tracer's TLS
 * is carved from that size too, and its capture's limit was computed
 * below the stack: both crashed (SIGSEGV) where the plain program ran. */
static pthread_mutex_t deep_outer = PTHREAD_MUTEX_INITIALIZER, deep_inner = PTHREAD_MUTEX_INITIALIZER;
static long deep_bytes;
static int deep_nests;

static __attribute__((noinline)) int go_deep(long left)
{
	volatile char pad[256];
	pad[0] = (char)left;
	if (left > 256)
		return go_deep(left - 256) + pad[0];
	if (deep_nests) {
		pthread_mutex_lock(&deep_outer);
		pthread_mutex_lock(&deep_inner);
		pthread_mutex_unlock(&deep_inner);
		pthread_mutex_unlock(&deep_outer);
	}
	return pad[0];
}

static void *deep_on_small_stack(void *arg)
{
	(void)arg;
	return (void *)(long)go_deep(deep_bytes);
}

static void run_deep(long bytes, int nests)
{
	deep_bytes = bytes;
	deep_nests = nests;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN);
	pthread_t t;
	if (pthread_create(&t, &attr, deep_on_small_stack, NULL)) {
		printf("pthread_create failed\n");
		exit(3);
	}
	pthread_join(t, NULL);
	pthread_attr_destroy(&attr);
	printf("%ld bytes deep, nesting %d: joined\n", bytes, nests);
}

SCENARIO stack_16k_used_deep(void)
{
	run_deep(5632, 1);
	run_deep(6144, 0);
}
SCENARIO stack_64k(void) { run_with_stack(64 * 1024); }

/* ---- signals --------------------------------------------------------------- */

static atomic_int handler_runs;

static void rcu_reader_handler(int sig)
{
	(void)sig;
	rcu_read_lock();
	rcu_read_unlock();
	atomic_fetch_add(&handler_runs, 1);
}

static void start_timer(void (*handler)(int), long interval_us)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, interval_us }, { 0, interval_us } };
	setitimer(ITIMER_REAL, &it, NULL);
}

static void stop_timer(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_IGN);
}

/* A 20 kHz handler enters a read side while main releases three mutexes out
 * of order: every held-lock update of main may be interrupted. Correct code:
 * nothing may be reported. */
SCENARIO signal_reader_during_unlocks(void)
{
	static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER,
			       c = PTHREAD_MUTEX_INITIALIZER;
	rcu_register_thread();
	start_timer(rcu_reader_handler, 50);
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		for (int i = 0; i < 1000; i++) {
			pthread_mutex_lock(&a);
			pthread_mutex_lock(&b);
			pthread_mutex_lock(&c);
			pthread_mutex_unlock(&a);
			pthread_mutex_unlock(&c);
			pthread_mutex_unlock(&b);
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < 2);
	stop_timer();
	rcu_unregister_thread();
	printf("handler ran %s\n", atomic_load(&handler_runs) > 100 ? "often" : "rarely");
}

/* A handler takes never-seen locks while main keeps creating lock classes
 * (each static lock is a class of its own, made at its first use under
 * another lock). The handler must neither hang nor be misreported. */
#define NR_CLASS_LOCKS 3000
static pthread_mutex_t class_locks[NR_CLASS_LOCKS];   /* static: a class each */
static pthread_mutex_t handler_locks[3000];
static atomic_int handler_lock_index;

static void new_lock_handler(int sig)
{
	(void)sig;
	int i = atomic_fetch_add(&handler_lock_index, 1) % 3000;
	pthread_mutex_lock(&handler_locks[i]);
	pthread_mutex_unlock(&handler_locks[i]);
	atomic_fetch_add(&handler_runs, 1);
}

SCENARIO signal_new_class_during_class_creation(void)
{
	static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER;
	start_timer(new_lock_handler, 50);
	for (int round = 0; round < 20; round++)
		for (int i = 0; i < NR_CLASS_LOCKS; i++) {
			/* round 0: a new class at every step */
			pthread_mutex_lock(&outer);
			pthread_mutex_lock(&class_locks[i]);
			pthread_mutex_unlock(&class_locks[i]);
			pthread_mutex_unlock(&outer);
		}
	stop_timer();
	printf("handler ran %s\n", atomic_load(&handler_runs) > 100 ? "often" : "rarely");
}

/* ---- fork ------------------------------------------------------------------ */

static atomic_int stop_churn;

/* New lock chains all the time: every iteration validates a new pair. */
static void *chain_churner(void *arg)
{
	(void)arg;
	static pthread_mutex_t locks[64];
	for (int i = 0; i < 64; i++)
		pthread_mutex_init(&locks[i], NULL);
	unsigned i = 0;
	while (!atomic_load(&stop_churn)) {
		pthread_mutex_t *x = &locks[i % 64], *y = &locks[(i / 64) % 64];
		if (x < y) {
			pthread_mutex_lock(x);
			pthread_mutex_lock(y);
			pthread_mutex_unlock(y);
			pthread_mutex_unlock(x);
		}
		i++;
	}
	return NULL;
}

static int wait_child(pid_t pid, int seconds)
{
	for (int i = 0; i < seconds * 100; i++) {
		int status;
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		sleep_ms(10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/* Children forked while another thread validates new chains lock and
 * unlock (through the validator) and exit: none may hang. */
SCENARIO fork_while_validating(void)
{
	pthread_t t;
	pthread_create(&t, NULL, chain_churner, NULL);
	static pthread_mutex_t c1 = PTHREAD_MUTEX_INITIALIZER, c2 = PTHREAD_MUTEX_INITIALIZER;
	int hung = 0, bad = 0;
	for (int i = 0; i < 200; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			pthread_mutex_lock(&c1);
			pthread_mutex_lock(&c2);
			pthread_mutex_unlock(&c2);
			pthread_mutex_unlock(&c1);
			_exit(0);
		}
		int status = wait_child(pid, 10);
		if (status < 0)
			hung++;
		else if (status != 0)
			bad++;
	}
	atomic_store(&stop_churn, 1);
	pthread_join(t, NULL);
	printf("children: %d hung, %d failed\n", hung, bad);
}

/* Every way of making a process, while another thread validates new lock
 * chains: each child runs and returns its status, none hangs. */
SCENARIO process_creation_while_validating(void)
{
	pthread_t t;
	pthread_create(&t, NULL, chain_churner, NULL);
	int ok = 0, total = 0;
	for (int i = 0; i < 20; i++) {
		int status;
		total++;
		pid_t pid = vfork();
		if (pid == 0)
			_exit(3);
		ok += waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 3;
		total++;
		pid = _Fork();
		if (pid == 0)
			_exit(4);
		ok += waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 4;
		total++;
		ok += WEXITSTATUS(system("exit 5")) == 5;
		total++;
		FILE *p = popen("echo popen", "r");
		char line[32] = "";
		ok += p && fgets(line, sizeof(line), p) && !strcmp(line, "popen\n") && pclose(p) == 0;
		total++;
		char *argv[] = { "/bin/sh", "-c", "exit 6", NULL };
		extern char **environ;
		ok += posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) == 0 &&
		      waitpid(pid, &status, 0) == pid && WEXITSTATUS(status) == 6;
	}
	fflush(stdout);
	/* daemon(): the child goes on in the background; it leaves a mark */
	pid_t parent = getpid();
	int fds[2];
	if (pipe(fds))
		exit(3);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (daemon(1, 1) == 0) {
			char mark = getppid() != parent ? 'd' : '?';
			if (write(fds[1], &mark, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(fds[1]);
	char mark = 0;
	ok += read(fds[0], &mark, 1) == 1 && mark == 'd';
	total++;
	waitpid(pid, NULL, 0);
	atomic_store(&stop_churn, 1);
	pthread_join(t, NULL);
	printf("%d of %d children right\n", ok, total);
}

/* A handler forks (async-signal-safe) while the interrupted thread is in
 * the middle of printing a report: the child must not hang. */
static atomic_int forks_done, fork_hangs;

static void forking_handler(int sig)
{
	(void)sig;
	int saved = errno;
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid > 0) {
		int status, waited = 0;
		/* waitpid with a bound, without sleeping in a handler too long */
		for (int i = 0; i < 2000000 && !waited; i++)
			waited = waitpid(pid, &status, WNOHANG) == pid;
		if (!waited) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			atomic_fetch_add(&fork_hangs, 1);
		}
		atomic_fetch_add(&forks_done, 1);
	}
	errno = saved;
}

#define NR_REPORT_SITES 24
static pthread_mutex_t report_locks[NR_REPORT_SITES];

/* Many distinct call sites, so that many reports are printed in a row. */
SCENARIO fork_in_handler_during_report(void)
{
	for (int i = 0; i < NR_REPORT_SITES; i++)
		pthread_mutex_init(&report_locks[i], NULL);
	start_timer(forking_handler, 20000);
	/* distinct sites: each line its own call */
	pthread_mutex_unlock(&report_locks[0]); pthread_mutex_unlock(&report_locks[1]);
	pthread_mutex_unlock(&report_locks[2]); pthread_mutex_unlock(&report_locks[3]);
	pthread_mutex_unlock(&report_locks[4]); pthread_mutex_unlock(&report_locks[5]);
	pthread_mutex_unlock(&report_locks[6]); pthread_mutex_unlock(&report_locks[7]);
	pthread_mutex_unlock(&report_locks[8]); pthread_mutex_unlock(&report_locks[9]);
	pthread_mutex_unlock(&report_locks[10]); pthread_mutex_unlock(&report_locks[11]);
	pthread_mutex_unlock(&report_locks[12]); pthread_mutex_unlock(&report_locks[13]);
	pthread_mutex_unlock(&report_locks[14]); pthread_mutex_unlock(&report_locks[15]);
	sleep_ms(50);
	stop_timer();
	printf("forks %s, %d hung\n", atomic_load(&forks_done) > 0 ? "done" : "none", atomic_load(&fork_hangs));
}

/* The parent had a report; its clean child exits with its own status and
 * prints no summary. */
SCENARIO clean_child_of_reporting_parent(void)
{
	unlock_unheld(&never_locked);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		printf("child running\n");
		exit(7);
	}
	int status;
	waitpid(pid, &status, 0);
	printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* ---- descriptors -------------------------------------------------------- */

static int first_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY);
	close(fd);
	return fd;
}

/* The program's first open() gets the number it gets without the tracer,
 * also after a report. */
SCENARIO descriptors_first_open(void)
{
	printf("first fd %d\n", first_free_fd());
	unlock_unheld(&never_locked);
	printf("after report %d\n", first_free_fd());
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;   /* the directory's own descriptor */
}

/* After reports the process has the descriptors it had before, and a
 * system() child inherits none of the tracer's. */
SCENARIO descriptors_no_leak(void)
{
	int before = count_fds();
	unlock_unheld(&never_locked);
	rcu_register_thread();
	rcu_read_lock();
	rcu_read_unlock();
	rcu_unregister_thread();
	int after = count_fds();
	printf("fds before %d after %d\n", before, after);
	fflush(stdout);
	int status = system("ls /proc/self/fd | wc -l");
	printf("system status %d\n", status);
}

/* A daemon closes every descriptor it inherited, then opens its data file,
 * which gets a low number the tracer may have used before; later reports
 * must neither write into it nor be lost. */
SCENARIO descriptors_closefrom_daemon(void)
{
	unlock_unheld(&never_locked);
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	const char *path = getenv("DATA_FILE");
	int data = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (write(data, "DATA\n", 5) != 5)
		exit(3);
	static pthread_mutex_t second = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_unlock(&second);   /* a second site: a second report */
	lseek(data, 0, SEEK_SET);
	char buf[4096];
	ssize_t n = read(data, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	printf("data fd %d holds %zd bytes: %s", data, n, buf);
	close(data);
}

/* Privileges dropped after start: the report still reaches log_path. */
SCENARIO privilege_drop(void)
{
	struct passwd *nobody = getpwnam("nobody");
	if (!nobody || getuid() != 0) {
		printf("skip: not root\n");
		return;
	}
	if (setgid(nobody->pw_gid) || setuid(nobody->pw_uid)) {
		printf("setuid failed\n");
		exit(3);
	}
	unlock_unheld(&never_locked);
	printf("dropped and reported\n");
}

/* Credentials "changed" to what they are (netsniff-ng drops to the invoking
 * user, root itself when root runs it): nothing changes, so nothing of the
 * tracer's may appear either. Prints the descriptors open before and
 * after. */
static int open_descriptors(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n - 1;   /* the directory's own */
}

SCENARIO credentials_unchanged(void)
{
	int before = open_descriptors();
	gid_t groups[64];
	int n = getgroups(64, groups);
	uid_t uid = getuid();
	gid_t gid = getgid();
	int failed = setgid(gid) | setegid(getegid()) | setregid(gid, getegid()) |
		     setresgid(gid, getegid(), (gid_t)-1) | setuid(uid) | seteuid(geteuid()) |
		     setreuid(uid, geteuid()) | setresuid(uid, geteuid(), (uid_t)-1);
	if (getuid() == 0 && n >= 0)
		failed |= setgroups((size_t)n, groups);
	printf("descriptors %d, then %d%s\n", before, open_descriptors(), failed ? " (a call failed)" : "");
}

/* ---- exit ---------------------------------------------------------------- */

static void atexit_witness(void)
{
	printf("atexit handler ran\n");
}

/* The program's exit sequence runs whole; only the status changes. */
SCENARIO exit_sequence_kept(void)
{
	atexit(atexit_witness);
	printf("buffered output");   /* no newline: flushed at exit */
	unlock_unheld(&never_locked);
}

static atomic_int reporters_ready;

#define NR_EXIT_REPORTERS 16
static pthread_mutex_t exit_locks[NR_EXIT_REPORTERS];

static void *exit_reporter(void *arg)
{
	int i = (int)(intptr_t)arg;
	atomic_fetch_add(&reporters_ready, 1);
	/* sixteen distinct sites: one per switch case */
	switch (i) {
	case 0: pthread_mutex_unlock(&exit_locks[0]); break;
	case 1: pthread_mutex_unlock(&exit_locks[1]); break;
	case 2: pthread_mutex_unlock(&exit_locks[2]); break;
	case 3: pthread_mutex_unlock(&exit_locks[3]); break;
	case 4: pthread_mutex_unlock(&exit_locks[4]); break;
	case 5: pthread_mutex_unlock(&exit_locks[5]); break;
	case 6: pthread_mutex_unlock(&exit_locks[6]); break;
	case 7: pthread_mutex_unlock(&exit_locks[7]); break;
	case 8: pthread_mutex_unlock(&exit_locks[8]); break;
	case 9: pthread_mutex_unlock(&exit_locks[9]); break;
	case 10: pthread_mutex_unlock(&exit_locks[10]); break;
	case 11: pthread_mutex_unlock(&exit_locks[11]); break;
	case 12: pthread_mutex_unlock(&exit_locks[12]); break;
	case 13: pthread_mutex_unlock(&exit_locks[13]); break;
	case 14: pthread_mutex_unlock(&exit_locks[14]); break;
	default: pthread_mutex_unlock(&exit_locks[15]); break;
	}
	for (;;)
		pause();
	return NULL;
}

/* Sixteen threads report while main calls exit() 20 ms later: all sixteen
 * reports come out whole, and the status says so. */
SCENARIO exit_while_reporting(void)
{
	for (int i = 0; i < NR_EXIT_REPORTERS; i++) {
		pthread_mutex_init(&exit_locks[i], NULL);
		pthread_t t;
		pthread_create(&t, NULL, exit_reporter, (void *)(intptr_t)i);
	}
	while (atomic_load(&reporters_ready) < NR_EXIT_REPORTERS)
		;
	sleep_ms(20);
	exit(0);
}

static atomic_int racers_ready;
static pthread_mutex_t abort_lock = PTHREAD_MUTEX_INITIALIZER;

static void *abort_racer(void *arg)
{
	(void)arg;
	atomic_fetch_add(&racers_ready, 1);
	while (atomic_load(&racers_ready) < 2)
		;
	unlock_unheld(&abort_lock);   /* one site, two threads */
	abort();
	return NULL;
}

/* Two threads hit one site right before abort(): whichever aborts first,
 * the report of the site is out. */
SCENARIO abort_after_report(void)
{
	pthread_t a, b;
	pthread_create(&a, NULL, abort_racer, NULL);
	pthread_create(&b, NULL, abort_racer, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
}

/* ---- perturb and cancellation -------------------------------------------- */

static pthread_mutex_t cancel_lock = PTHREAD_MUTEX_INITIALIZER;

static void *lock_loop(void *arg)
{
	(void)arg;
	/* Deferred cancellation: lock and unlock are no cancellation points,
	 * so the only one of the loop is pthread_testcancel(). */
	for (;;) {
		pthread_mutex_lock(&cancel_lock);
		pthread_mutex_unlock(&cancel_lock);
		pthread_testcancel();
	}
	return NULL;
}

/* perturb=1 must not add a cancellation point inside lock or unlock: a
 * thread cancelled at its own cancellation point never leaves the mutex
 * locked. */
SCENARIO perturb_no_cancellation_point(void)
{
	int locked_after = 0;
	for (int i = 0; i < 40; i++) {
		pthread_t t;
		pthread_create(&t, NULL, lock_loop, NULL);
		sleep_ms(5);
		pthread_cancel(t);
		pthread_join(t, NULL);
		struct timespec deadline;
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += 1;
		if (pthread_mutex_timedlock(&cancel_lock, &deadline) == 0)
			pthread_mutex_unlock(&cancel_lock);
		else
			locked_after++;
	}
	printf("mutex left locked %d times\n", locked_after);
}

/* A thread with a cancellation request pending runs code without
 * cancellation points: its lock calls (not cancellation points) must not
 * become ones. First, its first nesting of two static mutexes (the tracer
 * names their classes, reading ELF files); then a bad unlock (a report,
 * written to stderr). Each thread gets past both and is cancelled at its
 * own pthread_testcancel(); main then takes the locks. */
static pthread_mutex_t pending_outer = PTHREAD_MUTEX_INITIALIZER, pending_inner = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pending_never_locked = PTHREAD_MUTEX_INITIALIZER;
static volatile int pending_go, pending_got_past;

static void *nest_with_cancel_pending(void *bad_unlock)
{
	while (!pending_go)
		;   /* no cancellation point */
	pthread_mutex_lock(&pending_outer);
	pthread_mutex_lock(&pending_inner);
	pthread_mutex_unlock(&pending_inner);
	pthread_mutex_unlock(&pending_outer);
	if (bad_unlock)
		pthread_mutex_unlock(&pending_never_locked);   /* the bug reported */
	pending_got_past = 1;
	pthread_testcancel();
	return NULL;
}

static void cancel_pending_run(int bad_unlock)
{
	pthread_t t;
	pending_go = pending_got_past = 0;
	pthread_create(&t, NULL, nest_with_cancel_pending, bad_unlock ? (void *)1 : NULL);
	sleep_ms(10);
	pthread_cancel(t);
	pending_go = 1;
	void *result;
	pthread_join(t, &result);
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 2;
	int outer = pthread_mutex_timedlock(&pending_outer, &deadline);
	if (!outer)
		pthread_mutex_unlock(&pending_outer);
	printf("cancelled %d, got past %d, outer lock %d\n", result == PTHREAD_CANCELED, pending_got_past, outer);
	fflush(stdout);
}

SCENARIO cancel_pending_in_lock_calls(void)
{
	cancel_pending_run(0);
	cancel_pending_run(1);
	/* the report lock was not left held: another report is made */
	pthread_mutex_unlock(&pending_never_locked);
	printf("done\n");
}

/* ---- small alternate signal stacks ---------------------------------------- */

/* A handler on an alternate signal stack of `size` bytes (a guard page
 * below) takes a lock; main takes the same lock with the signal blocked
 * (correct), or nests two locks the handler nests the other way (abba, a
 * real inversion). On this machine's AVX-512 the kernel's signal frame
 * takes ~3 KiB of the stack: 4 KiB leaves ~1 KiB, which the lock checks
 * overran (SIGSEGV). */
static pthread_mutex_t alt_a = PTHREAD_MUTEX_INITIALIZER, alt_b = PTHREAD_MUTEX_INITIALIZER;
static int alt_abba;
static volatile sig_atomic_t alt_ran;

static void alt_handler(int sig)
{
	(void)sig;
	if (alt_abba) {
		pthread_mutex_lock(&alt_b);
		pthread_mutex_lock(&alt_a);
		pthread_mutex_unlock(&alt_a);
		pthread_mutex_unlock(&alt_b);
	} else {
		pthread_mutex_lock(&alt_a);
		pthread_mutex_unlock(&alt_a);
	}
	alt_ran++;
}

static void on_altstack_with(size_t size, int abba, int deliverable)
{
	alt_abba = abba;
	char *m = mmap(NULL, 4096 + size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m, 4096, PROT_NONE))
		exit(3);
	stack_t ss = { .ss_sp = m + 4096, .ss_size = size, .ss_flags = 0 };
	struct sigaction sa = { .sa_handler = alt_handler, .sa_flags = SA_ONSTACK };
	if (sigaltstack(&ss, NULL) || sigaction(SIGUSR1, &sa, NULL))
		exit(3);
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (!deliverable)
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	pthread_mutex_lock(&alt_a);
	if (abba)
		pthread_mutex_lock(&alt_b);
	if (abba)
		pthread_mutex_unlock(&alt_b);
	pthread_mutex_unlock(&alt_a);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	raise(SIGUSR1);
	raise(SIGUSR1);
	printf("handler ran %d times on %zu bytes\n", (int)alt_ran, size);
}

static void on_altstack(size_t size, int abba)
{
	on_altstack_with(size, abba, 0);
}

SCENARIO altstack_4k_ok(void) { on_altstack(4096, 0); }
SCENARIO altstack_16k_abba(void) { on_altstack(16384, 1); }
SCENARIO altstack_4k_abba(void) { on_altstack(4096, 1); }
/* main's order taken with the signal deliverable: the handler's inversion
 * is also a signal-safety one, whose check goes deepest. */
SCENARIO altstack_8k_abba(void) { on_altstack_with(8192, 1, 1); }

/* ---- coroutine stacks -------------------------------------------------------- */

/* Code running on a stack the program made itself, 4 KiB above a guard
 * page: a ucontext coroutine (makecontext/swapcontext, as qemu's) or a
 * stack the program switches to with its own instructions (boost.context,
 * libco). There it takes main's two locks in the order main takes them
 * (ok) or in the other (abba, a real inversion): the tracer knows neither
 * stack's size, and its checks, unwinding and report must not run off the
 * end (a new order on a 4 KiB makecontext stack crashed in the unwinder). */
#include <ucontext.h>

static pthread_mutex_t coro_a = PTHREAD_MUTEX_INITIALIZER, coro_b = PTHREAD_MUTEX_INITIALIZER;
static int coro_abba;
static ucontext_t coro_main_context, coro_context;

#define CORO_STACK 4096

static void coro_take_locks(void)
{
	pthread_mutex_t *first = coro_abba ? &coro_b : &coro_a, *second = coro_abba ? &coro_a : &coro_b;
	for (int i = 0; i < 3; i++) {   /* the first is a new chain; the others hit the cache */
		pthread_mutex_lock(first);
		pthread_mutex_lock(second);
		pthread_mutex_unlock(second);
		pthread_mutex_unlock(first);
	}
}

/* The stack between two inaccessible pages, as coroutine libraries lay
 * them out side by side: the one above its top makes any read past the
 * stack's end fault, whatever else the address space holds. */
static char *coro_stack_alloc(void)
{
	char *m = mmap(NULL, 4096 + CORO_STACK + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m, 4096, PROT_NONE) || mprotect(m + 4096 + CORO_STACK, 4096, PROT_NONE))
		exit(3);
	return m + 4096;
}

static void coro_main_order(void)
{
	pthread_mutex_lock(&coro_a);
	pthread_mutex_lock(&coro_b);
	pthread_mutex_unlock(&coro_b);
	pthread_mutex_unlock(&coro_a);
}

static void on_ucontext_coroutine(int abba)
{
	coro_abba = abba;
	coro_main_order();
	char *stack = coro_stack_alloc();
	if (getcontext(&coro_context))
		exit(3);
	coro_context.uc_stack.ss_sp = stack;
	coro_context.uc_stack.ss_size = CORO_STACK;
	coro_context.uc_link = &coro_main_context;
	makecontext(&coro_context, coro_take_locks, 0);
	if (swapcontext(&coro_main_context, &coro_context))
		exit(3);
	printf("coroutine on %d bytes returned\n", CORO_STACK);
}

#if defined(__x86_64__)
/* fn() with the stack pointer at top, the old one kept in rbx (which fn
 * preserves): a stack switch no library call announces. */
static void call_on_own_stack(void (*fn)(void), char *top)
{
	__asm__ volatile("mov %%rsp, %%rbx\n\t"
			 "mov %[top], %%rsp\n\t"
			 "call *%[fn]\n\t"
			 "mov %%rbx, %%rsp"
			 :
			 : [fn] "r"(fn), [top] "r"(top)
			 : "rbx", "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory", "cc");
}
#endif

static void on_switched_stack(int abba)
{
	coro_abba = abba;
	coro_main_order();
#if defined(__x86_64__)
	call_on_own_stack(coro_take_locks, coro_stack_alloc() + CORO_STACK);
#else
	coro_take_locks();
#endif
	printf("switched stack of %d bytes returned\n", CORO_STACK);
}

SCENARIO ucontext_4k_ok(void) { on_ucontext_coroutine(0); }
SCENARIO ucontext_4k_abba(void) { on_ucontext_coroutine(1); }
SCENARIO switched_4k_ok(void) { on_switched_stack(0); }
SCENARIO switched_4k_abba(void) { on_switched_stack(1); }

/* ---- perturb and the timer slack --------------------------------------------- */

/* A thread with a long timer slack (mpd sets 100 ms on its player and
 * decoder threads: prctl(PR_SET_TIMERSLACK), to save power), taking and
 * releasing a mutex 400 times. perturb's 1-50 us sleeps at a few of those
 * took the slack each: ~1 s apiece here. The slack the program set is
 * still its own afterwards. */
#include <sys/prctl.h>

SCENARIO perturb_timer_slack(void)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	unsigned long slack = 1000000000UL;
	if (prctl(PR_SET_TIMERSLACK, slack, 0, 0, 0))
		exit(3);
	for (int i = 0; i < 400; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	long now = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	printf("timer slack %s\n", now == (long)slack ? "kept" : "changed");
}

/* ---- raw clone() ------------------------------------------------------------- */

/* Children made with a raw clone() (no fork handlers run: whatever lock a
 * thread held at that instant stays held in the child, by nobody) while
 * another thread keeps making, nesting and destroying locks: each child
 * makes and nests locks of its own and _exit()s. The parent gives each 3 s
 * and says how many did not finish (0 without the preload; some hung with
 * it, waiting for a tracer lock the churning thread held). */
#include <sched.h>

static pthread_mutex_t clone_outer = PTHREAD_MUTEX_INITIALIZER, clone_c1 = PTHREAD_MUTEX_INITIALIZER,
		       clone_c2 = PTHREAD_MUTEX_INITIALIZER;
static atomic_int clone_stop;

static void *clone_churn(void *arg)
{
	(void)arg;
	while (!atomic_load(&clone_stop)) {
		pthread_mutex_t *m = malloc(sizeof(*m));
		pthread_mutex_init(m, NULL);
		pthread_mutex_lock(&clone_outer);
		pthread_mutex_lock(m);
		pthread_mutex_unlock(m);
		pthread_mutex_unlock(&clone_outer);
		pthread_mutex_destroy(m);
		free(m);
	}
	return NULL;
}

static int clone_child_main(void *arg)
{
	(void)arg;
	pthread_mutex_t own;
	pthread_mutex_init(&own, NULL);
	pthread_mutex_lock(&clone_c1);
	pthread_mutex_lock(&clone_c2);
	pthread_mutex_lock(&own);
	pthread_mutex_unlock(&own);
	pthread_mutex_unlock(&clone_c2);
	pthread_mutex_unlock(&clone_c1);
	_exit(0);
}

SCENARIO raw_clone_children(void)
{
	enum { CHILDREN = 30, CHILD_STACK = 1 << 16 };
	pthread_t churn;
	if (pthread_create(&churn, NULL, clone_churn, NULL))
		exit(3);
	int unfinished = 0;
	for (int i = 0; i < CHILDREN; i++) {
		char *stack = malloc(CHILD_STACK);
		pid_t pid = clone(clone_child_main, stack + CHILD_STACK, SIGCHLD, NULL);
		if (pid < 0)
			exit(3);
		int status = 0, done = 0;
		for (int waited = 0; waited < 300 && !(done = waitpid(pid, &status, WNOHANG) == pid); waited++)
			sleep_ms(10);
		if (!done || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			unfinished++;
			if (!done) {
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
			}
		}
		free(stack);
	}
	atomic_store(&clone_stop, 1);
	pthread_join(churn, NULL);
	printf("children unfinished: %d of %d\n", unfinished, CHILDREN);
}

/* ---- robust mutexes ----------------------------------------------------------- */

/* A robust mutex whose owner died, unlocked without pthread_mutex_consistent():
 * not recoverable, every later lock returns ENOTRECOVERABLE at once (and an
 * unlock EPERM). The hang checks' trylock-first left its lock word set
 * (glibc 2.36): the next lock blocked forever, a later unlock crashed. */
static pthread_mutex_t robust_lock;

static void *dies_holding(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&robust_lock);
	return NULL;
}

static void *locks_robust(void *unused)
{
	(void)unused;
	printf("other thread: lock %d\n", pthread_mutex_lock(&robust_lock));
	return NULL;
}

SCENARIO robust_not_recoverable(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&robust_lock, &a);
	pthread_t t;
	pthread_create(&t, NULL, dies_holding, NULL);
	pthread_join(t, NULL);
	int owner_died = pthread_mutex_lock(&robust_lock);
	int unlocked = pthread_mutex_unlock(&robust_lock);
	int again = pthread_mutex_lock(&robust_lock);
	printf("lock %d, unlock %d, lock %d\n", owner_died, unlocked, again);
	fflush(stdout);
	pthread_create(&t, NULL, locks_robust, NULL);
	pthread_join(t, NULL);
	printf("unlock %d\n", pthread_mutex_unlock(&robust_lock));
}

/* ---- process and memory calls the tracer could miss --------------------------- */

/* A vfork() child that fails to exec and calls _exit(): it shares the
 * parent's memory and runs no fork handler; it printed the parent's
 * summary (its count so far) and the parent's own never came. */
SCENARIO vfork_child_after_report(void)
{
	unlock_unheld(&never_locked);
	pid_t child = vfork();
	if (child == 0) {
		execl("/nonexistent/lockdep-rcu-test", "x", (char *)NULL);
		_exit(127);
	}
	int status = 0;
	waitpid(child, &status, 0);
	printf("vfork child exited %d\n", WEXITSTATUS(status));
	fflush(stdout);
	pthread_mutex_t other = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_unlock(&other);   /* a second report (another site), after the child */
}

/* Mutexes kept in a file mapped MAP_SHARED by the raw system call: the
 * tracer's class tags (written in a mutex's unused bytes) must never reach
 * a file. DATA_FILE names it; prints how many of its bytes are not zero
 * after the mutexes were used (glibc leaves them all zero). */
SCENARIO raw_mmap_shared_file(void)
{
	int fd = open(getenv("DATA_FILE"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, 4096))
		exit(3);
	pthread_mutex_t *m = (void *)syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		exit(3);
	pthread_mutex_init(&m[0], NULL);
	pthread_mutex_init(&m[1], NULL);
	for (int i = 0; i < 2; i++) {
		pthread_mutex_lock(&m[0]);
		pthread_mutex_lock(&m[1]);
		pthread_mutex_unlock(&m[1]);
		pthread_mutex_unlock(&m[0]);
	}
	syscall(SYS_munmap, m, 4096);
	unsigned char bytes[4096];
	ssize_t n = pread(fd, bytes, sizeof(bytes), 0);
	int nonzero = 0;
	for (ssize_t i = 0; i < n; i++)
		nonzero += bytes[i] != 0;
	close(fd);
	printf("%zd bytes read, %d not zero\n", n, nonzero);
}

/* ---- stderr, the program's ------------------------------------------------- */

/* The program's data file takes descriptor 2 (stderr closed before, by the
 * program or by whoever started it), then a bug is reported: the file must
 * hold the program's data only. DATA_FILE names it. */
static void data_file_at_fd2(void)
{
	const char *path = getenv("DATA_FILE");
	int fd = open(path ? path : "/dev/null", O_RDWR | O_CREAT | O_TRUNC, 0644);
	(void)!write(fd, "DATA\n", 5);
	unlock_unheld(&never_locked);   /* the bug reported */
	(void)!write(fd, "MORE\n", 5);
	char buf[4096];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	printf("fd %d holds %zd bytes: %s", fd, n, buf);
}

SCENARIO stderr_closed_then_data_file(void)
{
	close(2);
	data_file_at_fd2();
}

/* Started with stderr closed (by the test's shell). */
SCENARIO stderr_closed_at_start(void)
{
	data_file_at_fd2();
}

/* Stderr is a pipe nobody reads (a supervisor that died): the plain program
 * never writes there, so never gets SIGPIPE. */
SCENARIO stderr_pipe_unread(void)
{
	int p[2];
	if (pipe(p))
		exit(3);
	dup2(p[1], 2);
	close(p[0]);
	close(p[1]);
	unlock_unheld(&never_locked);
	printf("survived the report\n");
}

/* ---- the tracer's own thread ------------------------------------------------- */

#include <sched.h>

/* A call the kernel refuses in a process with more than one thread
 * (EINVAL), made once the program's threads are gone: the tracer's
 * watchdog thread, started by a grace-period wait, must not be in the way.
 * Prints the result of unshare(CLONE_NEWUSER) (by the C library's
 * function, or through syscall()), and says that a grace period still
 * ends afterwards (the watchdog watching it again). */
static void userns_after_watchdog(int by_syscall)
{
	synchronize_rcu();   /* announced to the watchdog, which starts */
	long ret = by_syscall ? syscall(SYS_unshare, CLONE_NEWUSER) : unshare(CLONE_NEWUSER);
	int err = ret ? errno : 0;
	synchronize_rcu();
	printf("unshare %ld (%s), grace period after\n", ret, strerror(err));
}

SCENARIO userns_after_watchdog_call(void) { userns_after_watchdog(0); }
SCENARIO userns_after_watchdog_syscall(void) { userns_after_watchdog(1); }

/* ---- a tight address-space limit --------------------------------------------------- */

#include <sys/resource.h>

static long vm_size_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmSize:", 7))
			kib = atol(line + 7);
	if (f)
		fclose(f);
	return kib;
}

static pthread_mutex_t limit_a = PTHREAD_MUTEX_INITIALIZER, limit_b = PTHREAD_MUTEX_INITIALIZER;

/* RLIMIT_AS set to what the process maps now plus 64 MiB, of which the
 * program takes 16 MiB, then an ABBA: the report comes whole (its chain
 * with stacks: the stack depot's 64 MiB reservation is what the limit
 * leaves it). Prints what the allocation gave. */
SCENARIO tight_address_space_abba(void)
{
	struct rlimit r;
	r.rlim_cur = r.rlim_max = (rlim_t)(vm_size_kib() + 64 * 1024) * 1024;
	if (setrlimit(RLIMIT_AS, &r))
		perror("setrlimit");
	char *first = malloc(16 << 20);
	if (first)
		memset(first, 1, 16 << 20);
	pthread_mutex_lock(&limit_a);
	pthread_mutex_lock(&limit_b);
	pthread_mutex_unlock(&limit_b);
	pthread_mutex_unlock(&limit_a);
	pthread_mutex_lock(&limit_b);
	pthread_mutex_lock(&limit_a);
	pthread_mutex_unlock(&limit_a);
	pthread_mutex_unlock(&limit_b);
	printf("allocation %s\n", first ? "ok" : "failed");
}

static const struct scenario scenarios[] = {
	{ "stack-16k", stack_16k },
	{ "stack-64k", stack_64k },
	{ "stack-16k-used-deep", stack_16k_used_deep },
	{ "signal-reader-during-unlocks", signal_reader_during_unlocks },
	{ "signal-new-class-during-class-creation", signal_new_class_during_class_creation },
	{ "fork-while-validating", fork_while_validating },
	{ "fork-in-handler-during-report", fork_in_handler_during_report },
	{ "process-creation-while-validating", process_creation_while_validating },
	{ "clean-child-of-reporting-parent", clean_child_of_reporting_parent },
	{ "descriptors-first-open", descriptors_first_open },
	{ "descriptors-no-leak", descriptors_no_leak },
	{ "descriptors-closefrom-daemon", descriptors_closefrom_daemon },
	{ "privilege-drop", privilege_drop },
	{ "credentials-unchanged", credentials_unchanged },
	{ "exit-sequence-kept", exit_sequence_kept },
	{ "exit-while-reporting", exit_while_reporting },
	{ "abort-after-report", abort_after_report },
	{ "perturb-no-cancellation-point", perturb_no_cancellation_point },
	{ "cancel-pending-in-lock-calls", cancel_pending_in_lock_calls },
	{ "robust-not-recoverable", robust_not_recoverable },
	{ "vfork-child-after-report", vfork_child_after_report },
	{ "raw-mmap-shared-file", raw_mmap_shared_file },
	{ "altstack-4k-ok", altstack_4k_ok },
	{ "altstack-16k-abba", altstack_16k_abba },
	{ "altstack-4k-abba", altstack_4k_abba },
	{ "altstack-8k-abba", altstack_8k_abba },
	{ "ucontext-4k-ok", ucontext_4k_ok },
	{ "raw-clone-children", raw_clone_children },
	{ "perturb-timer-slack", perturb_timer_slack },
	{ "ucontext-4k-abba", ucontext_4k_abba },
	{ "switched-4k-ok", switched_4k_ok },
	{ "switched-4k-abba", switched_4k_abba },
	{ "stderr-closed-then-data-file", stderr_closed_then_data_file },
	{ "stderr-closed-at-start", stderr_closed_at_start },
	{ "stderr-pipe-unread", stderr_pipe_unread },
	{ "userns-after-watchdog-call", userns_after_watchdog_call },
	{ "tight-address-space-abba", tight_address_space_abba },
	{ "userns-after-watchdog-syscall", userns_after_watchdog_syscall },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	return run_scenario(argc, argv, scenarios);
}
