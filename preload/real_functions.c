/* dlsym(RTLD_NEXT) resolution of the functions we wrap. A successful dlsym
 * allocates nothing, so this is safe from inside malloc-using early code. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "real_functions.h"
#include "thread_state.h"

static void die_missing(const char *name)
{
	static const char prefix[] = "lockdep-rcu: cannot find the real ";
	(void)!write(2, prefix, sizeof(prefix) - 1);
	(void)!write(2, name, strlen(name));
	(void)!write(2, "; aborting\n", 11);
	abort();
}

void *resolve_real(const char *name)
{
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	void *fn = dlsym(RTLD_NEXT, name);
	tracer_leave(ts);
	if (!fn)
		die_missing(name);
	return fn;
}

void *resolve_real_version(const char *name, const char *version)
{
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	void *fn = dlvsym(RTLD_NEXT, name, version);
	tracer_leave(ts);
	if (!fn)
		die_missing(name);
	return fn;
}
