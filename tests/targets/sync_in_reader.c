/* synchronize_rcu() and rcu_barrier() inside a read-side section of their
 * own flavor wait for themselves: liburcu really hangs, so the report must
 * come before the call. QSBR's read side is visible only with DEBUG_RCU. */
#define DEBUG_RCU
#include "target.h"

static void noop_callback(struct rcu_head *head)
{
	(void)head;
}

SCENARIO synchronize_inside_reader(void)
{
	rcu_register_thread();
	rcu_read_lock();
	printf("site %d\n", __LINE__ + 1);
	synchronize_rcu();
	rcu_read_unlock();
	rcu_unregister_thread();
}

SCENARIO barrier_inside_reader(void)
{
	static struct rcu_head head;
	rcu_register_thread();
	call_rcu(&head, noop_callback);   /* a call_rcu worker exists: the barrier waits for it */
	rcu_read_lock();
	printf("site %d\n", __LINE__ + 1);
	rcu_barrier();
	rcu_read_unlock();
	rcu_unregister_thread();
}

/* Correct twin: wait for readers outside any read-side section. */
SCENARIO synchronize_outside_reader(void)
{
	static struct rcu_head head;
	rcu_register_thread();
	rcu_read_lock();
	rcu_read_unlock();
	call_rcu(&head, noop_callback);
	synchronize_rcu();
	rcu_barrier();
	rcu_unregister_thread();
	printf("done\n");
}

/* Correct twin: updaters need not register (except QSBR's, which are
 * readers when online: liburcu takes them offline while they wait). */
SCENARIO synchronize_unregistered_updater(void)
{
	synchronize_rcu();
	printf("done\n");
}

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "bug-synchronize", synchronize_inside_reader },
		{ "bug-barrier", barrier_inside_reader },
		{ "ok", synchronize_outside_reader },
		{ "ok-unregistered-updater", synchronize_unregistered_updater },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
