/* lockdep-rcu run: one program under the tracer, its exit status passed on. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "launch.h"
#include "record.h"
#include "collect.h"
#include "../preload/base/record_schema.h"

/* run's own failures, as timeout(1) and env(1) do: 125 for our errors,
 * 126 a program that cannot be executed, 127 one that is not found. */
enum { RUN_FAILED = 125 };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lockdep-rcu run [-o DIR] [--option KEY=VALUE]... [--suppressions FILE]\n"
		"                       [--] PROGRAM [ARGS...]\n"
		"\n"
		"Runs PROGRAM with the tracer (liblockdep-rcu.so) preloaded; an LD_PRELOAD\n"
		"already set is kept, and LOCKDEP_RCU_OPTIONS already set comes first.\n"
		"Processes PROGRAM forks or executes are traced too (they inherit the\n"
		"environment), unless they clear it.\n"
		"\n"
		"  -o DIR               one log per process, DIR/lockdep-rcu.PID.log, and a\n"
		"                       run record DIR/lockdep-rcu.run; use one DIR per run\n"
		"                       (lockdep-rcu report DIR reads them)\n"
		"  --option KEY=VALUE   a tracer option (LOCKDEP_RCU_OPTIONS=help=1 lists them);\n"
		"                       an unknown one, or a value of the wrong type, is an error\n"
		"  --suppressions FILE  tracer option suppressions=FILE, checked first\n"
		"  --timeout S          a program still running after S seconds is sent SIGTERM,\n"
		"                       and SIGKILL 2 s later (exit status 124, as timeout(1));\n"
		"                       the tracer's hung_task_timeout and stall_timeout are set\n"
		"                       below S (unless given), so the log explains the hang\n"
		"\n"
		"Exit status: the program's own; the tracer's exitcode (66 unless set) when\n"
		"anything was reported, also when only a child process reported (counted\n"
		"from the reports' records: in DIR, else in a private temporary directory);\n"
		"128+N when the program was killed by signal N; 125 when run itself failed\n"
		"(no tracer library, a statically linked program, a usage error), 126 when\n"
		"PROGRAM cannot be executed, 127 when it does not exist, 124 when --timeout\n"
		"killed it.\n");
}

/* ---- the reports this run wrote to DIR, by their records -------------------- */

/* The records files of DIR (one beside each log) and the reports in each. */
struct snapshot {
	char **names;
	size_t *reports;
	size_t n, cap, reports_cap;
};

static void count_report(const json_t *v, void *ctx)
{
	*(size_t *)ctx += splat_is_report_kind(json_string_value(json_object_get(v, RECORD_KIND)));
}

static void snapshot_take(struct snapshot *s, const char *dir)
{
	memset(s, 0, sizeof(*s));
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!ends_with(e->d_name, RECORDS_SUFFIX))
			continue;
		char *path = path_join(dir, e->d_name);
		size_t n = 0;
		struct records_scan scan;
		const char *why;
		if (records_file_read(path, count_report, &n, &scan, &why) == 0) {
			grow(&s->names, &s->cap, s->n + 1, sizeof(*s->names));
			grow(&s->reports, &s->reports_cap, s->n + 1, sizeof(*s->reports));
			s->names[s->n] = xstrdup(e->d_name);
			s->reports[s->n++] = n;
		}
		free(path);
	}
	if (d)
		closedir(d);
}

static void snapshot_free(struct snapshot *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	free(s->reports);
}

/* Reports written to DIR since the snapshot; *logs: how many logs had some. */
static size_t new_reports(const char *dir, const struct snapshot *before, size_t *logs)
{
	struct snapshot after;
	snapshot_take(&after, dir);
	size_t total = 0;
	*logs = 0;
	for (size_t i = 0; i < after.n; i++) {
		size_t n = after.reports[i];
		for (size_t j = 0; j < before->n; j++)
			if (!strcmp(before->names[j], after.names[i]) && before->reports[j] <= n)
				n -= before->reports[j];
		total += n;
		*logs += n > 0;
	}
	snapshot_free(&after);
	return total;
}

/* ---- signals: the terminal signals the program itself; others are passed on */

static volatile pid_t child_pid;

static void forward(int sig, siginfo_t *info, void *uctx)
{
	(void)uctx;
	/* Ctrl-C and friends come from the terminal to the whole foreground
	 * process group, the program included (si_code SI_KERNEL): only a
	 * signal sent to us alone (kill, si_code <= 0) needs passing on. */
	if (info->si_code <= 0 && child_pid > 0)
		kill(child_pid, sig);
}

static void forward_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	static const int sigs[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* ---- the command ------------------------------------------------------------ */

struct run_args {
	const char *dir;
	double timeout;           /* 0: none */
	struct strbuf options;
	const char *suppressions;
	char **program;           /* argv of the program */
};

static int parse_args(int argc, char **argv, struct run_args *a)
{
	int i = 0;
	for (; i < argc; i++) {
		const char *v;
		int r;
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 1;
		} else if ((r = option_value(argc, argv, &i, "-o", &v)) != 0) {
			if (r < 0)
				goto missing;
			a->dir = v;
		} else if ((r = option_value(argc, argv, &i, "--option", &v)) != 0) {
			if (r < 0)
				goto missing;
			struct strbuf err = { 0 };
			if (tracer_options_check(v, &err)) {
				fprintf(stderr, "lockdep-rcu run: %s\n", err.s);
				sb_free(&err);
				return -1;
			}
			options_append(&a->options, v);
		} else if ((r = option_value(argc, argv, &i, "--suppressions", &v)) != 0) {
			if (r < 0)
				goto missing;
			a->suppressions = v;
		} else if ((r = option_value(argc, argv, &i, "--timeout", &v)) != 0) {
			if (r < 0)
				goto missing;
			if (parse_seconds(v, &a->timeout) || a->timeout <= 0) {
				fprintf(stderr, "lockdep-rcu run: --timeout: a positive number of seconds, not %s\n", v);
				return -1;
			}
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "lockdep-rcu run: unknown option %s; try 'lockdep-rcu run --help'\n", argv[i]);
			return -1;
		} else {
			break;
		}
		continue;
missing:
		fprintf(stderr, "lockdep-rcu run: %s needs a value\n", argv[i]);
		return -1;
	}
	if (i >= argc) {
		fprintf(stderr, "lockdep-rcu run: no program given\n");
		usage(stderr);
		return -1;
	}
	a->program = argv + i;
	return 0;
}

static double now_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Waits for pid; with a timeout, SIGTERM at it and SIGKILL 2 s later.
 * *timed_out says whether it had to. */
static int wait_for(pid_t pid, int *status, double timeout, int *timed_out)
{
	*timed_out = 0;
	double deadline = now_seconds() + timeout, kill_at = 0;
	for (;;) {
		pid_t r = waitpid(pid, status, timeout > 0 ? WNOHANG : 0);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
		if (timeout <= 0)
			continue;
		double now = now_seconds();
		if (!*timed_out && now >= deadline) {
			*timed_out = 1;
			kill(pid, SIGTERM);
			kill_at = now + 2;
		} else if (*timed_out && kill_at && now >= kill_at) {
			kill(pid, SIGKILL);
			kill_at = 0;
		}
		struct timespec nap = { 0, 20 * 1000 * 1000 };
		nanosleep(&nap, NULL);
	}
}

int cmd_run(int argc, char **argv)
{
	struct run_args a = { 0 };
	const char *env_options = getenv("LOCKDEP_RCU_OPTIONS");
	options_append(&a.options, env_options);   /* the user's first: ours override */
	int r = parse_args(argc, argv, &a);
	if (r) {
		sb_free(&a.options);
		return r > 0 ? 0 : RUN_FAILED;
	}
	int status = RUN_FAILED;
	struct strbuf err = { 0 };
	char *tracer = NULL, *program = NULL, *dir = NULL, *preload = NULL;
	char *records_dir = NULL;   /* without -o: a private one, for the count */
	struct snapshot before = { 0 };
	int code;
	if (!(tracer = find_tracer(&err))) {
		fprintf(stderr, "lockdep-rcu run: %s\n", err.s);
		goto out;
	}
	if (!(program = resolve_program(a.program[0], &err, &code))) {
		fprintf(stderr, "lockdep-rcu run: %s\n", err.s);
		status = code;
		goto out;
	}
	if (check_preloadable(program, tracer, &err)) {
		fprintf(stderr, "lockdep-rcu run: %s\n", err.s);
		goto out;
	}
	if (is_secure_exec(program))
		fprintf(stderr, "lockdep-rcu run: warning: %s is setuid or setgid: the dynamic loader "
			"ignores LD_PRELOAD for it, so it will not be traced\n", program);
	if (a.suppressions) {
		if (load_suppressions("run", a.suppressions))
			goto out;
		char *abs = path_absolute(a.suppressions);
		options_append_value(&a.options, "suppressions", abs);
		free(abs);
	}
	if (a.timeout > 0)
		options_hang_timeouts(&a.options, a.timeout);
	if (a.dir) {
		if (mkdir_p(a.dir)) {
			fprintf(stderr, "lockdep-rcu run: cannot create %s: %s\n", a.dir, strerror(errno));
			goto out;
		}
		/* absolute: children that chdir() still log here */
		dir = path_absolute(a.dir);
		char *log = xasprintf("%s/lockdep-rcu.%%p.log", dir);
		options_append_value(&a.options, "log_path", log);
		free(log);
		snapshot_take(&before, dir);
		struct run_record rec = { .program = program };
		run_record_write(dir, &rec);
	} else if (!options_set(a.options.s, "log_path") && !options_set(a.options.s, "records_path")) {
		/* Reports stay on stderr, and their records go to a directory of
		 * the run's own: the reports of every process the program starts
		 * are counted, as with -o. Without it (no TMPDIR to write), only
		 * the program's own status is known. */
		const char *tmp = getenv("TMPDIR");
		records_dir = path_join(tmp && *tmp ? tmp : "/tmp", "lockdep-rcu-run.XXXXXX");
		if (mkdtemp(records_dir)) {
			char *records = xasprintf("%s/lockdep-rcu.%%p%s", records_dir, RECORDS_SUFFIX);
			options_append_value(&a.options, "records_path", records);
			free(records);
		} else {
			free(records_dir);
			records_dir = NULL;
		}
	}
	preload = compose_preload(tracer, getenv("LD_PRELOAD"));
	struct spawn sp = {
		.argv = a.program, .path = program, .preload = preload,
		.options = a.options.len ? a.options.s : NULL, .out_fd = -1, .err_fd = -1,
	};
	forward_signals();
	pid_t pid = spawn_program(&sp, &err);
	if (pid < 0) {
		fprintf(stderr, "lockdep-rcu run: %s\n", err.s);
		status = 126;   /* resolve_program() found it: it is there but cannot run */
		goto out;
	}
	child_pid = pid;
	int ws, timed_out;
	if (wait_for(pid, &ws, a.timeout, &timed_out)) {
		fprintf(stderr, "lockdep-rcu run: waitpid: %s\n", strerror(errno));
		goto out;
	}
	struct run_record rec = { .program = program };
	if (timed_out) {
		fprintf(stderr, "lockdep-rcu run: %s still running after %g s: hung, killed\n", a.program[0],
			a.timeout);
		status = 124;
		rec.result = RESULT_TIMEOUT;
		rec.value = (long)(a.timeout * 1000 + 0.5);
	} else if (WIFSIGNALED(ws)) {
		struct strbuf sig = { 0 };
		render_signal(WTERMSIG(ws), &sig);
		fprintf(stderr, "lockdep-rcu run: %s was killed by signal %s%s\n", a.program[0], sig.s,
			WCOREDUMP(ws) ? ", core dumped" : "");
		sb_free(&sig);
		status = 128 + WTERMSIG(ws);
		rec.result = RESULT_SIGNAL;
		rec.value = WTERMSIG(ws);
	} else {
		status = WEXITSTATUS(ws);
		rec.result = RESULT_EXIT;
		rec.value = status;
	}
	if (dir)
		run_record_write(dir, &rec);
	if (dir || records_dir) {
		size_t logs;
		size_t reports = new_reports(dir ? dir : records_dir, &before, &logs);
		int exitcode = options_exitcode(a.options.s);
		/* A child process that reported cannot change the parent's status:
		 * the records can, as the tracer would have in a single process. */
		if (reports && exitcode && WIFEXITED(ws) && !timed_out)
			status = exitcode;
		if (reports && dir)
			fprintf(stderr, "lockdep-rcu run: %zu report%s in %zu log%s in %s (lockdep-rcu report %s "
				"groups them)\n", reports, reports == 1 ? "" : "s", logs, logs == 1 ? "" : "s", dir, dir);
	}
out:
	if (records_dir)
		remove_tree(records_dir);
	free(records_dir);
	snapshot_free(&before);
	free(tracer);
	free(program);
	free(dir);
	free(preload);
	sb_free(&err);
	sb_free(&a.options);
	return status;
}
