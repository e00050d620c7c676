/* lockdep-rcu stress: the program many times, a few at a time, each run
 * with its own logs, hangs killed, then one report over all the runs. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "launch.h"
#include "collect.h"

#define DEFAULT_RUNS 20
#define DEFAULT_TIMEOUT 60.0
#define MAX_RUNS 1000000
#define MAX_JOBS 1024
#define PROGRESS_INTERVAL 0.2   /* seconds between progress line refreshes */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lockdep-rcu stress [-n RUNS] [-j JOBS] [--timeout S] [--seed N] [--perturb]\n"
		"                          [-o DIR] [--option KEY=VALUE]... [--suppressions FILE]\n"
		"                          [--json] [--no-symbolize] [--symbols DIR]...\n"
		"                          -- PROGRAM [ARGS...]\n"
		"\n"
		"Runs PROGRAM RUNS times, JOBS at a time, each run preloaded with the tracer\n"
		"and logging to its own directory DIR/run-NNNN (program output in output.out),\n"
		"then prints the report of all runs (see lockdep-rcu report --help).\n"
		"\n"
		"  -n RUNS              how many runs (default %d)\n"
		"  -j JOBS              runs at a time (default: the number of CPUs)\n"
		"  --timeout S          a run still going after S seconds (default %g) is killed\n"
		"                       with its children and counted as a hang: a deadlock,\n"
		"                       explained by the splat printed before it\n"
		"  --perturb            the tracer injects short seeded delays and yields at lock\n"
		"                       acquire and release and read-side unlock, to widen race\n"
		"                       windows (tracer options perturb=1:seed=N)\n"
		"  --seed N             run i gets seed N+i-1 (default: random); a failing run's\n"
		"                       seed is printed. A seed fixes perturb's delays, not the\n"
		"                       scheduler: a run again with it may pass\n"
		"  -o DIR               keep the logs in DIR (a new or empty directory); by\n"
		"                       default a temporary one, removed when nothing was found\n"
		"  --option, --suppressions, --json, --no-symbolize, --symbols: as for run\n"
		"                       and report\n"
		"\n"
		"On a terminal, a progress line shows runs done, hangs, crashes and distinct bugs.\n"
		"Exit status: 0 nothing found, 1 reports, hangs or crashes, 2 usage error,\n"
		"130 when interrupted (the report of the finished runs is printed).\n",
		DEFAULT_RUNS, DEFAULT_TIMEOUT);
}

struct stress_args {
	long runs, jobs;
	double timeout;
	int has_seed, perturb, json;
	unsigned long seed;
	const char *dir;
	struct strbuf options;
	const char *suppressions;
	struct collect_options collect;
	char **program;
};

struct job {
	pid_t pid;                /* also its process group; 0 when the slot is free */
	long index;               /* 0-based run number */
	double deadline;
	int timed_out, interrupted;
	unsigned long seed;
	char *dir;
};

struct stress {
	struct stress_args *a;
	char *program;            /* resolved path */
	char *preload;
	char *dir;                /* absolute */
	int name_width;
	struct job *jobs;
	long running, started, done, hangs, crashes;
	struct collection c;
	int progress;             /* stderr is a terminal */
	int progress_shown;
	double last_progress;
	long first_failed;        /* -1 or the index of the first run with a finding */
	long failed;              /* runs with a finding */
	unsigned long first_failed_seed;
};

static int parse_args(int argc, char **argv, struct stress_args *a)
{
	a->runs = DEFAULT_RUNS;
	a->jobs = sysconf(_SC_NPROCESSORS_ONLN);
	if (a->jobs < 1)
		a->jobs = 1;
	a->timeout = DEFAULT_TIMEOUT;
	a->collect.symbolize = 1;
	int i = 0;
	for (; i < argc; i++) {
		const char *v;
		const char *opt = argv[i];   /* option_value() moves i to the value */
		int r;
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 1;
		} else if ((r = option_value(argc, argv, &i, "-n", &v)) != 0) {
			if (r < 0 || parse_long(v, 1, MAX_RUNS, &a->runs))
				goto bad;
		} else if ((r = option_value(argc, argv, &i, "-j", &v)) != 0) {
			if (r < 0 || parse_long(v, 1, MAX_JOBS, &a->jobs))
				goto bad;
		} else if ((r = option_value(argc, argv, &i, "--timeout", &v)) != 0) {
			if (r < 0 || parse_seconds(v, &a->timeout))
				goto bad;
		} else if ((r = option_value(argc, argv, &i, "--seed", &v)) != 0) {
			long seed;
			if (r < 0 || parse_long(v, 0, 0x7fffffffL, &seed))
				goto bad;
			a->seed = (unsigned long)seed;
			a->has_seed = 1;
		} else if (!strcmp(argv[i], "--perturb")) {
			a->perturb = 1;
		} else if (!strcmp(argv[i], "--json")) {
			a->json = 1;
		} else if (!strcmp(argv[i], "--no-symbolize")) {
			a->collect.symbolize = 0;
		} else if ((r = option_value(argc, argv, &i, "-o", &v)) != 0) {
			if (r < 0)
				goto bad;
			a->dir = v;
		} else if ((r = option_value(argc, argv, &i, "--option", &v)) != 0) {
			if (r < 0)
				goto bad;
			struct strbuf err = { 0 };
			if (tracer_options_check(v, &err)) {
				fprintf(stderr, "lockdep-rcu stress: %s\n", err.s);
				sb_free(&err);
				return -1;
			}
			options_append(&a->options, v);
		} else if ((r = option_value(argc, argv, &i, "--suppressions", &v)) != 0) {
			if (r < 0)
				goto bad;
			a->suppressions = v;
		} else if ((r = option_value(argc, argv, &i, "--symbols", &v)) != 0) {
			if (r < 0)
				goto bad;
			a->collect.symbol_dirs = xrealloc(a->collect.symbol_dirs,
							  (a->collect.nsymbol_dirs + 1) * sizeof(char *));
			a->collect.symbol_dirs[a->collect.nsymbol_dirs++] = (char *)v;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "lockdep-rcu stress: unknown option %s; try 'lockdep-rcu stress --help'\n", argv[i]);
			return -1;
		} else {
			break;
		}
		continue;
bad:
		fprintf(stderr, "lockdep-rcu stress: %s needs %s\n", opt,
			!strcmp(opt, "-n") ? "a number of runs from 1 to 1000000" :
			!strcmp(opt, "-j") ? "a number of jobs from 1 to 1024" :
			!strncmp(opt, "--timeout", 9) ? "a positive number of seconds" :
			!strncmp(opt, "--seed", 6) ? "a number from 0 to 2147483647" :
			!strncmp(opt, "--option", 8) ? "KEY=VALUE" : "a value");
		return -1;
	}
	if (i >= argc) {
		fprintf(stderr, "lockdep-rcu stress: no program given\n");
		usage(stderr);
		return -1;
	}
	a->program = argv + i;
	/* the tracer's options are ints: the last run's seed must be one too */
	if (a->has_seed && a->seed + (unsigned long)a->runs - 1 > 0x7fffffffUL) {
		fprintf(stderr, "lockdep-rcu stress: --seed %lu + %ld runs goes past 2147483647\n", a->seed, a->runs);
		return -1;
	}
	if (a->jobs > a->runs)
		a->jobs = a->runs;
	if (!a->has_seed) {
		unsigned int r;
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (unsigned int)time(NULL) ^ (unsigned int)getpid() << 16;
		a->seed = r & 0x3fffffff;   /* short enough to type, room for +runs */
	}
	return 0;
}

/* ---- the progress line: terminals only ------------------------------------ */

static void progress_clear(struct stress *s)
{
	if (s->progress_shown) {
		fputs("\r\033[K", stderr);
		s->progress_shown = 0;
	}
}

static void progress(struct stress *s, int force)
{
	if (!s->progress)
		return;
	double now = monotonic_seconds();
	if (!force && now - s->last_progress < PROGRESS_INTERVAL)
		return;
	s->last_progress = now;
	fprintf(stderr, "\r\033[Klockdep-rcu stress: %ld/%ld runs done, %ld running, %ld hang%s, %ld crash%s, "
		"%zu distinct bug%s", s->done, s->a->runs, s->running, s->hangs, s->hangs == 1 ? "" : "s",
		s->crashes, s->crashes == 1 ? "" : "es", s->c.groups.n, s->c.groups.n == 1 ? "" : "s");
	fflush(stderr);
	s->progress_shown = 1;
}

/* ---- runs ------------------------------------------------------------------- */

static int start_run(struct stress *s, struct job *j, long index)
{
	memset(j, 0, sizeof(*j));
	j->index = index;
	j->seed = s->a->seed + (unsigned long)index;
	char name[32];
	snprintf(name, sizeof(name), "run-%0*ld", s->name_width, index + 1);
	j->dir = path_join(s->dir, name);
	if (mkdir(j->dir, 0755) < 0) {
		fprintf(stderr, "lockdep-rcu stress: cannot create %s: %s\n", j->dir, strerror(errno));
		free(j->dir);
		j->dir = NULL;
		return -1;
	}
	struct strbuf options = { 0 };
	options_append(&options, s->a->options.s);
	char *kv = xasprintf("%s/lockdep-rcu.%%p.log", j->dir);
	options_append_value(&options, "log_path", kv);
	free(kv);
	options_hang_timeouts(&options, s->a->timeout);
	if (s->a->perturb) {
		kv = xasprintf("perturb=1:seed=%lu", j->seed);
		options_append(&options, kv);
		free(kv);
	}
	char *out_path = path_join(j->dir, "output.out");
	int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	free(out_path);
	struct run_record rec = { .program = s->program, .has_seed = s->a->perturb, .seed = j->seed };
	run_record_write(j->dir, &rec);
	struct spawn sp = {
		.argv = s->a->program, .path = s->program, .preload = s->preload, .options = options.s,
		.out_fd = out, .err_fd = out, .null_stdin = 1, .new_process_group = 1,
	};
	struct strbuf err = { 0 };
	j->pid = spawn_program(&sp, &err);
	if (out >= 0)
		close(out);
	sb_free(&options);
	if (j->pid < 0) {
		fprintf(stderr, "lockdep-rcu stress: %s\n", err.s);
		sb_free(&err);
		j->pid = 0;
		free(j->dir);
		j->dir = NULL;
		return -1;
	}
	/* Also from here: the group must exist before a timeout kills it. */
	setpgid(j->pid, j->pid);
	j->deadline = monotonic_seconds() + s->a->timeout;
	s->running++;
	s->started++;
	return 0;
}

static void finish_run(struct stress *s, struct job *j, int ws)
{
	kill(-j->pid, SIGKILL);   /* what the program left behind in its group */
	struct run_record rec = { .program = s->program, .has_seed = s->a->perturb, .seed = j->seed };
	if (j->interrupted) {
		/* neither a hang nor a crash: no result */
	} else if (j->timed_out) {
		rec.result = RESULT_TIMEOUT;
		rec.value = (long)(s->a->timeout * 1000 + 0.5);
		s->hangs++;
	} else if (WIFSIGNALED(ws)) {
		rec.result = RESULT_SIGNAL;
		rec.value = WTERMSIG(ws);
		s->crashes++;
	} else {
		rec.result = RESULT_EXIT;
		rec.value = WEXITSTATUS(ws);
	}
	run_record_write(j->dir, &rec);
	size_t before = s->c.splats;
	const char *why;
	if (collect_path(&s->c, j->dir, &why) < 0)
		collection_note(&s->c, j->dir, "%s", why);
	size_t reports = s->c.splats - before;
	struct strbuf what = { 0 };
	if (reports)
		sb_printf(&what, "%zu report%s", reports, reports == 1 ? "" : "s");
	if (rec.result == RESULT_TIMEOUT)
		sb_printf(&what, "%shung, killed after %g s", what.len ? ", " : "", s->a->timeout);
	if (rec.result == RESULT_SIGNAL) {
		sb_printf(&what, "%skilled by signal ", what.len ? ", " : "");
		render_signal(WTERMSIG(ws), &what);
	}
	if (what.len) {
		progress_clear(s);
		fprintf(stderr, "lockdep-rcu stress: run %ld: %s", j->index + 1, what.s);
		if (s->a->perturb)
			fprintf(stderr, " (seed %lu)", j->seed);
		fprintf(stderr, "\n");
		s->failed++;
		if (s->first_failed < 0 || j->index < s->first_failed) {   /* runs end out of order */
			s->first_failed = j->index;
			s->first_failed_seed = j->seed;
		}
	}
	sb_free(&what);
	free(j->dir);
	j->pid = 0;
	s->running--;
	s->done++;
}

static struct job *job_of(struct stress *s, pid_t pid)
{
	for (long i = 0; i < s->a->jobs; i++)
		if (s->jobs[i].pid == pid)
			return &s->jobs[i];
	return NULL;
}

static int run_all(struct stress *s, sigset_t *wait_set)
{
	int interrupted = 0, failed = 0;
	for (;;) {
		for (long i = 0; i < s->a->jobs && !interrupted && !failed && s->started < s->a->runs; i++)
			if (!s->jobs[i].pid && start_run(s, &s->jobs[i], s->started) < 0)
				failed = 1;
		if (!s->running && (s->started == s->a->runs || interrupted || failed))
			break;
		progress(s, 0);
		double now = monotonic_seconds(), wait = s->progress ? PROGRESS_INTERVAL : 1.0;
		for (long i = 0; i < s->a->jobs; i++)
			if (s->jobs[i].pid && !s->jobs[i].timed_out && s->jobs[i].deadline - now < wait)
				wait = s->jobs[i].deadline - now;
		if (wait < 0.001)
			wait = 0.001;
		struct timespec ts = { (time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9) };
		siginfo_t info;
		int sig = sigtimedwait(wait_set, &info, &ts);
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
			interrupted = 1;
			for (long i = 0; i < s->a->jobs; i++)
				if (s->jobs[i].pid) {
					s->jobs[i].interrupted = 1;
					kill(-s->jobs[i].pid, SIGKILL);
				}
		}
		int ws;
		pid_t pid;
		while ((pid = waitpid(-1, &ws, WNOHANG)) > 0) {
			struct job *j = job_of(s, pid);
			if (j)
				finish_run(s, j, ws);
			progress(s, 1);
		}
		now = monotonic_seconds();
		for (long i = 0; i < s->a->jobs; i++) {
			struct job *j = &s->jobs[i];
			if (j->pid && !j->timed_out && now >= j->deadline) {
				j->timed_out = 1;
				kill(-j->pid, SIGKILL);
			}
		}
	}
	progress_clear(s);
	return interrupted ? 130 : failed ? EXIT_USAGE : 0;
}

static char *make_dir(const char *requested)
{
	if (requested) {
		if (mkdir_p(requested)) {
			fprintf(stderr, "lockdep-rcu stress: cannot create %s: %s\n", requested, strerror(errno));
			return NULL;
		}
		char *abs = path_absolute(requested);
		int fd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int empty = 1;
		if (fd >= 0) {
			/* runs from an earlier stress would be counted with these */
			DIR *d = fdopendir(fd);
			struct dirent *e;
			while (d && (e = readdir(d)))
				if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
					empty = 0;
			if (d)
				closedir(d);
		}
		if (!empty) {
			fprintf(stderr, "lockdep-rcu stress: %s is not empty: give a new or empty directory, "
				"runs of an earlier stress would be counted with these\n", requested);
			free(abs);
			return NULL;
		}
		return abs;
	}
	const char *tmp = getenv("TMPDIR");
	char *templ = xasprintf("%s/lockdep-rcu-stress.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(templ)) {
		fprintf(stderr, "lockdep-rcu stress: cannot create a directory %s: %s\n", templ, strerror(errno));
		free(templ);
		return NULL;
	}
	return templ;
}

/* The hit rate, and what a seed fixes: perturb's delays, not the
 * scheduler's choices, so a run again with its seed is no replay: it may
 * pass. What finds the race again is more runs. */
static void print_rerun(const struct stress *s)
{
	if (s->first_failed < 0)
		return;
	fprintf(stderr, "lockdep-rcu stress: %ld of %ld run%s found something (%.0f%%)\n", s->failed, s->done,
		s->done == 1 ? "" : "s", s->done ? 100.0 * (double)s->failed / (double)s->done : 0.0);
	if (!s->a->perturb)
		return;
	fprintf(stderr,
		"lockdep-rcu stress: run %ld's delays again (seed %lu; the scheduler is not replayed, so it may "
		"pass): lockdep-rcu stress -n 1 --perturb --seed %lu --",
		s->first_failed + 1, s->first_failed_seed, s->first_failed_seed);
	for (char **p = s->a->program; *p; p++)
		fprintf(stderr, " %s", *p);
	fprintf(stderr, "\n");
}

int cmd_stress(int argc, char **argv)
{
	struct stress_args a = { 0 };
	options_append(&a.options, getenv("LOCKDEP_RCU_OPTIONS"));
	int r = parse_args(argc, argv, &a);
	if (r) {
		sb_free(&a.options);
		free(a.collect.symbol_dirs);
		return r > 0 ? EXIT_CLEAN : EXIT_USAGE;
	}
	struct stress s = { .a = &a, .first_failed = -1 };
	collection_init(&s.c);
	int status = EXIT_USAGE, code;
	struct strbuf err = { 0 };
	char *tracer = find_tracer(&err);
	if (!tracer) {
		fprintf(stderr, "lockdep-rcu stress: %s\n", err.s);
		goto out;
	}
	if (!(s.program = resolve_program(a.program[0], &err, &code)) ||
	    check_preloadable(s.program, tracer, &err)) {
		fprintf(stderr, "lockdep-rcu stress: %s\n", err.s);
		goto out;
	}
	if (a.suppressions) {
		if (load_suppressions("stress", a.suppressions))
			goto out;
		a.collect.use_suppressions = 1;
		char *abs = path_absolute(a.suppressions);
		options_append_value(&a.options, "suppressions", abs);
		free(abs);
	}
	if (!(s.dir = make_dir(a.dir)))
		goto out;
	s.preload = compose_preload(tracer, getenv("LD_PRELOAD"));
	char digits[32];
	s.name_width = snprintf(digits, sizeof(digits), "%ld", a.runs);
	if (s.name_width < 4)
		s.name_width = 4;
	s.jobs = xcalloc((size_t)a.jobs, sizeof(*s.jobs));
	s.progress = isatty(2);
	fprintf(stderr, "lockdep-rcu stress: %ld run%s of %s, %ld at a time, timeout %g s", a.runs,
		a.runs == 1 ? "" : "s", a.program[0], a.jobs, a.timeout);
	if (a.perturb)
		fprintf(stderr, ", perturbed: run i has seed %lu+i-1 (%lu..%lu)", a.seed, a.seed,
			a.seed + (unsigned long)a.runs - 1);
	fprintf(stderr, "; logs in %s\n", s.dir);
	/* Children and Ctrl-C are waited for with sigtimedwait(): no handler
	 * races. The programs get an empty mask (spawn_program). */
	sigset_t wait_set, old;
	sigemptyset(&wait_set);
	sigaddset(&wait_set, SIGCHLD);
	sigaddset(&wait_set, SIGINT);
	sigaddset(&wait_set, SIGTERM);
	sigaddset(&wait_set, SIGHUP);
	sigprocmask(SIG_BLOCK, &wait_set, &old);
	int run_status = run_all(&s, &wait_set);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (run_status == EXIT_USAGE)
		goto out;
	if (run_status == 130)
		fprintf(stderr, "lockdep-rcu stress: interrupted after %ld of %ld runs\n", s.done, a.runs);
	collection_finish(&s.c, &a.collect);
	status = print_report("stress", &s.c, a.json);
	print_rerun(&s);
	if (status == EXIT_CLEAN && !a.dir && run_status != 130) {
		remove_tree(s.dir);
		fprintf(stderr, "lockdep-rcu stress: nothing found; logs removed\n");
	} else {
		fprintf(stderr, "lockdep-rcu stress: logs kept in %s (lockdep-rcu report %s reads them again)\n",
			s.dir, s.dir);
	}
	if (run_status == 130)
		status = 130;
out:
	collection_free(&s.c);
	free(s.jobs);
	free(s.dir);
	free(s.preload);
	free(s.program);
	free(tracer);
	sb_free(&err);
	sb_free(&a.options);
	free(a.collect.symbol_dirs);
	return status;
}
