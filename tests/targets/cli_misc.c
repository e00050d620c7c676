/* Small programs for the lockdep-rcu command's tests: what its environment
 * holds, exit statuses, a crash, a hang, processes that fork and exec so
 * that each one logs on its own, and threads that end holding locks. */
#include "target.h"
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

struct config {
	int value;
};

static struct config initial = { 42 };
static struct config *current_config = &initial;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static char self_path[4096];

/* Three distinct bugs, one function each, for the processes of "family". */
__attribute__((noinline)) static int read_unprotected(void)
{
	return rcu_dereference(current_config)->value;
}

__attribute__((noinline)) static int read_unprotected_in_child(void)
{
	return rcu_dereference(current_config)->value;
}

__attribute__((noinline)) static int read_unprotected_after_exec(void)
{
	return rcu_dereference(current_config)->value;
}

SCENARIO print_env(void)
{
	const char *preload = getenv("LD_PRELOAD"), *options = getenv("LOCKDEP_RCU_OPTIONS");
	printf("LD_PRELOAD=%s\n", preload ? preload : "(unset)");
	printf("LOCKDEP_RCU_OPTIONS=%s\n", options ? options : "(unset)");
}

SCENARIO clean(void)
{
	rcu_register_thread();
	rcu_read_lock();
	printf("value %d\n", rcu_dereference(current_config)->value);
	rcu_read_unlock();
	rcu_unregister_thread();
}

SCENARIO bug(void)
{
	printf("value %d\n", read_unprotected());
}

SCENARIO exit3(void)
{
	exit(3);
}

SCENARIO crash(void)
{
	struct rlimit none = { 0, 0 };
	setrlimit(RLIMIT_CORE, &none);   /* no core file in the test's directory */
	fflush(stdout);
	raise(SIGSEGV);
}

/* Deadlocks on its own mutex: the tracer reports it before blocking. */
SCENARIO hang(void)
{
	pthread_mutex_lock(&table_lock);
	pthread_mutex_lock(&table_lock);
}

static void wait_child(pid_t pid)
{
	int status;
	waitpid(pid, &status, 0);
}

/* Three processes, three bugs: this one, a forked child, and a forked
 * child that executes this program again. */
SCENARIO family(void)
{
	pid_t forked = fork();
	if (forked == 0) {
		printf("child %d\n", read_unprotected_in_child());
		exit(0);
	}
	wait_child(forked);
	pid_t executed = fork();
	if (executed == 0) {
		execl(self_path, self_path, "after-exec", (char *)NULL);
		_exit(127);
	}
	wait_child(executed);
	printf("parent %d\n", read_unprotected());
}

SCENARIO after_exec(void)
{
	printf("after exec %d\n", read_unprotected_after_exec());
}

/* One bug, two ways it shows: a worker gives up on its error path with
 * pthread_exit() while holding the cache lock it took in
 * refill_cache_or_give_up(). Called with the table lock held, the thread
 * ends holding two locks, otherwise one; the innermost lock, where the bug
 * is, is the same. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void refill_cache_or_give_up(void)
{
	pthread_mutex_lock(&cache_lock);
	pthread_exit(NULL);   /* forgot pthread_mutex_unlock(&cache_lock) */
}

static void *cache_worker(void *under_table_lock)
{
	if (under_table_lock)
		pthread_mutex_lock(&table_lock);
	refill_cache_or_give_up();
	return NULL;
}

/* Another bug: a worker that returns holding the table lock. */
static void *table_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&table_lock);
	return NULL;
}

static void join_worker(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	pthread_create(&t, NULL, fn, arg);
	pthread_join(t, NULL);
}

SCENARIO leak_cache(void)
{
	join_worker(cache_worker, NULL);
}

SCENARIO leak_cache_under_table(void)
{
	join_worker(cache_worker, (void *)1);
}

SCENARIO leak_table(void)
{
	join_worker(table_worker, NULL);
}

/* Only a child reports; the parent itself exits 0. */
SCENARIO child_only(void)
{
	pid_t forked = fork();
	if (forked == 0) {
		printf("child %d\n", read_unprotected_in_child());
		exit(0);
	}
	wait_child(forked);
	printf("parent clean\n");
}

int main(int argc, char **argv)
{
	ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	if (n > 0)
		self_path[n] = 0;
	static const struct scenario scenarios[] = {
		{ "env", print_env },
		{ "clean", clean },
		{ "bug", bug },
		{ "exit3", exit3 },
		{ "crash", crash },
		{ "hang", hang },
		{ "family", family },
		{ "after-exec", after_exec },
		{ "child-only", child_only },
		{ "leak-cache", leak_cache },
		{ "leak-cache-under-table", leak_cache_under_table },
		{ "leak-table", leak_table },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
