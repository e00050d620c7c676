/* Stack capture: the tracer's own unwinder (cfi_unwind.c: .eh_frame rules
 * cached per return address), and where it cannot go on, glibc's
 * backtrace(), i.e. libgcc's DWARF unwinder:
 * after its one-time load it allocates nothing, takes no lock (it finds
 * unwind tables with _dl_find_object), keeps no descriptor and has no
 * thread-local storage, unlike libunwind 1.6 (a pipe on fds 3 and 4 for
 * memory validation, and TLS that a dlopen()ed copy allocates with malloc
 * on each thread's first use). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <link.h>
#include <ucontext.h>
#include "unwind/backtrace.h"
#include "runtime/real_functions.h"
#include "unwind/cfi_unwind.h"
#include "base/options.h"
#include "runtime/signal_state.h"
#include "runtime/thread_state.h"
#include "runtime/tracer_stack.h"
#include "runtime/sandbox.h"

typedef int (*backtrace_fn)(void **buffer, int size);
/* glibc's own backtrace(), looked up in libc itself: a program linked with
 * libunwind (gdnsd) has libunwind's `backtrace` first in the global scope,
 * and calling that would bring back libunwind's pipe and its TLS. It loads
 * libgcc_s once; then libgcc_s's unwinder is called directly, so a short
 * capture stops as soon as it has its frames. */
static backtrace_fn glibc_backtrace;
struct _Unwind_Context;
typedef int (*unwind_trace_fn)(struct _Unwind_Context *, void *);
static int (*unwind_backtrace)(unwind_trace_fn, void *);
static uintptr_t (*unwind_get_ip)(struct _Unwind_Context *);
static int unwinder_ready;
static uintptr_t tracer_text_lo, tracer_text_hi;   /* our executable segment */
static __thread const char *unavailable_reason __attribute__((tls_model("initial-exec")));

static int find_own_text(struct dl_phdr_info *info, size_t size, void *base)
{
	(void)size;
	if (info->dlpi_addr != (uintptr_t)base)
		return 0;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			tracer_text_lo = info->dlpi_addr + ph->p_vaddr;
			tracer_text_hi = tracer_text_lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* makecontext() leaves the context's stack pointer on the return address
 * it gives the function: glibc's __start_context, where a coroutine's
 * stack ends for an unwinder. Kept only when it is in the C library's
 * own code. */
static void learn_context_start(void)
{
	static uintptr_t stack[64] __attribute__((aligned(16)));
	ucontext_t uc;
	if (getcontext(&uc))
		return;
	uc.uc_stack.ss_sp = stack;
	uc.uc_stack.ss_size = sizeof(stack);
	uc.uc_link = NULL;
	makecontext(&uc, (void (*)(void))learn_context_start, 0);
	uintptr_t sp = (uintptr_t)uc.uc_mcontext.gregs[REG_RSP];
	if (sp < (uintptr_t)stack || sp >= (uintptr_t)stack + sizeof(stack))
		return;
	uintptr_t pc = *(const uintptr_t *)sp;
	Dl_info in_code, in_libc;
	if (dladdr((void *)pc, &in_code) && dladdr((void *)(uintptr_t)&getcontext, &in_libc) &&
	    in_code.dli_fbase == in_libc.dli_fbase)
		cfi_unwind_set_context_start(pc);
}

void backtrace_warm_up(void)
{
	void *raw[4];
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	Dl_info info;
	if (dladdr((void *)&backtrace_warm_up, &info))
		dl_iterate_phdr(find_own_text, info.dli_fbase);
	void *libc = loader_dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	if (libc) {
		glibc_backtrace = (backtrace_fn)dlsym(libc, "backtrace");
		loader_dlclose(libc);
	}
	if (glibc_backtrace) {
		glibc_backtrace(raw, 4);   /* loads libgcc_s's unwinder, once */
		void *libgcc = loader_dlopen("libgcc_s.so.1", RTLD_LAZY | RTLD_NOLOAD);
		if (libgcc) {
			/* from libgcc_s itself, not whatever the global scope has */
			unwind_backtrace = (int (*)(unwind_trace_fn, void *))dlsym(libgcc, "_Unwind_Backtrace");
			unwind_get_ip = (uintptr_t (*)(struct _Unwind_Context *))dlsym(libgcc, "_Unwind_GetIP");
			loader_dlclose(libgcc);
		}
		__atomic_store_n(&unwinder_ready, 1, __ATOMIC_RELEASE);
	}
	learn_context_start();
	tracer_leave(ts);
}

const char *backtrace_unavailable_reason(void)
{
	return unavailable_reason;
}

static int is_tracer_frame(uintptr_t pc)
{
	return pc >= tracer_text_lo && pc < tracer_text_hi;
}

struct walk {
	uintptr_t *frames;
	size_t max, n;
};

/* _URC_NO_REASON goes on, _URC_END_OF_STACK stops. The tracer's own frames
 * (the wrapper and what it called) come first and are dropped. */
static int walk_step(struct _Unwind_Context *context, void *arg)
{
	struct walk *w = arg;
	uintptr_t pc = unwind_get_ip(context);
	if (!pc)
		return 5;
	if (is_tracer_frame(pc))
		return 0;
	w->frames[w->n++] = pc;
	return w->n == w->max ? 5 : 0;
}

static size_t walk_stack(uintptr_t *frames, size_t max)
{
	struct walk w = { frames, max, 0 };
	if (max)
		unwind_backtrace(walk_step, &w);
	return w.n;
}

static size_t walk_with_glibc(uintptr_t *frames, size_t max)
{
	void *raw[64];
	void **into = max + 16 <= 64 ? raw : (void **)frames;
	int room = max + 16 <= 64 ? (int)(max + 16) : (int)max;
	int n = glibc_backtrace(into, room);
	size_t out = 0;
	for (int i = 0; i < n && out < max; i++)
		if (!is_tracer_frame((uintptr_t)into[i]))
			frames[out++] = (uintptr_t)into[i];
	return out;
}

/* What stack_floor() answers for a stack pointer on none of the stacks the
 * tracer knows, the thread's own being known: a stack the program made (a
 * coroutine's), whose size nothing tells. */
#define STACK_FOREIGN UINTPTR_MAX

/* The lowest address code running at sp may use: the alternate signal
 * stack's when a handler runs there (a 4 KiB sigaltstack crashed the
 * capture, measured against the thread's stack it was not on), the
 * tracer's check or report stack's, the thread's own when sp is on it;
 * STACK_FOREIGN when sp is on none of them (a 4 KiB makecontext() stack
 * crashed the capture, taken for the thread's); 0 when the thread's own
 * stack is not known (a thread the tracer did not see start). */
static uintptr_t stack_floor(const struct thread_state *ts, uintptr_t sp)
{
	const struct signal_context *sc = signal_context();
	unsigned depth = sc->depth < MAX_SIGNAL_NESTING ? sc->depth : MAX_SIGNAL_NESTING;
	for (unsigned i = depth; i-- > 0;) {
		const struct signal_frame *f = &sc->frames[i];
		if (f->altstack_hi && sp >= f->altstack_lo && sp < f->altstack_hi)
			return f->altstack_lo;
	}
	uintptr_t floor;
	if (on_check_stack(ts, sp, &floor) || on_report_stack(sp, &floor))
		return floor;
	if (ts->stack_limit && sp >= ts->stack_limit && (!ts->stack_top || sp < ts->stack_top))
		return ts->stack_limit;
	return ts->stack_top ? STACK_FOREIGN : 0;
}

static int short_of(const struct thread_state *ts, uintptr_t sp, size_t need)
{
	uintptr_t floor = stack_floor(ts, sp);
	return floor == STACK_FOREIGN || (floor && sp - floor < need);
}

int stack_short(size_t need)
{
	return short_of(thread_state(), (uintptr_t)__builtin_frame_address(0), need);
}

/* The stack the tracer knows that holds sp, [*lo, *hi): 1; 0 when sp is on
 * none (a stack the program made: a coroutine's), -1 when the thread's own
 * stack is not known (a thread the tracer did not see start). */
static int known_stack_of(const struct thread_state *ts, uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	const struct signal_context *sc = signal_context();
	unsigned depth = sc->depth < MAX_SIGNAL_NESTING ? sc->depth : MAX_SIGNAL_NESTING;
	for (unsigned i = depth; i-- > 0;) {
		const struct signal_frame *f = &sc->frames[i];
		if (f->altstack_hi && sp >= f->altstack_lo && sp < f->altstack_hi) {
			*lo = f->altstack_lo;
			*hi = f->altstack_hi;
			return 1;
		}
	}
	if (on_check_stack(ts, sp, lo)) {
		*hi = *lo + CHECK_STACK_SIZE;
		return 1;
	}
	if (on_report_stack(sp, lo)) {
		*hi = *lo + TRACER_STACK_SIZE;
		return 1;
	}
	if (ts->stack_limit && sp >= ts->stack_limit && ts->stack_top && sp < ts->stack_top) {
		*lo = ts->stack_limit;
		*hi = ts->stack_top;
		return 1;
	}
	return ts->stack_top ? 0 : -1;
}

/* A capture with the room it needs. from: the frame to walk from (a
 * frame of the tracer's on the program's stack), or NULL for here. The
 * walk reads the stack it starts on freely and anything else only once
 * the kernel says it can be read; on a stack the tracer does not know it
 * never hands over to libgcc, which would read without asking (a program
 * switching stacks with its own instructions leaves call frame
 * information that points past its stack's end: a capture there crashed,
 * depending on what the address space had next to it). */
static size_t capture_with_room(struct thread_state *ts, uintptr_t *frames, size_t max, const uintptr_t *from)
{
	uintptr_t start = from ? (uintptr_t)from : (uintptr_t)__builtin_frame_address(0);
	struct cfi_bounds bounds = { 0, 0, 0 };
	int known = known_stack_of(ts, start, &bounds.lo, &bounds.hi);
	bounds.no_fallback = known == 0;
	tracer_enter(ts);
	long fast = !tracer_options.fast_unwind && known != 0
			    ? -1
			    : cfi_unwind_capture_at(from, frames, max, tracer_text_lo, tracer_text_hi,
						    known < 0 ? NULL : &bounds);
	size_t out = fast >= 0 ? (size_t)fast
		   : unwind_backtrace && unwind_get_ip ? walk_stack(frames, max) : walk_with_glibc(frames, max);
	tracer_leave(ts);
	return out;
}

struct capture_job {
	struct thread_state *ts;
	uintptr_t *frames;
	size_t max;
	const uintptr_t *from;
	size_t n;
};

static void capture_job_run(void *p)
{
	struct capture_job *job = p;
	job->n = capture_with_room(job->ts, job->frames, job->max, job->from);
}

size_t backtrace_capture(uintptr_t *frames, size_t max)
{
	unavailable_reason = 0;
	if (!__atomic_load_n(&unwinder_ready, __ATOMIC_ACQUIRE)) {
		unavailable_reason = "the unwinder is not loaded yet (before the tracer's constructor)";
		return 0;
	}
	struct thread_state *ts = thread_state();
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t floor;
	/* On the check stack every frame below the one that switched is the
	 * tracer's: the walk starts there, on the program's stack. */
	const uintptr_t *from = on_check_stack(ts, sp, &floor) ? (const uintptr_t *)ts->check_stack_caller : NULL;
	if (!short_of(ts, sp, BACKTRACE_STACK_NEEDED))
		return capture_with_room(ts, frames, max, from);
	/* Too little room here, or none known: the capture runs on the
	 * thread's check stack, from this frame. */
	struct capture_job job = { ts, frames, max, (const uintptr_t *)sp, 0 };
	if (run_on_check_stack(ts, capture_job_run, &job))
		return job.n;
	unavailable_reason = "too little stack left on this thread to unwind it";
	return 0;
}

size_t backtrace_capture_from(const uintptr_t *fp, uintptr_t *frames, size_t max)
{
	if (!tracer_options.fast_unwind || !__atomic_load_n(&unwinder_ready, __ATOMIC_ACQUIRE) ||
	    stack_short(BACKTRACE_STACK_NEEDED))
		return backtrace_capture(frames, max);
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	long fast = cfi_unwind_capture_from(fp, frames, max);
	tracer_leave(ts);
	return fast >= 0 ? (size_t)fast : backtrace_capture(frames, max);
}

size_t backtrace_of_blocked_thread(int tid, uintptr_t *frames, size_t max, const char **why)
{
	*why = "its stack could not be read";
	if (in_sandbox() || !__atomic_load_n(&unwinder_ready, __ATOMIC_ACQUIRE))
		return 0;
	/* "NR ARG1 .. ARG6 SP PC" in a system call, "-1 SP PC" blocked
	 * otherwise, "running" when it runs. */
	char path[64], text[256];
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	text[n] = 0;
	if (!strncmp(text, "running", 7)) {
		*why = "it is running: its stack cannot be read without stopping it";
		return 0;
	}
	/* the last two numbers */
	char *words[9];
	size_t nwords = 0;
	char *save = NULL;
	for (char *p = strtok_r(text, " \n", &save); p && nwords < 9; p = strtok_r(NULL, " \n", &save))
		words[nwords++] = p;
	if (nwords != 9 && nwords != 3)
		return 0;
	uintptr_t sp = strtoul(words[nwords - 2], NULL, 0), pc = strtoul(words[nwords - 1], NULL, 0);
	long got = cfi_unwind_capture_regs(pc, sp, 0, frames, max, tracer_text_lo, tracer_text_hi);
	return got > 0 ? (size_t)got : 0;
}
