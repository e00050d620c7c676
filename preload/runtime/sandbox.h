/* sandbox.h - what the tracer does once the program is in a seccomp sandbox
 * it entered itself (intercept_sandbox.c): from then on a report makes no
 * system call but write(), since the process may be killed for any call the
 * plain program never makes (SECCOMP_MODE_STRICT allows read, write, exit
 * and sigreturn; a filter may allow less than a report needs).
 *
 * So the process's identity is read once, before the sandbox: its pid and
 * the entering thread's name (a thread's id is its thread_state's, read
 * when it was listed); frames in modules whose symbols were not read
 * before print as "0xADDR [module+0xoff]" (for `lockdep-rcu report` or
 * addr2line to name later); the module list is not re-read; the tracer's
 * internal waits spin instead of sleeping on a futex; and the outputs
 * written at exit to files of their own (graph_path, lock_stat) are not
 * made. The state is process-wide and never ends (neither does a
 * sandbox): a thread outside it reports the same way. */
#ifndef LOCKDEP_RCU_SANDBOX_H
#define LOCKDEP_RCU_SANDBOX_H

#include <sys/types.h>

struct thread_state;

/* Once a thread of this process entered a sandbox: SANDBOX_FILTER, or
 * SANDBOX_STRICT, where even the clock faults (the kernel disables the
 * time-stamp counter the vDSO's clock_gettime reads). */
enum { SANDBOX_NONE, SANDBOX_FILTER, SANDBOX_STRICT };
extern int tracer_sandboxed;

static inline int in_sandbox(void)
{
	return __builtin_expect(__atomic_load_n(&tracer_sandboxed, __ATOMIC_ACQUIRE), 0);
}

static inline int clock_usable(void)
{
	return __atomic_load_n(&tracer_sandboxed, __ATOMIC_ACQUIRE) != SANDBOX_STRICT;
}

/* Before the sandbox: reads what the reports will need (the pid, the
 * thread's name and id; the caller lists the loaded objects). */
void sandbox_prepare(struct thread_state *ts);

/* After the call that entered it succeeded: SANDBOX_FILTER or _STRICT. */
void sandbox_entered(int mode);

/* The process's pid, the calling thread's id and name (comm, 16 bytes
 * with its NUL) as a report prints them: from the kernel, or in a
 * sandbox from what was read before it. */
pid_t report_pid(void);
pid_t report_tid(const struct thread_state *ts);
void report_comm(char comm[17]);

/* The calling thread's id: gettid(), or inside a sandbox read from
 * glibc's thread descriptor where sandbox_learn_tid() found it (0 if it
 * did not). */
pid_t thread_tid(void);
/* Told the calling thread's id as gettid() gave it, outside a sandbox. */
void sandbox_learn_tid(pid_t tid);

/* In a forked child, by its thread (of a sandboxed process: its pid and
 * the thread's id are new). */
void sandbox_fork_child(struct thread_state *ts);

/* Whether this is the process the tracer's state belongs to: a vfork()
 * child shares the parent's memory and must not print the parent's
 * summary or remove its log. */
int process_is_ours(void);
/* The constructor: this process is the one the reports are of. */
void process_note_ours(void);

#endif
