/* liburcu's documented rules for deferred reclamation (rcu-api.md,
 * urcu/defer.h), each broken beside its correct twin, through the
 * exported API of every flavor. */
#include "target.h"
#include <unistd.h>

#define SITE(stmt) do { printf("site %d\n", __LINE__); fflush(stdout); stmt; } while (0)


struct item {
	int value;
	struct rcu_head rcu;
};

static void free_item(struct rcu_head *head)
{
	free(caa_container_of(head, struct item, rcu));
}

static void free_plain(void *p)
{
	free(p);
}

/* ---- call_rcu(): from registered (QSBR: online) threads ------------------- */

SCENARIO bug_call_rcu_unregistered(void)
{
	struct item *it = calloc(1, sizeof(*it));
	SITE(call_rcu(&it->rcu, free_item));
	rcu_barrier();
	printf("done\n");
}

SCENARIO bug_call_rcu_offline(void)
{
#if defined(TARGET_QSBR)
	struct item *it = calloc(1, sizeof(*it));
	rcu_register_thread();
	rcu_thread_offline();
	SITE(call_rcu(&it->rcu, free_item));
	rcu_thread_online();
	rcu_unregister_thread();
	rcu_barrier();
#endif
	printf("done\n");
}

SCENARIO ok_call_rcu(void)
{
	REGISTER();
	for (int i = 0; i < 100; i++) {
		struct item *it = calloc(1, sizeof(*it));
		call_rcu(&it->rcu, free_item);
	}
	UNREGISTER();
	rcu_barrier();
	printf("done\n");
}

/* ---- defer_rcu(): registered with rcu_defer_register_thread(), never in a
 * read side ------------------------------------------------------------------- */

SCENARIO bug_defer_in_reader(void)
{
	REGISTER();
	rcu_defer_register_thread();
	rcu_read_lock();
	SITE(defer_rcu(free_plain, malloc(16)));
	rcu_read_unlock();
	rcu_defer_unregister_thread();
	UNREGISTER();
	printf("done\n");
}

SCENARIO bug_defer_unregistered(void)
{
	REGISTER();
	SITE(defer_rcu(free_plain, malloc(16)));   /* may crash in liburcu afterwards */
	UNREGISTER();
	printf("done\n");
}

SCENARIO ok_defer(void)
{
	REGISTER();
	rcu_defer_register_thread();
	for (int i = 0; i < 100; i++)
		defer_rcu(free_plain, malloc(16));
	rcu_defer_barrier();
	rcu_defer_unregister_thread();
	UNREGISTER();
	printf("done\n");
}

/* ---- rcu_barrier(): never from a call_rcu() worker (a callback) ---------- */

static int barrier_site;

static void callback_calls_barrier(struct rcu_head *head)
{
	free(caa_container_of(head, struct item, rcu));
	barrier_site = __LINE__ + 1;
	rcu_barrier();   /* waits for this very callback */
}

SCENARIO bug_barrier_in_callback(void)
{
	REGISTER();
	struct item *it = calloc(1, sizeof(*it));
	call_rcu(&it->rcu, callback_calls_barrier);
	UNREGISTER();
	for (int i = 0; i < 200 && !barrier_site; i++) {
		struct timespec t = { 0, 10 * 1000000L };
		nanosleep(&t, NULL);
	}
	printf("site %d\n", barrier_site);
	fflush(stdout);
	for (;;)
		pause();   /* the worker is stuck; the test kills us */
}

/* ---- the call_rcu data -------------------------------------------------------- */

SCENARIO bug_get_cpu_call_rcu_data_outside_reader(void)
{
	REGISTER();
	SITE(get_cpu_call_rcu_data(0));
	UNREGISTER();
	printf("done\n");
}

SCENARIO ok_get_cpu_call_rcu_data(void)
{
	REGISTER();
	rcu_read_lock();
	get_cpu_call_rcu_data(0);
	rcu_read_unlock();
	UNREGISTER();
	printf("done\n");
}

/* liburcu's own per-CPU setup, from a registered thread outside any read
 * side, as rcutorture's per-CPU runs do: create_all_cpu_call_rcu_data()
 * reads the per-CPU table itself, under its own call_rcu_mutex (the
 * update side); a call_rcu() then goes to a CPU's worker; the teardown
 * waits for a grace period. All liburcu's business, nothing to report. */
static void count_callback(struct rcu_head *head)
{
	(void)head;
}

SCENARIO ok_create_all_cpu_call_rcu_data(void)
{
	static struct rcu_head head;
	REGISTER();
	if (create_all_cpu_call_rcu_data(0)) {
		perror("create_all_cpu_call_rcu_data");
		exit(3);
	}
	rcu_read_lock();
	call_rcu(&head, count_callback);
	rcu_read_unlock();
	rcu_barrier();
	free_all_cpu_call_rcu_data();
	UNREGISTER();
	printf("done\n");
}

SCENARIO bug_get_call_rcu_data_unregistered(void)
{
	SITE(get_call_rcu_data());
	printf("done\n");
}

SCENARIO ok_get_call_rcu_data(void)
{
	REGISTER();
	get_call_rcu_data();
	UNREGISTER();
	printf("done\n");
}

static const struct scenario scenarios[] = {
	{ "bug-call-rcu-unregistered", bug_call_rcu_unregistered },
	{ "bug-call-rcu-offline", bug_call_rcu_offline },
	{ "ok-call-rcu", ok_call_rcu },
	{ "bug-defer-in-reader", bug_defer_in_reader },
	{ "bug-defer-unregistered", bug_defer_unregistered },
	{ "ok-defer", ok_defer },
	{ "bug-barrier-in-callback", bug_barrier_in_callback },
	{ "bug-get-cpu-call-rcu-data-outside-reader", bug_get_cpu_call_rcu_data_outside_reader },
	{ "ok-get-cpu-call-rcu-data", ok_get_cpu_call_rcu_data },
	{ "ok-create-all-cpu-call-rcu-data", ok_create_all_cpu_call_rcu_data },
	{ "bug-get-call-rcu-data-unregistered", bug_get_call_rcu_data_unregistered },
	{ "ok-get-call-rcu-data", ok_get_call_rcu_data },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	return run_scenario(argc, argv, scenarios);
}
