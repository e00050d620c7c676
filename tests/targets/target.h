/* Shared by the target programs of the test suite: picks the liburcu flavor
 * the Makefile builds this copy for, and gives each program a tiny
 * "bug" / "ok" dispatcher so a buggy program and its correct twin sit side
 * by side in one file. */
#ifndef TARGET_H
#define TARGET_H

#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(TARGET_QSBR)
#include <urcu-qsbr.h>
#define TARGET_FLAVOR "qsbr"
#elif defined(TARGET_BP)
#include <urcu-bp.h>
#define TARGET_FLAVOR "bp"
#else
#include <urcu.h>
#if defined(RCU_MB)
#define TARGET_FLAVOR "mb"
#elif defined(RCU_SIGNAL)
#define TARGET_FLAVOR "signal"
#else
#define TARGET_FLAVOR "memb"
#endif
#endif

/* Keep each scenario function a real frame with its own name in backtraces. */
#define SCENARIO __attribute__((noinline)) static void

struct scenario {
	const char *name;
	void (*run)(void);
};

/* Runs the scenario named by argv[1]; exit status 2 when unknown. */
static inline int run_scenario(int argc, char **argv, const struct scenario *s)
{
	/* Line-buffered: a scenario that deadlocks on purpose is killed, and
	 * what it printed before must reach the test. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: %s SCENARIO\n", argv[0]);
		return 2;
	}
	for (; s->name; s++)
		if (!strcmp(s->name, argv[1])) {
			s->run();
			return 0;
		}
	fprintf(stderr, "%s: unknown scenario %s\n", argv[0], argv[1]);
	return 2;
}

/* Runs fn in a new thread and waits for it. */
static inline void in_thread(void *(*fn)(void *))
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, NULL) || pthread_join(t, NULL)) {
		perror("pthread");
		exit(3);
	}
}

/* One byte through a pipe, sent and awaited: the threads of a scenario take
 * their turns in a fixed order, whatever the scheduler does. */
#include <unistd.h>
static inline void say(int fd[2])
{
	char c = 1;
	if (write(fd[1], &c, 1) != 1)
		exit(4);
}

static inline void hear(int fd[2])
{
	char c;
	if (read(fd[0], &c, 1) != 1)
		exit(4);
}

/* Registering a thread as the flavor needs it: bp registers by itself.
 * (Last in this file: golden reports name lines above.) */
#if defined(TARGET_BP)
#define REGISTER() do { } while (0)
#define UNREGISTER() do { } while (0)
#else
#define REGISTER() rcu_register_thread()
#define UNREGISTER() rcu_unregister_thread()
#endif

#endif
