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
#include "tracer_stack.h"

static char *stack_base;          /* the guard page; the stack is above it */

static int on_tracer_stack(void)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t lo = (uintptr_t)stack_base;
	return stack_base && sp >= lo && sp < lo + 4096 + TRACER_STACK_SIZE;
}

#if defined(__x86_64__)
/* fn(arg) with the stack pointer at top (16-byte aligned, as the ABI wants
 * it before a call). The old stack pointer waits in rbx, which fn keeps;
 * everything fn may change is declared clobbered. */
static void call_on_stack(void (*fn)(void *), void *arg, void *top)
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
		void *p = mmap(NULL, 4096 + TRACER_STACK_SIZE, PROT_READ | PROT_WRITE,
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
