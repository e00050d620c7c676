/*
 * spawn.c - starting short programs one after another, as a shell script, a
 * build or a test suite does: N times, posix_spawn() /bin/true and wait for
 * it.
 *
 * Timed phase "spawn": N times, posix_spawn("/bin/true") with this
 * process's environment, waitpid(), and a check that it exited 0.  One op is
 * one whole short process: the spawn, the loading of /bin/true and of its
 * libraries, its start and its exit.  Preloaded, LD_PRELOAD is in the
 * environment the child inherits: every /bin/true loads the tracer and runs
 * its constructor and its exit, which is what this measures.  posix_spawn()
 * (a vfork-like clone in glibc) keeps the parent's own fork cost out of it:
 * fork_wait.c measures that.
 *
 * Usage: spawn [N]   (N processes, default DEFAULT_SPAWNS)
 * Prints its phase line (bench.h) and exits 0; on error prints to stderr,
 * exits 1.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* 200 programs, as in the measurement that asked for this workload: about
 * a second plain on the project's 2-core virtual machine. */
#define DEFAULT_SPAWNS	200UL
#define PROGRAM		"/bin/true"

extern char **environ;

int main(int argc, char **argv)
{
	unsigned long n_spawns = DEFAULT_SPAWNS, i;
	char *child_argv[] = { (char *)PROGRAM, NULL };
	int status = 0;
	double t0, t1;

	if (argc > 2 || (argc == 2 && bench_parse_count(argv[1], &n_spawns) != 0)) {
		fprintf(stderr, "usage: %s [SPAWNS>0]\n", argv[0]);
		return 2;
	}

	t0 = bench_now();
	for (i = 0; i < n_spawns; i++) {
		pid_t pid, got;
		int rc, st;

		if ((rc = posix_spawn(&pid, PROGRAM, NULL, NULL, child_argv, environ)) != 0) {
			fprintf(stderr, "spawn: posix_spawn %s: %s\n", PROGRAM, strerror(rc));
			status = 1;
			break;
		}
		do
			got = waitpid(pid, &st, 0);
		while (got < 0 && errno == EINTR);
		if (got != pid) {
			perror("spawn: waitpid");
			status = 1;
			break;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "spawn: %s (run %lu) ended with wait status %#x, expected exit 0\n",
				PROGRAM, i, (unsigned)st);
			status = 1;
			break;
		}
	}
	t1 = bench_now();
	if (status == 0)
		bench_print_phase("spawn", n_spawns, t1 - t0);
	return status;
}
