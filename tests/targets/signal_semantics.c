/* What a program sees of its signal handlers must not change under the
 * preload, which wraps every handler: each scenario checks one promise and
 * exits 1 with a line saying what differed, so the test runs it with and
 * without the preload and expects "done" both times. */
#include "target.h"
#include <errno.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (!(cond)) {                                                  \
			printf("FAILED %s:%d: ", __FILE__, __LINE__);           \
			printf(__VA_ARGS__);                                    \
			printf("\n");                                           \
			failures++;                                             \
		}                                                               \
	} while (0)

static volatile sig_atomic_t runs, errno_seen;
static volatile int info_signo, info_code, had_context;

static void plain_handler(int signo)
{
	(void)signo;
	runs++;
}

static void info_handler(int signo, siginfo_t *info, void *context)
{
	(void)signo;
	info_signo = info ? info->si_signo : -1;
	info_code = info ? info->si_code : -1;
	had_context = context != NULL;
	runs++;
}

/* sigaction()'s old action is the program's own handler, flags and mask;
 * SIG_IGN and SIG_DFL are what they were; signal() returns the previous
 * handler; refused signals fail the same way. */
SCENARIO round_trip(void)
{
	struct sigaction sa, old, now;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = plain_handler;
	sa.sa_flags = SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	CHECK(sigaction(SIGUSR1, &sa, &old) == 0, "install");
	CHECK(old.sa_handler == SIG_DFL, "first old action is SIG_DFL: %p", (void *)old.sa_handler);
	CHECK(sigaction(SIGUSR1, NULL, &now) == 0, "query");
	CHECK(now.sa_handler == plain_handler, "query returns the program's handler: %p", (void *)now.sa_handler);
	CHECK((now.sa_flags & (SA_RESTART | SA_NODEFER | SA_SIGINFO | SA_RESETHAND)) == (SA_RESTART | SA_NODEFER),
	      "flags kept, no SA_SIGINFO added: %#x", now.sa_flags);
	CHECK(sigismember(&now.sa_mask, SIGUSR2) == 1 && sigismember(&now.sa_mask, SIGTERM) == 0, "mask kept");

	sa.sa_handler = SIG_IGN;
	CHECK(sigaction(SIGUSR1, &sa, &old) == 0, "ignore");
	CHECK(old.sa_handler == plain_handler, "old action is the program's handler: %p", (void *)old.sa_handler);
	CHECK(raise(SIGUSR1) == 0 && runs == 0, "ignored signal ran a handler");
	sa.sa_handler = SIG_DFL;
	CHECK(sigaction(SIGUSR1, &sa, &old) == 0 && old.sa_handler == SIG_IGN, "SIG_IGN back: %p",
	      (void *)old.sa_handler);

	sa.sa_sigaction = info_handler;
	sa.sa_flags = SA_SIGINFO;
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "SA_SIGINFO install");
	CHECK(sigaction(SIGUSR1, NULL, &now) == 0 && now.sa_sigaction == info_handler && (now.sa_flags & SA_SIGINFO),
	      "SA_SIGINFO round trip");
	CHECK(raise(SIGUSR1) == 0 && runs == 1, "SA_SIGINFO handler ran: %d", (int)runs);
	CHECK(info_signo == SIGUSR1 && info_code == SI_TKILL && had_context, "siginfo %d code %d context %d",
	      info_signo, info_code, had_context);

	CHECK(signal(SIGUSR1, plain_handler) == (void (*)(int))(void *)info_handler, "signal() returns the old handler");
	CHECK(signal(SIGUSR1, SIG_DFL) == plain_handler, "signal() returns the program's handler");
	CHECK(signal(SIGUSR2, plain_handler) == SIG_DFL, "signal() on a fresh signal");
	CHECK(raise(SIGUSR2) == 0 && runs == 2, "signal() handler ran");
	CHECK(sigaction(SIGUSR2, NULL, &now) == 0 && now.sa_handler == plain_handler && (now.sa_flags & SA_RESTART),
	      "signal() installs with SA_RESTART: %#x", now.sa_flags);

	errno = 0;
	sa.sa_handler = plain_handler;
	sa.sa_flags = 0;
	CHECK(sigaction(SIGKILL, &sa, NULL) == -1 && errno == EINVAL, "SIGKILL refused: errno %d", errno);
	errno = 0;
	CHECK(sigaction(32, &sa, NULL) == -1 && errno == EINVAL, "glibc's SIGCANCEL refused: errno %d", errno);
	errno = 0;
	CHECK(sigaction(0, &sa, NULL) == -1 && errno == EINVAL, "signal 0 refused: errno %d", errno);
	errno = 0;
	CHECK(signal(SIGSTOP, plain_handler) == SIG_ERR && errno == EINVAL, "signal(SIGSTOP): errno %d", errno);
}

static void handler_sets_errno(int signo)
{
	(void)signo;
	errno_seen = errno;
	errno = EDOM;
}

/* The handler sees the errno of the code it interrupted, and what it
 * leaves in errno is what the program finds after it (as without any
 * preload: the kernel does not save errno). */
SCENARIO errno_around_handler(void)
{
	signal(SIGUSR1, handler_sets_errno);
	errno = ERANGE;
	raise(SIGUSR1);
	CHECK(errno_seen == ERANGE, "the handler saw errno %d, not ERANGE", (int)errno_seen);
	CHECK(errno == EDOM, "after the handler errno is %d, not the handler's EDOM", errno);
}

static int pipe_fds[2];

static void *late_writer(void *arg)
{
	(void)arg;
	usleep(300 * 1000);
	if (write(pipe_fds[1], "x", 1) != 1)
		abort();
	return NULL;
}

/* read() on an empty pipe, interrupted by SIGALRM 50 ms in, the data
 * coming at 300 ms: restarted with SA_RESTART, EINTR without. */
static void interrupted_read(int flags, int expect_restart)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = plain_handler;
	sa.sa_flags = flags;
	sigaction(SIGALRM, &sa, NULL);
	if (pipe(pipe_fds))
		abort();
	pthread_t t;
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, &old);   /* the writer never takes SIGALRM */
	pthread_create(&t, NULL, late_writer, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	struct itimerval it = { { 0, 0 }, { 0, 50 * 1000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	char c;
	int before = runs;
	errno = 0;
	ssize_t n = read(pipe_fds[0], &c, 1);
	int err = errno;
	CHECK(runs == before + 1, "SIGALRM handled during read()");
	if (expect_restart)
		CHECK(n == 1, "SA_RESTART: read() restarted and returned %zd (errno %d)", n, err);
	else
		CHECK(n == -1 && err == EINTR, "no SA_RESTART: read() returned %zd errno %d, not EINTR", n, err);
	pthread_join(t, NULL);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
}

SCENARIO restart(void)
{
	interrupted_read(SA_RESTART, 1);
	interrupted_read(0, 0);
	/* signal() is BSD signal(): SA_RESTART */
	signal(SIGALRM, plain_handler);
	struct sigaction now;
	sigaction(SIGALRM, NULL, &now);
	CHECK(now.sa_flags & SA_RESTART, "signal(): SA_RESTART %#x", now.sa_flags);
}

/* The handler's sa_mask, and the signal itself, are blocked while it runs,
 * and the mask comes back after. */
static volatile int mask_ok;

static void handler_checks_mask(int signo)
{
	sigset_t cur;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	mask_ok = sigismember(&cur, signo) == 1 && sigismember(&cur, SIGUSR2) == 1;
}

SCENARIO mask_in_handler(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler_checks_mask;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	CHECK(mask_ok, "SIGUSR1 and SIGUSR2 blocked in the handler");
	sigset_t cur;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	CHECK(!sigismember(&cur, SIGUSR1) && !sigismember(&cur, SIGUSR2), "mask restored after the handler");
}

/* sigsuspend() with a temporary mask: the pending signal's handler runs
 * inside it, the call fails with EINTR, and the mask comes back; the old
 * mask pthread_sigmask() returns is the real one throughout. */
SCENARIO suspend(void)
{
	signal(SIGUSR1, plain_handler);
	sigset_t block_usr1, old, cur, none;
	sigemptyset(&block_usr1);
	sigaddset(&block_usr1, SIGUSR1);
	sigemptyset(&none);
	CHECK(pthread_sigmask(SIG_BLOCK, &block_usr1, &old) == 0 && !sigismember(&old, SIGUSR1), "block");
	int before = runs;
	raise(SIGUSR1);
	CHECK(runs == before, "blocked: pending, not run");
	errno = 0;
	CHECK(sigsuspend(&none) == -1 && errno == EINTR, "sigsuspend: errno %d", errno);
	CHECK(runs == before + 1, "the handler ran inside sigsuspend()");
	CHECK(pthread_sigmask(SIG_SETMASK, NULL, &cur) == 0 && sigismember(&cur, SIGUSR1), "mask back after sigsuspend");
	CHECK(sigprocmask(SIG_SETMASK, &old, &cur) == 0 && sigismember(&cur, SIGUSR1), "sigprocmask's old mask");
	CHECK(pthread_sigmask(SIG_SETMASK, NULL, &cur) == 0 && !sigismember(&cur, SIGUSR1), "unblocked again");
}

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "round-trip", round_trip },
		{ "errno", errno_around_handler },
		{ "restart", restart },
		{ "mask-in-handler", mask_in_handler },
		{ "sigsuspend", suspend },
		{ NULL, NULL },
	};
	int ret = run_scenario(argc, argv, scenarios);
	if (ret)
		return ret;
	if (failures)
		return 1;
	printf("done\n");
	return 0;
}
