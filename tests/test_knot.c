/* A real liburcu program: Debian's Knot DNS server (exported memb read side,
 * about one read_lock per query on registered worker threads) serving a
 * zone on loopback under the preload: every answer right and no report.
 * Its kzonecheck utility, on the other hand, enters read-side sections on a
 * thread that never registers: that must be reported. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "real_programs.h"

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = calloc(1, 1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

Test(knot, knotd_serves_correctly_and_silently_kzonecheck_is_reported, .timeout = 180)
{
	char workdir[] = "/tmp/lockdep-rcu-knot.XXXXXX";
	cr_assert(mkdtemp(workdir));
	char run_dir[4096], preload[4096], cwd[2048];
	cr_assert(getcwd(cwd, sizeof(cwd)));
	snprintf(run_dir, sizeof(run_dir), "%s/w", workdir);
	const char *so = build_path("liblockdep-rcu.so");
	snprintf(preload, sizeof(preload), "%s%s%s", so[0] == '/' ? "" : cwd, so[0] == '/' ? "" : "/", so);
	char *argv[] = { "/bin/bash", "tests/knot/run-knot.sh", "--preload", preload, "--queries", "2000",
			 run_dir, NULL };
	struct run_options o = { .preload = 0, .timeout = 150 };
	struct run r = run_program(argv, &o);
	if (r.exit_code == REAL_SKIPPED) {
		char why[512];
		snprintf(why, sizeof(why), "%s", r.err);
		run_free(&r);
		rmdir(workdir);
		fprintf(stderr, "[SKIP] %s", why);   /* said without --verbose too */
		cr_skip_test("%s", why);
	}

	cr_expect_eq(r.exit_code, 0, "run-knot.sh failed (%d):\n%s\n%s", r.exit_code, r.out, r.err);
	cr_expect(strstr(r.out, "result=pass"), "%s", r.out);
	cr_expect(strstr(r.out, "kdig_wrong=0\n"), "%s", r.out);
	cr_expect(strstr(r.out, "dnsperf_lost=0\n"), "%s", r.out);
	cr_expect(strstr(r.out, "knotd_exit=0\n"), "knotd must not get the tracer's exitcode:\n%s", r.out);

	char path[4200];
	snprintf(path, sizeof(path), "%s/knotd.stderr", run_dir);
	char *knotd_err = read_file(path);
	cr_expect(knotd_err && knotd_err[0] == 0, "knotd reported something:\n%s", knotd_err ? knotd_err : "(no file)");

	cr_expect(strstr(r.out, "kzonecheck_bad_exit=66\n"), "%s", r.out);
	snprintf(path, sizeof(path), "%s/kzonecheck-bad.stderr", run_dir);
	char *kz_err = read_file(path);
	cr_expect(kz_err && strstr(kz_err, "WARNING: suspicious RCU usage"), "%s", kz_err ? kz_err : "(no file)");
	cr_expect(kz_err && strstr(kz_err, "rcu_read_lock() by a thread that never called rcu_register_thread()"),
		  "%s", kz_err ? kz_err : "(no file)");
	cr_expect(kz_err && splat_count(kz_err) == 1, "%s", kz_err ? kz_err : "(no file)");

	free(knotd_err);
	free(kz_err);
	run_free(&r);
	char rm[4200];
	snprintf(rm, sizeof(rm), "rm -rf '%s'", workdir);
	if (system(rm) != 0)
		cr_log_warn("could not remove %s", workdir);
}
