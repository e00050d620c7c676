/* QSBR: a quiescent state or going offline inside a read-side section lets
 * a grace period end under the reader. Built for every flavor; the QSBR-only
 * scenarios do nothing elsewhere. DEBUG_RCU makes the read side visible. */
#define DEBUG_RCU
#include "target.h"

SCENARIO quiescent_inside_reader(void)
{
#ifdef TARGET_QSBR
	rcu_register_thread();
	rcu_read_lock();
	printf("site %d\n", __LINE__ + 1);
	rcu_quiescent_state();
	rcu_read_unlock();
	rcu_unregister_thread();
#endif
}

SCENARIO offline_inside_reader(void)
{
#ifdef TARGET_QSBR
	rcu_register_thread();
	rcu_read_lock();
	printf("site %d\n", __LINE__ + 1);
	rcu_thread_offline();
	rcu_thread_online();
	rcu_read_unlock();
	rcu_unregister_thread();
#endif
}

/* Correct twin: quiescent states and offline periods between readers, and
 * synchronize_rcu() from an online thread (liburcu takes it offline while
 * it waits, through its own calls to thread_offline/online). */
SCENARIO quiescent_between_readers(void)
{
#ifdef TARGET_QSBR
	rcu_register_thread();
	for (int i = 0; i < 100; i++) {
		rcu_read_lock();
		rcu_read_unlock();
		rcu_quiescent_state();
	}
	rcu_thread_offline();
	rcu_thread_online();
	synchronize_rcu();
	rcu_unregister_thread();
#endif
	printf("done\n");
}

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "bug-quiescent", quiescent_inside_reader },
		{ "bug-offline", offline_inside_reader },
		{ "ok", quiescent_between_readers },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
