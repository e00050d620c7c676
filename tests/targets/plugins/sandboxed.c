/* sandboxed.c - a program that locks inside a seccomp sandbox it entered
 * itself, for the tracer's "prepare before the sandbox" (intercept_sandbox.c).
 *
 *   strict-nested  SECCOMP_MODE_STRICT (read, write, exit, sigreturn only),
 *                  then heap mutexes of two classes nested in one order;
 *                  prints "ok"
 *   filter-abba    a seccomp filter (through syscall(SYS_seccomp)) that
 *                  forbids one unrelated call, then the same mutexes nested
 *                  in both orders: the tracer still reports inside it
 *   strict-abba    SECCOMP_MODE_STRICT, then the two nested in both orders:
 *                  the report must be made with write() alone
 *   tight-abba     a filter that kills the process at any call but read,
 *                  write, futex, exit and sigreturn (what the plain program
 *                  makes), then the same inversion
 *   tight-thread   a filter that allows what pthread_create() and a thread's
 *                  end need, then a thread made inside that nests the two
 *                  in both orders
 *   tight-fork     the same filter with fork and wait4 allowed: a child
 *                  forked inside nests the two in both orders
 *   probe          libseccomp's feature probes (a NULL filter, an action
 *                  query, the prctl form): no sandbox; nested locks; prints
 *                  what the probes returned and how many descriptors it has
 *   tight-wait     a thread made before holds a lock 1.5 s; the main thread
 *                  enters the tight-abba filter (for itself alone) and
 *                  waits for that lock (a wait the tracer announces)
 *   strict-grow    SECCOMP_MODE_STRICT, then 20,000 locks made inside (the
 *                  tracer's tables grow), neighbours nested in address
 *                  order, then the last two in the other order
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct obj {
	pthread_mutex_t m;
	int v;
};

static void nest(struct obj *outer, struct obj *inner)
{
	pthread_mutex_lock(&outer->m);
	pthread_mutex_lock(&inner->m);
	outer->v++;
	inner->v++;
	pthread_mutex_unlock(&inner->m);
	pthread_mutex_unlock(&outer->m);
}

/* Two init sites: two lock classes, so nesting them is a dependency of
 * the lock graph (with its stack in the depot). */
static __attribute__((noinline)) struct obj *account_new(void)
{
	struct obj *o = calloc(1, sizeof(*o));
	pthread_mutex_init(&o->m, NULL);
	return o;
}

static __attribute__((noinline)) struct obj *ledger_new(void)
{
	struct obj *o = calloc(1, sizeof(*o));
	pthread_mutex_init(&o->m, NULL);
	return o;
}

/* Loads a filter through syscall(SYS_seccomp), as libseccomp does. */
static int enter_filter_program(struct sock_filter *code, unsigned short len)
{
	struct sock_fprog prog = { len, code };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/* Allows every call but ptrace (which nothing here makes). */
static int enter_filter(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	return enter_filter_program(code, sizeof(code) / sizeof(code[0]));
}

/* Kills the process at any call not in allowed[n] (n < 30). */
static int enter_allowlist(const int *allowed, int n)
{
	struct sock_filter code[32];
	code[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (int i = 0; i < n; i++)   /* equal: jump to the ALLOW after the KILL */
		code[1 + i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)allowed[i],
							   (unsigned char)(n - i), 0);
	code[n + 1] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	code[n + 2] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return enter_filter_program(code, (unsigned short)(n + 3));
}

/* What the plain program calls inside: read, write, futex, exit. */
#define TIGHT_CALLS SYS_read, SYS_write, SYS_futex, SYS_exit, SYS_exit_group, SYS_rt_sigreturn

static int enter_tight_filter(void)
{
	static const int allowed[] = { TIGHT_CALLS };
	return enter_allowlist(allowed, sizeof(allowed) / sizeof(allowed[0]));
}

/* Those, and what glibc calls to start, end and join a thread or fork. */
static int enter_thread_filter(void)
{
	static const int allowed[] = {
		TIGHT_CALLS, SYS_clone, SYS_clone3, SYS_mmap, SYS_mprotect, SYS_munmap, SYS_madvise,
		SYS_set_robust_list, SYS_rseq, SYS_rt_sigprocmask, SYS_rt_sigaction, SYS_wait4,
	};
	return enter_allowlist(allowed, sizeof(allowed) / sizeof(allowed[0]));
}

#define GROW_LOCKS 20000

/* The init site of the locks made inside the sandbox: one more class. */
static __attribute__((noinline)) void grown_init(struct obj *o)
{
	pthread_mutex_init(&o->m, NULL);
}

static struct obj *thread_a, *thread_b;
static pthread_barrier_t holding;

static void *hold_a_while(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&thread_a->m);
	pthread_barrier_wait(&holding);
	struct timespec t = { 1, 500000000 };
	nanosleep(&t, NULL);
	pthread_mutex_unlock(&thread_a->m);
	return NULL;
}

static void *nest_both_ways(void *unused)
{
	(void)unused;
	nest(thread_a, thread_b);
	nest(thread_b, thread_a);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	/* classes made before: what the sandbox keeps is the tracer's lazy part */
	struct obj *a = account_new(), *b = ledger_new();
	if (!strcmp(argv[1], "strict-nested")) {
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
			return 3;
		for (int i = 0; i < 3; i++)
			nest(a, b);
		write(1, "ok\n", 3);
		syscall(SYS_exit, 0);
	}
	if (!strcmp(argv[1], "filter-abba")) {
		if (enter_filter())
			return 3;
		nest(a, b);
		nest(b, a);
		write(1, "ok\n", 3);
		return 0;
	}
	if (!strcmp(argv[1], "strict-abba")) {
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
			return 3;
		nest(a, b);
		nest(b, a);
		write(1, "ok\n", 3);
		syscall(SYS_exit, 0);
	}
	if (!strcmp(argv[1], "tight-abba")) {
		if (enter_tight_filter())
			return 3;
		nest(a, b);
		nest(b, a);
		write(1, "ok\n", 3);
		syscall(SYS_exit_group, 0);
	}
	if (!strcmp(argv[1], "tight-thread")) {
		thread_a = a;
		thread_b = b;
		if (enter_thread_filter())
			return 3;
		pthread_t t;
		if (pthread_create(&t, NULL, nest_both_ways, NULL) || pthread_join(t, NULL))
			return 4;
		write(1, "ok\n", 3);
		syscall(SYS_exit_group, 0);
	}
	if (!strcmp(argv[1], "tight-wait")) {
		thread_a = a;
		pthread_t t;
		if (pthread_barrier_init(&holding, NULL, 2) || pthread_create(&t, NULL, hold_a_while, NULL))
			return 4;
		pthread_barrier_wait(&holding);
		if (enter_tight_filter())
			return 3;
		pthread_mutex_lock(&a->m);   /* waits ~1.5 s on a futex */
		pthread_mutex_unlock(&a->m);
		nest(a, b);
		nest(b, a);
		write(1, "ok\n", 3);
		syscall(SYS_exit_group, 0);
	}
	if (!strcmp(argv[1], "strict-grow")) {
		struct obj *many = calloc(GROW_LOCKS, sizeof(*many));
		if (!many || prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT))
			return 3;
		for (int i = 0; i < GROW_LOCKS; i++)
			grown_init(&many[i]);
		for (int i = 0; i + 1 < GROW_LOCKS; i++)
			nest(&many[i], &many[i + 1]);
		nest(&many[GROW_LOCKS - 1], &many[GROW_LOCKS - 2]);   /* the newest pair, inverted */
		write(1, "ok\n", 3);
		syscall(SYS_exit, 0);
	}
	if (!strcmp(argv[1], "tight-fork")) {
		if (enter_thread_filter())
			return 3;
		pid_t child = fork();
		if (child == 0) {
			nest(a, b);
			nest(b, a);
			syscall(SYS_exit_group, 0);
		}
		int status = -1;
		if (child < 0 || waitpid(child, &status, 0) != child || status != 0)
			return 4;
		write(1, "ok\n", 3);
		syscall(SYS_exit_group, 0);
	}
	if (!strcmp(argv[1], "probe")) {
		/* What libseccomp (QEMU's) asks before any filter: whether a
		 * flag is known (a NULL filter: EFAULT when it is) and whether
		 * an action is; no sandbox is entered. Then locks, and the
		 * descriptors the process has. */
		long flag = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, NULL);
		int flag_errno = errno;
		unsigned action = SECCOMP_RET_KILL_PROCESS;
		long avail = syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action);
		long old = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL);
		nest(a, b);
		nest(a, b);
		int fds = 0;
		for (int fd = 0; fd < 4096; fd++)
			fds += fcntl(fd, F_GETFD) != -1;
		printf("flag probe %ld %s, action %ld, prctl probe %ld, %d descriptors\n", flag,
		       flag_errno == EFAULT ? "EFAULT" : "other", avail, old, fds);
		return 0;
	}
	return 2;
}
