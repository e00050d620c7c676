/*
 * fork_wait.c - fork() from a process shaped like a small server: a few
 * worker threads, each with its own lock, waiting for work, and a few MiB of
 * heap written, as a pre-forking or CGI-spawning server forks its children.
 *
 * Before the timed phase the main thread allocates HEAP_MIB MiB in 64 KiB
 * blocks and writes every page (fork must copy the page tables of all of
 * it), and starts WORKERS threads that each take and release their own mutex
 * now and then and otherwise sleep on a condition variable, as idle workers
 * do.
 *
 * Timed phase "fork": N times, fork(); the child calls _exit(0) at once; the
 * parent waits for it with waitpid() and checks that it exited 0.  One op is
 * one fork + _exit + waitpid: the parent's fork (its atfork handlers, the
 * copy of its page tables), the child's start in the forked image and its
 * exit, and the wait.  Nothing is exec'd (spawn.c measures that).
 *
 * Usage: fork_wait [N]   (N forks, default DEFAULT_FORKS)
 * Prints its phase line (bench.h) and exits 0; on error prints to stderr,
 * exits 1.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* About half a second plain on the project's 2-core virtual machine, where
 * a page fault costs 15-20 us and a fork + wait about 2.5 ms. */
#define DEFAULT_FORKS	200UL
#define WORKERS		3
#define HEAP_MIB	8
#define BLOCK_SIZE	(64 * 1024)

struct worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	unsigned long served;		/* under lock */
	int stop;			/* under lock */
};

static struct worker workers[WORKERS];

/* An idle worker: wakes every few milliseconds (a timed wait, as a server's
 * housekeeping does), counts, and goes back to sleep, until told to stop. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 5 * 1000 * 1000;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&w->wake, &w->lock, &until);
		w->served++;
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n_forks = DEFAULT_FORKS, i;
	size_t n_blocks = (size_t)HEAP_MIB * 1024 * 1024 / BLOCK_SIZE;
	char **heap;
	int rc, status = 0;
	double t0, t1;

	if (argc > 2 || (argc == 2 && bench_parse_count(argv[1], &n_forks) != 0)) {
		fprintf(stderr, "usage: %s [FORKS>0]\n", argv[0]);
		return 2;
	}

	heap = calloc(n_blocks, sizeof(*heap));
	if (!heap) {
		perror("fork_wait: calloc");
		return 1;
	}
	for (size_t b = 0; b < n_blocks; b++) {
		heap[b] = malloc(BLOCK_SIZE);
		if (!heap[b]) {
			perror("fork_wait: malloc");
			return 1;
		}
		memset(heap[b], (int)(b & 0xff), BLOCK_SIZE);
	}
	for (int k = 0; k < WORKERS; k++) {
		if ((rc = pthread_mutex_init(&workers[k].lock, NULL)) != 0 ||
		    (rc = pthread_cond_init(&workers[k].wake, NULL)) != 0 ||
		    (rc = pthread_create(&workers[k].thread, NULL, worker_main, &workers[k])) != 0) {
			fprintf(stderr, "fork_wait: worker %d: %s\n", k, strerror(rc));
			return 1;
		}
	}

	t0 = bench_now();
	for (i = 0; i < n_forks; i++) {
		pid_t pid = fork(), got;
		int st;

		if (pid < 0) {
			perror("fork_wait: fork");
			status = 1;
			break;
		}
		if (pid == 0)
			_exit(0);
		do
			got = waitpid(pid, &st, 0);
		while (got < 0 && errno == EINTR);
		if (got != pid) {
			perror("fork_wait: waitpid");
			status = 1;
			break;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "fork_wait: child %lu ended with wait status %#x, expected exit 0\n", i,
				(unsigned)st);
			status = 1;
			break;
		}
	}
	t1 = bench_now();

	for (int k = 0; k < WORKERS; k++) {
		pthread_mutex_lock(&workers[k].lock);
		workers[k].stop = 1;
		pthread_cond_signal(&workers[k].wake);
		pthread_mutex_unlock(&workers[k].lock);
		if ((rc = pthread_join(workers[k].thread, NULL)) != 0) {
			fprintf(stderr, "fork_wait: pthread_join: %s\n", strerror(rc));
			status = 1;
		}
		pthread_cond_destroy(&workers[k].wake);
		pthread_mutex_destroy(&workers[k].lock);
	}
	/* The heap is still what was written: fork copied it, nobody wrote it. */
	for (size_t b = 0; b < n_blocks; b++) {
		if (heap[b][BLOCK_SIZE - 1] != (char)(b & 0xff)) {
			fprintf(stderr, "fork_wait: heap block %zu changed\n", b);
			status = 1;
		}
		free(heap[b]);
	}
	free(heap);
	if (status == 0)
		bench_print_phase("fork", n_forks, t1 - t0);
	return status;
}
