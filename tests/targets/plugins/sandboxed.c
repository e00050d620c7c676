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
 */
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

/* Allows every call but ptrace (which nothing here makes). */
static int enter_filter(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/* Kills the process at any call the plain program does not make here. */
static int enter_tight_filter(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_read, 6, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigreturn, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(code) / sizeof(code[0]), code };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
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
	return 2;
}
