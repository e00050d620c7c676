/* A process stopped (SIGSTOP: Ctrl-Z, a debugger) while a grace period
 * waits for one of its readers: the stopped time is nobody's wait. A
 * child of the process stops it, keeps it stopped for `hold` seconds
 * (argv[2]) and continues it; or, the twin, only sleeps as long, while
 * the reader stays in its read side for real.
 *
 * The reader is the main thread; the updater (synchronize_rcu()) a thread
 * that announces it is about to wait. */
#include "target.h"
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int updater_ready[2];

static void *updater(void *arg)
{
	(void)arg;
	rcu_register_thread();
#ifdef TARGET_QSBR
	rcu_thread_offline();
#endif
	if (write(updater_ready[1], "x", 1) != 1)
		abort();
	synchronize_rcu();
#ifdef TARGET_QSBR
	rcu_thread_online();
#endif
	rcu_unregister_thread();
	return NULL;
}

static void sleep_fully(double seconds)
{
	struct timespec left = { (time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9) };
	while (nanosleep(&left, &left))
		;
}

/* stop: the child stops this process for `hold` seconds; else it sleeps
 * that long while this process waits for it, in its read side. */
static void reader_while_child_sleeps(int stop, double hold)
{
	if (pipe(updater_ready))
		abort();
	rcu_register_thread();
	rcu_read_lock();
	pthread_t t;
	pthread_create(&t, NULL, updater, NULL);
	char c;
	if (read(updater_ready[0], &c, 1) != 1)
		abort();
	pid_t parent = getpid(), child = fork();
	if (child == 0) {
		if (stop)
			kill(parent, SIGSTOP);
		sleep_fully(hold);
		if (stop)
			kill(parent, SIGCONT);
		_exit(0);
	}
	while (waitpid(child, NULL, 0) < 0)
		;
	rcu_read_unlock();
#ifdef TARGET_QSBR
	/* Offline while it blocks in the join: the updater, stopped with the
	 * process, may start its grace period only now. */
	rcu_thread_offline();
#endif
	pthread_join(t, NULL);
#ifdef TARGET_QSBR
	rcu_thread_online();
#endif
	rcu_unregister_thread();
	printf("done\n");
}

static double hold = 4;

SCENARIO stopped_in_read_side(void) { reader_while_child_sleeps(1, hold); }
SCENARIO held_in_read_side(void) { reader_while_child_sleeps(0, hold); }

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "stopped-in-read-side", stopped_in_read_side },
		{ "held-in-read-side", held_in_read_side },
		{ NULL, NULL },
	};
	if (argc > 2)
		hold = atof(argv[2]);
	return run_scenario(argc, argv, scenarios);
}
