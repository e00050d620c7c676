/* Stack capture with glibc's backtrace(), i.e. libgcc's DWARF unwinder:
 * after its one-time load it allocates nothing, takes no lock (it finds
 * unwind tables with _dl_find_object), keeps no descriptor and has no
 * thread-local storage, unlike libunwind 1.6 (a pipe on fds 3 and 4 for
 * memory validation, and TLS that a dlopen()ed copy allocates with malloc
 * on each thread's first use). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include "backtrace.h"
#include "thread_state.h"

typedef int (*backtrace_fn)(void **buffer, int size);
/* glibc's own backtrace(), looked up in libc itself: a program linked with
 * libunwind (gdnsd) has libunwind's `backtrace` first in the global scope,
 * and calling that would bring back libunwind's pipe and its TLS. */
static backtrace_fn glibc_backtrace;
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
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	if (libc) {
		glibc_backtrace = (backtrace_fn)dlsym(libc, "backtrace");
		dlclose(libc);
	}
	if (glibc_backtrace) {
		glibc_backtrace(raw, 4);   /* loads libgcc_s's unwinder, once */
		__atomic_store_n(&unwinder_ready, 1, __ATOMIC_RELEASE);
	}
	tracer_leave(ts);
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
	int n = glibc_backtrace((void **)frames, (int)max);
	tracer_leave(ts);
	/* The wrappers and the thread trampoline are the tracer's frames: the
	 * stack shown is the program's. */
	size_t out = 0;
	for (int i = 0; i < n; i++)
		if (frames[i] < tracer_text_lo || frames[i] >= tracer_text_hi)
			frames[out++] = frames[i];
	return out;
}
