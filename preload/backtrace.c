/* libunwind is dlopen()ed RTLD_LOCAL instead of linked: libunwind.so.8
 * exports backtrace and _Unwind_*, and linking it would rebind the host's
 * C++ exception handling to it. glibc's backtrace() is the fallback. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include "backtrace.h"
#include "thread_state.h"

typedef int (*unw_backtrace_fn)(void **buffer, int size);

static unw_backtrace_fn unw_backtrace_ptr;
static int unwinder_loaded;   /* 0 not tried, 1 tried */

static void load_unwinder(void)
{
	if (unwinder_loaded)
		return;
	unwinder_loaded = 1;
	void *lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (lib)
		unw_backtrace_ptr = (unw_backtrace_fn)dlsym(lib, "unw_backtrace");
}

/* Base address of the object a code address belongs to. */
static const void *module_base(const void *addr)
{
	Dl_info info;
	if (!dladdr(addr, &info))
		return NULL;
	return info.dli_fbase;
}

size_t backtrace_capture(uintptr_t *frames, size_t max)
{
	void *raw[160];
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	load_unwinder();
	int n = unw_backtrace_ptr ? unw_backtrace_ptr(raw, 160) : backtrace(raw, 160);
	const void *self = module_base((const void *)&backtrace_capture);
	/* Skip the frames of the tracer itself (the wrappers, the thread
	 * trampoline): the stack shown is the program's. */
	size_t out = 0;
	for (int i = 0; i < n && out < max; i++)
		if (module_base(raw[i]) != self)
			frames[out++] = (uintptr_t)raw[i];
	tracer_leave(ts);
	return out;
}

void backtrace_warm_up(void)
{
	void *raw[4];
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	load_unwinder();
	if (unw_backtrace_ptr)
		unw_backtrace_ptr(raw, 4);
	tracer_leave(ts);
}
