/* lockdep-rcu: the command line. run preloads the tracer into a program,
 * report groups the splats of many logs into bugs, stress runs a program
 * many times to shake out rare interleavings, graph draws the lock
 * dependency graphs the tracer wrote. One file per subcommand
 * (cmd_*.c); the logic they share is in files of their own. */
#include <stdio.h>
#include <string.h>
#include "cli.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lockdep-rcu COMMAND [OPTIONS]\n"
		"\n"
		"The kernel's lockdep-RCU checks for pthread and liburcu programs.\n"
		"\n"
		"  run [-o DIR] [--option K=V]... -- PROGRAM [ARGS...]\n"
		"        run PROGRAM with the tracer preloaded\n"
		"  report [--json] [--no-symbolize] LOG-OR-DIR...\n"
		"        group the reports of many logs into bugs, most frequent first, and\n"
		"        show the most contended locks\n"
		"  stress [-n RUNS] [-j JOBS] [--timeout S] [--seed N] [--perturb] -- PROGRAM [ARGS...]\n"
		"        run PROGRAM many times and report on all the runs\n"
		"  graph [-o OUT.svg|OUT.dot] FILE...\n"
		"        merge the lock dependency graphs of processes and runs, draw them\n"
		"\n"
		"lockdep-rcu COMMAND --help describes each; --version prints the version.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return EXIT_CLEAN;
	}
	if (!strcmp(cmd, "--version")) {
		printf("lockdep-rcu %s\n", LOCKDEP_RCU_TOOL_VERSION);
		return EXIT_CLEAN;
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(cmd, "report"))
		return cmd_report(argc - 2, argv + 2);
	if (!strcmp(cmd, "stress"))
		return cmd_stress(argc - 2, argv + 2);
	if (!strcmp(cmd, "graph"))
		return cmd_graph(argc - 2, argv + 2);
	fprintf(stderr, "lockdep-rcu: unknown command '%s'; try 'lockdep-rcu --help'\n", cmd);
	return EXIT_USAGE;
}
