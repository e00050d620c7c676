/* rcu_read_unlock() at nesting 0 is the kernel's bad unlock balance. */
#define DEBUG_RCU
#include "target.h"

SCENARIO unlock_without_lock(void)
{
	rcu_register_thread();
	rcu_read_lock();
	rcu_read_unlock();
	printf("site %d\n", __LINE__ + 1);
	rcu_read_unlock();
	rcu_unregister_thread();
	printf("done\n");
}

/* Correct twin: nested sections, balanced. */
SCENARIO nested_balanced(void)
{
	rcu_register_thread();
	rcu_read_lock();
	rcu_read_lock();
	rcu_read_unlock();
	rcu_read_unlock();
	rcu_unregister_thread();
	printf("done\n");
}

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "bug", unlock_without_lock },
		{ "ok", nested_balanced },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
