/* A program without liburcu (so the lock wrappers' own fast path answers
 * from the acquisition cache) that installs a SIGALRM handler taking
 * table_lock: table_lock taken often with SIGALRM blocked, alone and nested
 * under outer_lock, then once with it deliverable (nested), then the
 * handler runs. The deliverable use must have been recorded (the cache is
 * keyed by the signals an acquisition leaves deliverable), so the tracer
 * reports {SIGNAL-ON-W} -> {IN-SIGNAL-W}. With "ok" the deliverable use is
 * left out: nothing to report. Prints "site N" for the deliverable use. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t outer_lock = PTHREAD_MUTEX_INITIALIZER;

static void alarm_takes_table_lock(int signo)
{
	(void)signo;
	pthread_mutex_lock(&table_lock);
	pthread_mutex_unlock(&table_lock);
}

static void block(int how)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	if (pthread_sigmask(how, &set, NULL))
		abort();
}

static __attribute__((noinline)) void lock_and_unlock(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
}

int main(int argc, char **argv)
{
	int deliverable_use = argc < 2 || strcmp(argv[1], "ok") != 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = alarm_takes_table_lock;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	block(SIG_BLOCK);
	for (int i = 0; i < 100; i++) {
		lock_and_unlock(&table_lock);
		pthread_mutex_lock(&outer_lock);
		lock_and_unlock(&table_lock);
		pthread_mutex_unlock(&outer_lock);
	}
	block(SIG_UNBLOCK);
	lock_and_unlock(&outer_lock);   /* the new mask is known again after this one */
	if (deliverable_use) {
		pthread_mutex_lock(&outer_lock);
		pthread_mutex_lock(&table_lock); printf("site %d\n", __LINE__);
		pthread_mutex_unlock(&table_lock);
		pthread_mutex_unlock(&outer_lock);
	}
	block(SIG_BLOCK);
	lock_and_unlock(&table_lock);
	block(SIG_UNBLOCK);
	raise(SIGALRM);
	printf("done\n");
	return 0;
}
