/* A program that does not link liburcu but dlopen()s it late (a plugin
 * host): the preload finds the real functions lazily, so its wrappers work
 * for libraries loaded after it. */
#include "target.h"
#include <dlfcn.h>

static void (*register_thread)(void);
static void (*read_lock)(void);
static void (*read_unlock)(void);
static void *(*dereference)(void *);

static int value = 7;

SCENARIO dereference_outside_reader(void)
{
	register_thread();
	printf("site %d\n", __LINE__ + 1);
	int *p = dereference(&value);
	printf("value %d\n", *p);
}

SCENARIO dereference_in_reader(void)
{
	register_thread();
	read_lock();
	int *p = dereference(&value);
	read_unlock();
	printf("value %d\n", *p);
}

int main(int argc, char **argv)
{
	if (!dlopen("liburcu-memb.so.8", RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 3;
	}
	/* RTLD_DEFAULT: what the program's own symbol lookups would bind to. */
	register_thread = (void (*)(void))dlsym(RTLD_DEFAULT, "urcu_memb_register_thread");
	read_lock = (void (*)(void))dlsym(RTLD_DEFAULT, "urcu_memb_read_lock");
	read_unlock = (void (*)(void))dlsym(RTLD_DEFAULT, "urcu_memb_read_unlock");
	dereference = (void *(*)(void *))dlsym(RTLD_DEFAULT, "rcu_dereference_sym");
	if (!register_thread || !read_lock || !read_unlock || !dereference)
		return 3;
	static const struct scenario scenarios[] = {
		{ "bug", dereference_outside_reader },
		{ "ok", dereference_in_reader },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
