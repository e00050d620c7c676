/* lockdep-rcu graph: merge the lock dependency graphs the tracer wrote
 * (graph_path=FILE) and draw them with Graphviz. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"
#include "dot_graph.h"
#include "launch.h"
#include "text_log.h"

extern char **environ;

/* A graph file larger than this is not one the tracer wrote. */
#define MAX_GRAPH_BYTES (64u << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lockdep-rcu graph [-o OUT.svg | -o OUT.dot] FILE...\n"
		"\n"
		"Merges the lock dependency graphs the tracer writes at exit\n"
		"(LOCKDEP_RCU_OPTIONS=graph_path=FILE, %%p for the pid) of any number of\n"
		"processes and runs: the union of their lock classes and of their\n"
		"dependencies, each dependency with the first site seen, the dependencies\n"
		"of a reported cycle in red when any input has them so.\n"
		"\n"
		"  -o OUT.svg   draw it with Graphviz (dot -Tsvg); without dot, the DOT is\n"
		"               written to OUT.dot instead and that is said\n"
		"  -o OUT.dot   write the merged graph in DOT\n"
		"  (no -o)      write the merged graph in DOT on stdout\n"
		"\n"
		"Only the tracer's own DOT is read: anything else is an error naming its\n"
		"file and line.\n"
		"Exit status: 0 the graph written as asked, 1 no SVG (dot missing or failed:\n"
		"the DOT was written instead), 2 usage error or an input that cannot be read\n"
		"or is not a lockdep-rcu graph.\n");
}

/* dot -Tsvg -o out, the graph on its standard input. 0, or -1 with *why. */
static int render_svg(const char *dot, const char *out, const char *text, char **why)
{
	int in[2];
	if (pipe2(in, O_CLOEXEC)) {
		*why = xasprintf("cannot run dot: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, in[0], 0);
	char *argv[] = { (char *)dot, "-Tsvg", "-o", (char *)out, NULL };
	pid_t pid;
	int err = posix_spawn(&pid, dot, &actions, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	close(in[0]);
	if (err) {
		close(in[1]);
		*why = xasprintf("cannot run %s: %s", dot, strerror(err));
		return -1;
	}
	/* dot reads all of its input before it writes: no deadlock here */
	size_t len = strlen(text);
	for (size_t done = 0; done < len;) {
		ssize_t n = write(in[1], text + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;   /* dot died: its status says why */
		done += (size_t)n;
	}
	close(in[1]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	*why = WIFEXITED(status) ? xasprintf("dot failed (exit status %d)", WEXITSTATUS(status)) :
				   xasprintf("dot was killed by signal %d", WTERMSIG(status));
	return -1;
}

/* Writes the DOT where an SVG could not be made: OUT.svg -> OUT.dot. */
static int fall_back_to_dot(const char *out, const char *text, const char *why)
{
	char *dot_path = xasprintf("%.*s.dot", (int)(strlen(out) - 4), out);
	int status = EXIT_FOUND;
	if (write_file(dot_path, text)) {
		fprintf(stderr, "lockdep-rcu graph: %s; and %s cannot be written: %s\n", why, dot_path, strerror(errno));
		status = EXIT_USAGE;
	} else {
		fprintf(stderr, "lockdep-rcu graph: %s; wrote DOT to %s\n", why, dot_path);
	}
	free(dot_path);
	return status;
}

int cmd_graph(int argc, char **argv)
{
	const char *out = NULL;
	const char **files = xcalloc((size_t)argc + 1, sizeof(*files));
	size_t nfiles = 0;
	int status = EXIT_USAGE;
	struct dot_graph g = { 0 };
	for (int i = 0; i < argc; i++) {
		int r;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			status = EXIT_CLEAN;
			goto done;
		} else if ((r = option_value(argc, argv, &i, "-o", &out)) != 0 ||
			   (r = option_value(argc, argv, &i, "--output", &out)) != 0) {
			if (r < 0) {
				fprintf(stderr, "lockdep-rcu graph: %s needs a value\n", argv[i]);
				goto done;
			}
		} else if (!strcmp(argv[i], "--")) {
			while (++i < argc)
				files[nfiles++] = argv[i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "lockdep-rcu graph: unknown option %s; try 'lockdep-rcu graph --help'\n", argv[i]);
			goto done;
		} else {
			files[nfiles++] = argv[i];
		}
	}
	if (!nfiles) {
		fprintf(stderr, "lockdep-rcu graph: no graph file given\n");
		usage(stderr);
		goto done;
	}
	if (out && !ends_with(out, ".svg") && !ends_with(out, ".dot")) {
		fprintf(stderr, "lockdep-rcu graph: -o %s: the output must end in .svg or .dot\n", out);
		goto done;
	}
	for (size_t i = 0; i < nfiles; i++) {
		const char *why;
		int fd = log_file_open(files[i], 1, &why);   /* never a FIFO or a device */
		if (fd < 0) {
			fprintf(stderr, "lockdep-rcu graph: %s: cannot read: %s\n", files[i], why);
			goto done;
		}
		close(fd);
		char *text, *error;
		size_t len;
		int truncated;
		if (read_file(files[i], MAX_GRAPH_BYTES, &text, &len, &truncated)) {
			fprintf(stderr, "lockdep-rcu graph: %s: cannot read: %s\n", files[i], strerror(errno));
			goto done;
		}
		if (truncated || memchr(text, 0, len)) {
			fprintf(stderr, "lockdep-rcu graph: %s: %s, not a lockdep-rcu graph\n", files[i],
				truncated ? "larger than 64 MiB" : "binary data");
			free(text);
			goto done;
		}
		int failed = dot_graph_merge(&g, files[i], text, &error);
		free(text);
		if (failed) {
			fprintf(stderr, "lockdep-rcu graph: %s\n", error);
			free(error);
			goto done;
		}
	}
	struct strbuf dot = { 0 };
	dot_graph_write(&g, &dot);
	if (!out) {
		fwrite(dot.s, 1, dot.len, stdout);
		status = fflush(stdout) ? EXIT_USAGE : EXIT_CLEAN;
	} else if (ends_with(out, ".dot")) {
		status = EXIT_CLEAN;
		if (write_file(out, dot.s)) {
			fprintf(stderr, "lockdep-rcu graph: %s: cannot write: %s\n", out, strerror(errno));
			status = EXIT_USAGE;
		}
	} else {
		struct strbuf err = { 0 };
		int code;
		char *dot_program = resolve_program("dot", &err, &code), *why = NULL;   /* as a shell finds it */
		sb_free(&err);
		if (!dot_program)
			status = fall_back_to_dot(out, dot.s, "Graphviz's dot not found (apt-get install graphviz)");
		else if (render_svg(dot_program, out, dot.s, &why))
			status = fall_back_to_dot(out, dot.s, why);
		else
			status = EXIT_CLEAN;
		free(why);
		free(dot_program);
	}
	sb_free(&dot);
done:
	dot_graph_free(&g);
	free(files);
	return status;
}
