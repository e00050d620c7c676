/* The bench workloads (tests/bench/, built into build/bench/) keep working:
 * each runs once plain and once preloaded with a tiny iteration count,
 * exits 0, prints exactly its phase lines with the operations asked for,
 * and nothing on stderr (no tracer report: none of them has a bug). Never a
 * word about timing: make bench measures, this only keeps it runnable. */
#include <criterion/criterion.h>
#include <stdio.h>
#include "harness.h"

struct phase {
	const char *name;
	unsigned long ops;
};

/* Checks one run's stdout: the phases in order, one line each, with their
 * ops and a time, and nothing else. */
static void expect_phases(const char *what, const char *out, const struct phase *phases)
{
	const char *p = out;
	for (const struct phase *ph = phases; ph->name; ph++) {
		char name[64];
		unsigned long ops;
		double seconds, ns_per_op;
		int used = 0;
		int n = sscanf(p, "phase=%63s ops=%lu seconds=%lf ns_per_op=%lf\n%n", name, &ops, &seconds,
			       &ns_per_op, &used);
		cr_expect(n == 4 && used > 0, "%s: no phase line for %s in:\n%s", what, ph->name, out);
		if (n != 4 || used == 0)
			return;
		cr_expect_str_eq(name, ph->name, "%s: phase %s, expected %s", what, name, ph->name);
		cr_expect_eq(ops, ph->ops, "%s: %s ops %lu, expected %lu", what, ph->name, ops, ph->ops);
		cr_expect(seconds >= 0 && ns_per_op >= 0, "%s: %s", what, out);
		p += used;
	}
	cr_expect_str_empty(p, "%s: more output than the phase lines:\n%s", what, out);
}

/* argv for build/bench/<workload> args..., after the words of `prefix`
 * (NULL-terminated, or NULL); path is the buffer for the program's path. */
static void workload_argv(char **argv, size_t max, char *path, size_t path_size, const char *const prefix[],
			  const char *workload, const char *const args[])
{
	snprintf(path, path_size, "%s", build_path("bench/"));
	snprintf(path + strlen(path), path_size - strlen(path), "%s", workload);
	size_t n = 0;
	for (int i = 0; prefix && prefix[i] && n + 2 < max; i++)
		argv[n++] = (char *)prefix[i];
	argv[n++] = path;
	for (int i = 0; args[i] && n + 1 < max; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
}

static void smoke(const char *workload, const char *const args[], const struct phase *phases)
{
	char path[4096], *argv[8];
	workload_argv(argv, 8, path, sizeof(path), NULL, workload, args);

	for (int preload = 0; preload <= 1; preload++) {
		struct run_options o = { .preload = preload, .timeout = 20 };
		struct run r = run_program(argv, &o);
		char what[128];
		snprintf(what, sizeof(what), "%s %s", workload, preload ? "preloaded" : "plain");
		cr_expect_eq(r.exit_code, 0, "%s: exit %d, signal %d%s\n%s", what, r.exit_code, r.signal,
			     r.timed_out ? " (timed out)" : "", r.err);
		cr_expect_eq(splat_count(r.err), 0, "%s: the tracer reported:\n%s", what, r.err);
		cr_expect_str_empty(r.err, "%s: stderr:\n%s", what, r.err);
		expect_phases(what, r.out, phases);
		run_free(&r);
	}
}

Test(bench_smoke, lock_heavy)
{
	const char *const args[] = { "1000", NULL };
	const struct phase phases[] = { { "lock", 2000 }, { NULL, 0 } };
	smoke("lock_heavy", args, phases);
}

/* 100 grace periods: the updater's synchronize_rcu() path runs too. */
Test(bench_smoke, rcu_read_heavy)
{
	const char *const args[] = { "20000", "200", NULL };
	const struct phase phases[] = { { "read", 20000 }, { NULL, 0 } };
	smoke("rcu_read_heavy", args, phases);
}

Test(bench_smoke, many_locks)
{
	const char *const args[] = { "2000", "5000", NULL };
	const struct phase phases[] = { { "create", 5000 }, { "lock-2k", 4000 }, { "lock", 4000 }, { NULL, 0 } };
	smoke("many_locks", args, phases);
}

Test(bench_smoke, rwlock_read_mostly)
{
	const char *const args[] = { "10000", "100", NULL };
	const struct phase phases[] = { { "read", 40000 }, { NULL, 0 } };
	smoke("rwlock_read_mostly", args, phases);
}

/* 20 replacements: the updater's add_replace and call_rcu() run too. */
Test(bench_smoke, lfht_lookup)
{
	const char *const args[] = { "10000", "500", NULL };
	const struct phase phases[] = { { "lookup", 40000 }, { NULL, 0 } };
	smoke("lfht_lookup", args, phases);
}

Test(bench_smoke, free_cost)
{
	const char *const args[] = { "10000", NULL };
	const struct phase phases[] = { { "nolock", 20000 }, { "lock", 20000 }, { NULL, 0 } };
	smoke("free_cost", args, phases);
}

/* The child is waited for and must exit 0: a fork handler that hangs or
 * crashes the child fails here. */
Test(bench_smoke, fork_wait)
{
	const char *const args[] = { "5", NULL };
	const struct phase phases[] = { { "fork", 5 }, { NULL, 0 } };
	smoke("fork_wait", args, phases);
}

/* Preloaded, each /bin/true loads the tracer too: it must start and end
 * silently with status 0. */
Test(bench_smoke, spawn)
{
	const char *const args[] = { "3", NULL };
	const struct phase phases[] = { { "spawn", 3 }, { NULL, 0 } };
	smoke("spawn", args, phases);
}

/* make bench-floor's preload (tests/bench/floor_preload.c) in the tracer's
 * place: the two mutex workloads still run to the end under it, and it says
 * nothing. */
static void smoke_floor(const char *workload, const char *const args[], const struct phase *phases)
{
	char env_preload[4200], path[4096], *argv[10];
	snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s", build_path("bench/floor_preload.so"));
	const char *const prefix[] = { "/usr/bin/env", env_preload, NULL };
	workload_argv(argv, 10, path, sizeof(path), prefix, workload, args);
	struct run_options o = { .preload = 0, .timeout = 20 };
	struct run r = run_program(argv, &o);
	cr_expect_eq(r.exit_code, 0, "%s under the floor preload: exit %d, signal %d\n%s", workload, r.exit_code,
		     r.signal, r.err);
	cr_expect_str_empty(r.err, "%s under the floor preload: stderr:\n%s", workload, r.err);
	expect_phases(workload, r.out, phases);
	run_free(&r);
}

Test(bench_smoke, floor_preload)
{
	const char *const lock_heavy_args[] = { "1000", NULL };
	const struct phase lock_heavy_phases[] = { { "lock", 2000 }, { NULL, 0 } };
	smoke_floor("lock_heavy", lock_heavy_args, lock_heavy_phases);
	const char *const many_locks_args[] = { "2000", "5000", NULL };
	const struct phase many_locks_phases[] = { { "create", 5000 }, { "lock-2k", 4000 }, { "lock", 4000 }, { NULL, 0 } };
	smoke_floor("many_locks", many_locks_args, many_locks_phases);
}
