/* Stack capture with glibc's backtrace(), i.e. libgcc's DWARF unwinder:
 * after its one-time load it allocates nothing, takes no lock (it finds
 * unwind tables with _dl_find_object), keeps no descriptor and has no
 * thread-local storage, unlike libunwind 1.6 (a pipe on fds 3 and 4 for
 * memory validation, and TLS that a dlopen()ed copy allocates with malloc
 * on each thread's first use). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include "backtrace.h"
#include "thread_state.h"

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

void backtrace_warm_up(void)
{
	void *raw[4];
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	Dl_info info;
	if (dladdr((void *)&backtrace_warm_up, &info))
		dl_iterate_phdr(find_own_text, info.dli_fbase);
	backtrace(raw, 4);
	tracer_leave(ts);
	__atomic_store_n(&unwinder_ready, 1, __ATOMIC_RELEASE);
}

const char *backtrace_unavailable_reason(void)
{
	return unavailable_reason;
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
	if (ts->stack_limit && sp - ts->stack_limit < BACKTRACE_STACK_NEEDED) {
		unavailable_reason = "too little stack left on this thread to unwind it";
		return 0;
	}
	tracer_enter(ts);
	int n = backtrace((void **)frames, (int)max);
	tracer_leave(ts);
	/* The wrappers and the thread trampoline are the tracer's frames: the
	 * stack shown is the program's. */
	size_t out = 0;
	for (int i = 0; i < n; i++)
		if (frames[i] < tracer_text_lo || frames[i] >= tracer_text_hi)
			frames[out++] = frames[i];
	return out;
}
