/* liburcu's libraries are recognized by file name (liburcu*.so*); a
 * report's site is moved out of them to the program's call. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "rcu/urcu_calls.h"
#include "unwind/backtrace.h"

int is_urcu_code(uintptr_t addr)
{
	Dl_info info;
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	int found = dladdr((void *)addr, &info) && info.dli_fname;
	tracer_leave(ts);
	if (!found)
		return 0;
	const char *base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	return strncmp(base, "liburcu", 7) == 0;
}

uintptr_t urcu_program_site(uintptr_t ip)
{
	if (!is_urcu_code(ip))
		return ip;
	uintptr_t frames[32];
	size_t n = backtrace_capture(frames, 32);
	for (size_t i = 0; i < n; i++)
		if (!is_urcu_code(frames[i]))
			return frames[i];
	return ip;
}
