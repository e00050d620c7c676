/* Read-side sections in threads not registered with their flavor: grace
 * periods do not wait for them. QSBR's read side needs DEBUG_RCU to be seen. */
#define DEBUG_RCU
#include "target.h"

static int shared_value = 42;
static int *shared = &shared_value;

static void *never_registers(void *arg)
{
	(void)arg;
	rcu_read_lock();
	printf("site %d\n", __LINE__ - 1);
	int v = *rcu_dereference(shared);
	rcu_read_unlock();
	return (void *)(long)v;
}

/* Registers only after a first read, and reads again after unregistering:
 * reported only with strict_registration=1. */
static void *registers_late(void *arg)
{
	(void)arg;
	rcu_read_lock();
	printf("site %d\n", __LINE__ - 1);
	int v = *rcu_dereference(shared);
	rcu_read_unlock();
	rcu_register_thread();
	rcu_read_lock();
	v += *rcu_dereference(shared);
	rcu_read_unlock();
	rcu_unregister_thread();
	rcu_read_lock();
	v += *rcu_dereference(shared);
	rcu_read_unlock();
	return (void *)(long)v;
}

static void *registered_reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	rcu_read_lock();
	int v = *rcu_dereference(shared);
	rcu_read_unlock();
	rcu_unregister_thread();
	return (void *)(long)v;
}

#ifdef TARGET_QSBR
/* Registered but offline: not a reader either. */
static void *offline_reader(void *arg)
{
	(void)arg;
	rcu_register_thread();
	rcu_thread_offline();
	rcu_read_lock();
	printf("site %d\n", __LINE__ - 1);
	int v = *rcu_dereference(shared);
	rcu_read_unlock();
	rcu_thread_online();
	rcu_unregister_thread();
	return (void *)(long)v;
}
#endif

SCENARIO bug(void) { in_thread(never_registers); printf("done\n"); }
SCENARIO late(void) { in_thread(registers_late); printf("done\n"); }
SCENARIO ok(void) { in_thread(registered_reader); printf("done\n"); }

SCENARIO bug_offline(void)
{
#ifdef TARGET_QSBR
	in_thread(offline_reader);
#endif
	printf("done\n");
}

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "bug", bug },
		{ "late", late },
		{ "ok", ok },
		{ "bug-offline", bug_offline },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
