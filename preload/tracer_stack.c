/* The switch is makecontext/swapcontext: portable, and the extra
 * sigprocmask of each switch is nothing next to a report. The stack is
 * mapped on first use with a guard page below it. */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include "tracer_stack.h"

static char *stack_base;          /* the guard page; the stack is above it */
static ucontext_t caller_context, tracer_context;
static void (*pending_fn)(void *);
static void *pending_arg;

static int on_tracer_stack(void)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t lo = (uintptr_t)stack_base;
	return stack_base && sp >= lo && sp < lo + 4096 + TRACER_STACK_SIZE;
}

static void trampoline(void)
{
	pending_fn(pending_arg);
	/* returning resumes caller_context through uc_link */
}

void run_on_tracer_stack(void (*fn)(void *), void *arg)
{
	if (!stack_base) {
		void *p = mmap(NULL, 4096 + TRACER_STACK_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
		if (p != MAP_FAILED) {
			mprotect(p, 4096, PROT_NONE);
			stack_base = p;
		}
	}
	if (!stack_base || on_tracer_stack() || getcontext(&tracer_context)) {
		fn(arg);
		return;
	}
	tracer_context.uc_stack.ss_sp = stack_base + 4096;
	tracer_context.uc_stack.ss_size = TRACER_STACK_SIZE;
	tracer_context.uc_link = &caller_context;
	pending_fn = fn;
	pending_arg = arg;
	makecontext(&tracer_context, trampoline, 0);
	if (swapcontext(&caller_context, &tracer_context))
		fn(arg);
}
