/* A plugin that links liburcu itself: the host dlopen()s it RTLD_LOCAL, so
 * liburcu is in the plugin's own scope, not in the global one. */
#include <urcu.h>

static int *shared_value;

int plugin_work(void)
{
	static int value = 42;
	rcu_register_thread();
	rcu_assign_pointer(shared_value, &value);
	rcu_read_lock();
	int v = *rcu_dereference(shared_value);
	rcu_read_unlock();
	synchronize_rcu();
	rcu_unregister_thread();
	return v;
}
