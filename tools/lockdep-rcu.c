/* lockdep-rcu: the command line. `run` preloads the tracer into a program;
 * `report` and `stress` are the subject of a later change (issue 4). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LOCKDEP_RCU_LIBDIR
#define LOCKDEP_RCU_LIBDIR "/usr/local/lib/lockdep-rcu"
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lockdep-rcu run [-o DIR] [--option KEY=VALUE]... -- PROGRAM [ARGS...]\n"
		"\n"
		"Runs PROGRAM with liblockdep-rcu.so preloaded.\n"
		"  -o DIR               one log per process in DIR (log_path=DIR/lockdep-rcu.%%p.log)\n"
		"  --option KEY=VALUE   a tracer option (see LOCKDEP_RCU_OPTIONS=help=1)\n");
}

/* The preload next to this command: build/ in the source tree, or
 * PREFIX/lib/lockdep-rcu when installed. */
static int find_preload(char *out, size_t size)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			const char *candidates[] = { "%s/liblockdep-rcu.so", "%s/../lib/lockdep-rcu/liblockdep-rcu.so" };
			for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
				int len = snprintf(out, size, candidates[i], self);
				if (len > 0 && (size_t)len < size && access(out, R_OK) == 0)
					return 0;
			}
		}
	}
	snprintf(out, size, "%s/liblockdep-rcu.so", LOCKDEP_RCU_LIBDIR);
	return access(out, R_OK);
}

static int append_option(char **options, const char *kv)
{
	size_t len = (*options ? strlen(*options) + 1 : 0) + strlen(kv) + 1;
	char *joined = malloc(len);
	if (!joined)
		return -1;
	snprintf(joined, len, "%s%s%s", *options ? *options : "", *options ? ":" : "", kv);
	free(*options);
	*options = joined;
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	char *options = NULL;
	const char *env = getenv("LOCKDEP_RCU_OPTIONS");
	if (env && *env && append_option(&options, env))
		return 2;
	int i = 0;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			char kv[PATH_MAX + 32];
			snprintf(kv, sizeof(kv), "log_path=%s/lockdep-rcu.%%p.log", argv[++i]);
			if (append_option(&options, kv))
				return 2;
		} else if (!strcmp(argv[i], "--option") && i + 1 < argc) {
			if (append_option(&options, argv[++i]))
				return 2;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "lockdep-rcu run: unknown option %s\n", argv[i]);
			usage(stderr);
			return 2;
		} else {
			break;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	char preload[PATH_MAX];
	if (find_preload(preload, sizeof(preload))) {
		fprintf(stderr, "lockdep-rcu run: cannot find liblockdep-rcu.so (looked next to this command and in %s)\n",
			LOCKDEP_RCU_LIBDIR);
		return 2;
	}
	const char *old = getenv("LD_PRELOAD");
	char *joined = NULL;
	if (asprintf(&joined, "%s%s%s", preload, old && *old ? ":" : "", old ? old : "") < 0)
		return 2;
	setenv("LD_PRELOAD", joined, 1);
	if (options)
		setenv("LOCKDEP_RCU_OPTIONS", options, 1);
	execvp(argv[i], argv + i);
	fprintf(stderr, "lockdep-rcu run: cannot run %s: %s\n", argv[i], strerror(errno));
	return 127;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2);
	fprintf(stderr, "lockdep-rcu: unknown command '%s' (only 'run' exists so far)\n", argv[1]);
	return 2;
}
