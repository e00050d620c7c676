/* lockdep-rcu report: group the splats of many logs into bugs. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "../preload/base/suppressions.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lockdep-rcu report [--json | --sarif | --format=gcc] [--no-symbolize] [--symbols DIR]...\n"
		"                          [--suppressions FILE] [--baseline OLD.json]\n"
		"                          LOG-OR-DIR...\n"
		"\n"
		"Reads tracer logs (files, or directories walked recursively: every file but\n"
		"*.out program output; lockdep-rcu.run records say how each run ended) with\n"
		"the records beside them (LOG.jsonl: what each report is about; a log without\n"
		"them is read from its text), groups the reports that are the same bug (same\n"
		"kind, site, and locks by where they were taken, whatever the addresses, pids,\n"
		"threads and outer frames; for a thread that ended holding locks, the same\n"
		"innermost lock taken at the same place), and prints each bug once, most\n"
		"frequent first, with how many runs and processes hit it and one full report;\n"
		"then the most contended lock classes when the logs hold lock_stat records.\n"
		"Each directory holding logs is one run: what `run -o DIR` and each `stress`\n"
		"run write.\n"
		"\n"
		"  --json               one JSON document on stdout instead of text\n"
		"  --sarif              SARIF 2.1.0 on stdout: one result per bug, its kind the\n"
		"                       rule, the lock sites related locations, a fingerprint\n"
		"  --format=gcc         one \"FILE:LINE: warning: TITLE [KIND]\" line per bug, as\n"
		"                       compilers print them, for editors\n"
		"  --no-symbolize       run no addr2line: \"0xADDR [module+0xoff]\" frames stay\n"
		"                       as they are (default: addr2line names them where debug\n"
		"                       info exists); names the records give are still used\n"
		"  --symbols DIR        look for the modules named in frames in DIR first\n"
		"                       (unstripped copies of stripped programs)\n"
		"  --suppressions FILE  leave out reports matching FILE's kind:pattern rules;\n"
		"                       they are counted as suppressed\n"
		"  --baseline OLD.json  show only bugs that are not in OLD.json (an earlier\n"
		"                       report --json), by fingerprint; the known ones are\n"
		"                       counted, and do not make the exit status 1\n"
		"\n"
		"With DEBUGINFOD_URLS set, a module without debug information of its own (a\n"
		"stripped program) is looked up by build-id on those debuginfod servers, with\n"
		"libdebuginfod.so.1 (Debian: libdebuginfod1) loaded then.\n"
		"\n"
		"A path named here that cannot be read (missing, not permitted, a FIFO, device\n"
		"or socket: never read) is an error. In directories, special files are skipped;\n"
		"unreadable, empty, binary or cut-short logs are skipped with a note on stderr;\n"
		"runs of NUL bytes in a log (a crash) are skipped, and the text around them read.\n"
		"Exit status: 0 nothing found, 1 reports (or hangs, crashes, reports cut short)\n"
		"found, 2 usage error or no lockdep-rcu log or run among the inputs\n"
		"(a path that cannot be read included).\n");
}

int option_value(int argc, char **argv, int *i, const char *name, const char **value)
{
	const char *arg = argv[*i];
	size_t n = strlen(name);
	if (strncmp(arg, name, n))
		return 0;
	if (arg[n] == '=' && name[1] == '-') {
		*value = arg + n + 1;
		return 1;
	}
	if (arg[n])
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*value = argv[++*i];
	return 1;
}

int load_suppressions(const char *cmd, const char *path)
{
	char err[512];
	if (suppressions_load(path, err, sizeof(err)) < 0) {
		fprintf(stderr, "lockdep-rcu %s: %s\n", cmd, err);
		return -1;
	}
	return 0;
}

int print_report(const char *cmd, const struct collection *c, int format)
{
	for (size_t i = 0; i < c->nnotes; i++)
		fprintf(stderr, "lockdep-rcu %s: note: %s\n", cmd, c->notes[i]);
	struct strbuf out = { 0 };
	if (format == REPORT_JSON)
		render_json(c, &out);
	else if (format == REPORT_SARIF)
		render_sarif(c, &out);
	else if (format == REPORT_GCC)
		render_gcc(c, &out);
	else
		render_text(c, &out);
	fflush(stderr);
	fwrite(out.s, 1, out.len, stdout);
	fflush(stdout);
	sb_free(&out);
	/* A report cut short is a finding all the same: a process was killed
	 * while it told of a bug. */
	return collection_bugs(c) || collection_hangs(c) || collection_crashes(c) || c->cut_short ? EXIT_FOUND
												    : EXIT_CLEAN;
}

/* The fingerprints of an earlier report --json's groups, into o; 0, or -1
 * with the error said. */
static int load_baseline(const char *path, struct collect_options *o)
{
	char *text;
	size_t len;
	int truncated;
	if (read_file(path, 64u << 20, &text, &len, &truncated) < 0 || truncated) {
		fprintf(stderr, "lockdep-rcu report: --baseline %s: cannot read it%s\n", path,
			truncated ? " (over 64 MiB)" : "");
		return -1;
	}
	json_t *doc = json_loadb(text, len, JSON_READ_FLAGS, NULL);
	free(text);
	json_t *groups = json_object_get(doc, "groups");
	if (!json_is_array(groups)) {
		fprintf(stderr, "lockdep-rcu report: --baseline %s: not the output of lockdep-rcu report --json\n", path);
		json_decref(doc);
		return -1;
	}
	size_t i;
	json_t *g;
	json_array_foreach(groups, i, g) {
		const char *fp = json_string_value(json_object_get(g, "fingerprint"));
		if (!fp)
			continue;
		o->baseline = xrealloc(o->baseline, (o->nbaseline + 1) * sizeof(char *));
		o->baseline[o->nbaseline++] = xstrdup(fp);
	}
	o->has_baseline = 1;
	json_decref(doc);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	int json = 0;
	struct collect_options o = { .symbolize = 1 };
	const char **paths = xcalloc((size_t)argc + 1, sizeof(*paths));
	size_t npaths = 0;
	int status = EXIT_USAGE;
	for (int i = 0; i < argc; i++) {
		const char *v;
		int r;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			status = EXIT_CLEAN;
			goto out;
		} else if (!strcmp(argv[i], "--json")) {
			json = REPORT_JSON;
		} else if (!strcmp(argv[i], "--sarif")) {
			json = REPORT_SARIF;
		} else if (!strcmp(argv[i], "--format=gcc")) {
			json = REPORT_GCC;
		} else if (!strcmp(argv[i], "--no-symbolize")) {
			o.symbolize = 0;
		} else if ((r = option_value(argc, argv, &i, "--symbols", &v)) != 0) {
			if (r < 0)
				goto missing;
			o.symbol_dirs = xrealloc(o.symbol_dirs, (o.nsymbol_dirs + 1) * sizeof(char *));
			o.symbol_dirs[o.nsymbol_dirs++] = (char *)v;
		} else if ((r = option_value(argc, argv, &i, "--baseline", &v)) != 0) {
			if (r < 0)
				goto missing;
			if (load_baseline(v, &o))
				goto out;
		} else if ((r = option_value(argc, argv, &i, "--suppressions", &v)) != 0) {
			if (r < 0)
				goto missing;
			if (load_suppressions("report", v))
				goto out;
			o.use_suppressions = 1;
		} else if (!strcmp(argv[i], "--")) {
			while (++i < argc)
				paths[npaths++] = argv[i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "lockdep-rcu report: unknown option %s; try 'lockdep-rcu report --help'\n", argv[i]);
			goto out;
		} else {
			paths[npaths++] = argv[i];
		}
		continue;
missing:
		fprintf(stderr, "lockdep-rcu report: %s needs a value\n", argv[i]);
		goto out;
	}
	if (!npaths) {
		fprintf(stderr, "lockdep-rcu report: no log or directory given\n");
		usage(stderr);
		goto out;
	}
	/* A path that cannot be read is a usage error: said before reading
	 * any, and no report of part of the input. */
	const char *why;
	for (size_t i = 0; i < npaths; i++)
		if (collect_check_path(paths[i], &why) < 0) {
			fprintf(stderr, "lockdep-rcu report: %s: cannot read: %s\n", paths[i], why);
			goto out;
		}
	struct collection c;
	collection_init(&c);
	for (size_t i = 0; i < npaths; i++)
		if (collect_path(&c, paths[i], &why) < 0) {
			fprintf(stderr, "lockdep-rcu report: %s: cannot read: %s\n", paths[i], why);
			collection_free(&c);
			goto out;
		}
	collection_finish(&c, &o);
	status = print_report("report", &c, json);
	if (!c.logs && !c.nruns) {
		/* Nothing that the tracer wrote: a wrong path is no clean run. */
		fprintf(stderr, "lockdep-rcu report: no lockdep-rcu log or run among the inputs\n");
		status = EXIT_USAGE;
	}
	collection_free(&c);
out:
	for (size_t i = 0; i < o.nbaseline; i++)
		free(o.baseline[i]);
	free(o.baseline);
	free(o.symbol_dirs);
	free(paths);
	return status;
}
