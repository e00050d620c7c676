/* The switch: on x86-64 a call with the stack pointer moved (no system
 * call, so it works in a seccomp sandbox, and call/ret stay paired for a
 * shadow stack); elsewhere makecontext/swapcontext, whose sigprocmask per
 * switch is nothing next to a report. The stack is mapped on first use
 * with a guard page below it. */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include "runtime/sandbox.h"
#include "runtime/thread_state.h"
#include "runtime/tracer_arena.h"
#include "runtime/tracer_stack.h"
#include "base/raw_syscall.h"

static char *stack_base;          /* the guard page; the stack is above it */

static int on_tracer_stack_at(uintptr_t sp)
{
	uintptr_t lo = (uintptr_t)stack_base;
	return stack_base && sp >= lo + 4096 && sp < lo + 4096 + TRACER_STACK_SIZE;
}

static int on_tracer_stack(void)
{
	return on_tracer_stack_at((uintptr_t)__builtin_frame_address(0));
}

int on_report_stack(uintptr_t sp, uintptr_t *floor)
{
	if (!on_tracer_stack_at(sp))
		return 0;
	*floor = (uintptr_t)stack_base + 4096;
	return 1;
}

#if defined(__x86_64__)
/* fn(arg) with the stack pointer at top (16-byte aligned, as the ABI wants
 * it before a call). The old stack pointer waits in rbx, which fn keeps;
 * everything fn may change is declared clobbered. This function keeps its
 * frame pointer, and its call frame information finds the caller through
 * it: unwinders walk from fn's frames on to the stack it was called on. */
static __attribute__((noinline)) void call_on_stack(void (*fn)(void *), void *arg, void *top)
{
	__asm__ volatile("mov %%rsp, %%rbx\n\t"
			 "mov %[top], %%rsp\n\t"
			 "call *%[fn]\n\t"
			 "mov %%rbx, %%rsp"
			 : "+D"(arg)
			 : [fn] "r"(fn), [top] "r"(top)
			 : "rbx", "rax", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory", "cc",
			   "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
			   "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "st", "st(1)", "st(2)",
			   "st(3)", "st(4)", "st(5)", "st(6)", "st(7)");
}
#else
static ucontext_t caller_context, tracer_context;
static void (*pending_fn)(void *);
static void *pending_arg;

static void trampoline(void)
{
	pending_fn(pending_arg);
	/* returning resumes caller_context through uc_link */
}

static void call_on_stack(void (*fn)(void *), void *arg, void *top)
{
	if (getcontext(&tracer_context)) {
		fn(arg);
		return;
	}
	tracer_context.uc_stack.ss_sp = stack_base + 4096;
	tracer_context.uc_stack.ss_size = (size_t)((char *)top - (stack_base + 4096));
	tracer_context.uc_link = &caller_context;
	pending_fn = fn;
	pending_arg = arg;
	makecontext(&tracer_context, trampoline, 0);
	if (swapcontext(&caller_context, &tracer_context))
		fn(arg);
}
#endif

void run_on_tracer_stack(void (*fn)(void *), void *arg)
{
	if (!stack_base) {
		void *p = raw_mmap(NULL, 4096 + TRACER_STACK_SIZE, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
		if (p != MAP_FAILED) {
			mprotect(p, 4096, PROT_NONE);
			stack_base = p;
		}
	}
	if (!stack_base || on_tracer_stack()) {
		fn(arg);
		return;
	}
	call_on_stack(fn, arg, stack_base + 4096 + TRACER_STACK_SIZE);
}

/* ---- the per-thread check stacks ----------------------------------------- */

int on_check_stack(const struct thread_state *ts, uintptr_t sp, uintptr_t *floor)
{
	uintptr_t lo = (uintptr_t)ts->check_stack;
	if (!lo || sp < lo + 4096 || sp >= lo + 4096 + CHECK_STACK_SIZE)
		return 0;
	*floor = lo + 4096;
	return 1;
}

int run_on_check_stack(struct thread_state *ts, void (*fn)(void *), void *arg)
{
#if defined(__x86_64__)
	if (ts->check_stack_busy)
		return 0;
	if (!ts->check_stack) {
		/* A system call, in a slow path only: the checks of a new chain
		 * on a stack the tracer cannot measure. Inside a seccomp sandbox
		 * the pages come from the tracer's reserve, with no guard page
		 * (mprotect may be what the filter kills for). */
		char *p = tracer_pages_map(4096 + CHECK_STACK_SIZE);
		if (!p)
			return 0;
		if (!in_sandbox())
			(void)mprotect(p, 4096, PROT_NONE);
		ts->check_stack = p;
	}
	ts->check_stack_busy = 1;
	ts->check_stack_caller = (uintptr_t)__builtin_frame_address(0);
	signal_fence();
	call_on_stack(fn, arg, ts->check_stack + 4096 + CHECK_STACK_SIZE);
	signal_fence();
	ts->check_stack_caller = 0;
	ts->check_stack_busy = 0;
	return 1;
#else
	(void)ts;
	(void)fn;
	(void)arg;
	return 0;
#endif
}

void check_stack_release(struct thread_state *ts)
{
	char *p = ts->check_stack;
	if (!p || ts->check_stack_busy)
		return;
	ts->check_stack = NULL;
	tracer_pages_unmap(p, 4096 + CHECK_STACK_SIZE);
}
