/* Resolution of the functions we wrap. A successful dlsym allocates
 * nothing, so the common path is safe from inside malloc-using early
 * code; the fallbacks (a failed dlsym allocates its error string) only run
 * for symbols that the global scope does not have. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "runtime/real_functions.h"
#include "runtime/thread_state.h"
#include "base/next_symbol.h"

static const void *own_base(void)
{
	static const void *base;
	if (!base) {
		Dl_info info;
		if (dladdr((void *)&own_base, &info))
			base = info.dli_fbase;
	}
	return base;
}

/* The loader's dlopen() and dlclose(), never the tracer's own wrappers
 * (intercept_deepbind.c, intercept_memory.c): a successful dlsym()
 * allocates nothing. */
void *loader_dlopen(const char *path, int flags)
{
	static void *(*fn)(const char *, int);
	if (!fn)
		fn = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	return fn ? fn(path, flags) : NULL;
}

int loader_dlclose(void *handle)
{
	static int (*fn)(void *);
	if (!fn)
		fn = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	return fn ? fn(handle) : -1;
}

/* A definition that is not one of our own wrappers. */
static int is_foreign(void *fn)
{
	Dl_info info;
	return fn && (!dladdr(fn, &info) || info.dli_fbase != own_base());
}

/* dlsym in the local scope of the loaded object at `path`. */
static void *lookup_in_object(const char *path, const char *name)
{
	void *handle = loader_dlopen(path && path[0] ? path : NULL, RTLD_LAZY | RTLD_NOLOAD);
	if (!handle)
		return NULL;
	void *fn = dlsym(handle, name);
	loader_dlclose(handle);
	return is_foreign(fn) ? fn : NULL;
}

struct object_search {
	const char *name;
	void *found;
};

static int search_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct object_search *s = arg;
	if ((const void *)info->dlpi_addr == own_base() || !info->dlpi_name[0])
		return 0;
	s->found = lookup_in_object(info->dlpi_name, s->name);
	return s->found != NULL;
}

static int missing_stub(void)
{
	return 0;
}

void *resolve_real(const char *name, const void *caller)
{
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	void *fn = dlsym(RTLD_NEXT, name);
	if (!fn && caller) {
		/* The caller's own scope: a plugin that links liburcu itself. */
		Dl_info info;
		struct link_map *map = NULL;
		if (dladdr1(caller, &info, (void **)&map, RTLD_DL_LINKMAP) && map)
			fn = lookup_in_object(map->l_name, name);
	}
	if (!fn) {
		struct object_search s = { name, NULL };
		dl_iterate_phdr(search_object, &s);
		fn = s.found;
	}
	dlerror();   /* leave no error of ours for the program's dlerror() */
	tracer_leave(ts);
	if (!fn) {
		char line[256];
		int n = snprintf(line, sizeof(line),
				 "lockdep-rcu: no loaded object defines %s; calls to it do nothing\n", name);
		(void)!write(2, line, n > 0 ? (size_t)n : 0);
		fn = (void *)&missing_stub;
	}
	return fn;
}

void *resolve_real_in_loader(const char *name)
{
	void *fn = next_symbol(name);
	if (!fn) {
		char line[256];
		int n = snprintf(line, sizeof(line),
				 "lockdep-rcu: no loaded object after the tracer defines %s; calls to it do nothing\n",
				 name);
		(void)!write(2, line, n > 0 ? (size_t)n : 0);
		fn = (void *)&missing_stub;
	}
	return fn;
}

void *resolve_real_version(const char *name, const char *version)
{
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	void *fn = dlvsym(RTLD_NEXT, name, version);
	tracer_leave(ts);
	return fn ? fn : resolve_real(name, NULL);
}
