/* The tracer never breaks the process it is in (tests/targets/reliability.c
 * and tests/targets/plugins/): small stacks, signal handlers, fork, plugins,
 * descriptors, privilege drops, the exit sequence, perturb. Correct
 * programs must run exactly as without the preload; buggy ones must get
 * their reports whole. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "harness.h"

#define BAD_UNLOCK "WARNING: bad unlock balance detected!"

static struct run reliability(const char *scenario, const char *options, double timeout)
{
	struct run_options o = { .preload = 1, .options = options, .timeout = timeout };
	return run_target("reliability", "memb", scenario, &o);
}

static struct run reliability_plain(const char *scenario)
{
	struct run_options o = { .preload = 0, .timeout = 30 };
	return run_target("reliability", "memb", scenario, &o);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 20;
	char *buf = calloc(1, cap);
	size_t n = fread(buf, 1, cap - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* A whole report: from its title to the last frame of its Call Trace. */
static void expect_whole_bad_unlock(const char *log, const char *what)
{
	cr_expect(strstr(log, BAD_UNLOCK), "[%s] no report:\n%s", what, log);
	cr_expect(strstr(log, "but there are no more locks to release!"), "[%s]\n%s", what, log);
	cr_expect(strstr(log, "Call Trace:\n"), "[%s]\n%s", what, log);
	cr_expect(strstr(log, "report_on_small_stack") || strstr(log, "unlock_unheld"),
		  "[%s] the frames are not named:\n%s", what, log);
}

/* ---- stacks ---------------------------------------------------------------- */

Test(reliability, report_from_a_16k_thread_stack)
{
	struct run r = reliability("stack-16k", NULL, 20);
	cr_expect_eq(r.signal, 0, "killed by signal %d:\n%s", r.signal, r.err);
	expect_whole_bad_unlock(r.err, "16 KiB");
	cr_expect(strstr(r.out, "thread continued after the report\njoined\n"), "%s", r.out);
	cr_expect_eq(r.exit_code, 66, "exit status %d, expected %d:\n%s%s", r.exit_code, 66, r.out, r.err);
	run_free(&r);
}

Test(reliability, report_from_a_64k_thread_stack)
{
	struct run r = reliability("stack-64k", NULL, 20);
	cr_expect_eq(r.signal, 0, "killed by signal %d:\n%s", r.signal, r.err);
	expect_whole_bad_unlock(r.err, "64 KiB");
	cr_expect(strstr(r.out, "joined\n"), "%s", r.out);
	run_free(&r);
}

/* ---- signals --------------------------------------------------------------- */

Test(reliability, signal_handler_reader_while_main_releases_out_of_order)
{
	struct run r = reliability("signal-reader-during-unlocks", NULL, 30);
	cr_expect_str_empty(r.err, "false reports:\n%s", r.err);
	cr_expect(strstr(r.out, "handler ran often"), "%s", r.out);
	cr_expect_eq(r.exit_code, 0, "exit status %d, expected %d:\n%s%s", r.exit_code, 0, r.out, r.err);
	run_free(&r);
}

Test(reliability, signal_handler_new_lock_while_main_creates_classes)
{
	struct run r = reliability("signal-new-class-during-class-creation", NULL, 30);
	cr_expect_not(r.timed_out, "hung:\n%s", r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect(strstr(r.out, "handler ran often"), "%s", r.out);
	cr_expect_eq(r.exit_code, 0, "exit status %d, expected %d:\n%s%s", r.exit_code, 0, r.out, r.err);
	run_free(&r);
}

/* ---- fork ------------------------------------------------------------------ */

Test(reliability, fork_while_another_thread_validates)
{
	struct run r = reliability("fork-while-validating", NULL, 60);
	cr_expect_not(r.timed_out);
	cr_expect(strstr(r.out, "children: 0 hung, 0 failed"), "%s\n%s", r.out, r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect_eq(r.exit_code, 0, "exit status %d, expected %d:\n%s%s", r.exit_code, 0, r.out, r.err);
	run_free(&r);
}

Test(reliability, vfork_fork_system_popen_posix_spawn_daemon_all_work)
{
	struct run r = reliability("process-creation-while-validating", NULL, 60);
	cr_expect_not(r.timed_out, "hung:\n%s", r.out);
	cr_expect(strstr(r.out, "101 of 101 children right"), "%s\n%s", r.out, r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect_eq(r.exit_code, 0, "exit status %d, expected %d:\n%s%s", r.exit_code, 0, r.out, r.err);
	run_free(&r);
}

Test(reliability, fork_in_a_signal_handler_during_a_report)
{
	struct run r = reliability("fork-in-handler-during-report", NULL, 60);
	cr_expect_not(r.timed_out, "hung:\n%s", r.out);
	cr_expect(strstr(r.out, "forks done, 0 hung"), "%s\n%s", r.out, r.err);
	cr_expect_eq(count_of(r.err, BAD_UNLOCK), 16, "%s", r.err);
	run_free(&r);
}

Test(reliability, clean_child_of_a_reporting_parent_keeps_its_status)
{
	struct run r = reliability("clean-child-of-reporting-parent", NULL, 20);
	cr_expect(strstr(r.out, "child status 7\n"), "%s\n%s", r.out, r.err);
	cr_expect_eq(count_of(r.err, "SUMMARY: lockdep-rcu"), 1, "only the parent sums up:\n%s", r.err);
	cr_expect_eq(count_of(r.err, BAD_UNLOCK), 1, "%s", r.err);
	cr_expect_eq(r.exit_code, 66, "exit status %d, expected %d:\n%s%s", r.exit_code, 66, r.out, r.err);
	run_free(&r);
}

/* The loader calls free() itself, also from inside a failing dlsym(): the
 * real free() must be found without dlsym() (it clobbered the loader's
 * error state and corrupted the heap: seen with tcache off). */
Test(reliability, free_called_by_the_loader_inside_a_failing_dlsym)
{
	char *argv[] = { "/bin/ls", "/", NULL };
	setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0", 1);
	struct run_options o = { .preload = 1, .timeout = 20 };
	struct run r = run_program(argv, &o);
	unsetenv("GLIBC_TUNABLES");
	cr_expect_eq(r.signal, 0, "killed by signal %d:\n%s", r.signal, r.err);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "usr\n"), "%s", r.out);
	run_free(&r);
}

/* ---- plugins --------------------------------------------------------------- */

Test(reliability, plugin_linking_liburcu_in_its_own_scope)
{
	char plugin[4096];
	snprintf(plugin, sizeof(plugin), "%s", build_path("targets/liburcu_plugin.so"));
	char host[4096];
	snprintf(host, sizeof(host), "%s", build_path("targets/plugin_host"));
	char *argv[] = { host, plugin, NULL };
	struct run_options o = { .preload = 1, .timeout = 20 };
	struct run r = run_program(argv, &o);
	cr_expect_eq(r.signal, 0, "killed by %d:\n%s", r.signal, r.err);
	cr_expect(strstr(r.out, "plugin returned 42\n"), "%s\n%s", r.out, r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect_eq(r.exit_code, 0, "exit status %d, expected %d:\n%s%s", r.exit_code, 0, r.out, r.err);
	run_free(&r);
}

/* A plugin loaded with RTLD_DEEPBIND binds its references in its own scope
 * first: libc's pthread functions before the preload's. Its lock calls are
 * seen all the same: a lock taken by the host and released in the plugin
 * is released (no "still has locks held", no false order from a lock
 * thought held), and the plugin's order against the host's is validated. */
static struct run deepbind_host(const char *scenario)
{
	char plugin[4096], host[4096];
	snprintf(plugin, sizeof(plugin), "%s", build_path("targets/libdeepbind_plugin.so"));
	snprintf(host, sizeof(host), "%s", build_path("targets/deepbind_host"));
	char *argv[] = { host, plugin, (char *)scenario, NULL };
	struct run_options o = { .preload = 1, .timeout = 20 };
	return run_program(argv, &o);
}

Test(reliability, a_plugin_loaded_with_deepbind_is_seen_as_its_host)
{
	struct run r = deepbind_host("ok");
	cr_expect_str_eq(r.out, "done\n", "%s", r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	run_free(&r);
	r = deepbind_host("abba");
	cr_expect_str_eq(r.out, "done\n", "%s", r.err);
	cr_expect_eq(count_of(r.err, "WARNING: possible circular locking dependency detected"), 1, "%s", r.err);
	cr_expect(strstr(r.err, "plugin_lock_in_reverse+0x"), "the plugin's acquisition\n%s", r.err);
	cr_expect_eq(r.exit_code, 66, "%s", r.err);
	run_free(&r);
}

/* dlopen() is interposed for RTLD_DEEPBIND only: any other call reaches
 * glibc with the program as its caller, whose RUNPATH finds a bare name. */
Test(reliability, dlopen_still_searches_the_callers_runpath)
{
	char host[4096];
	snprintf(host, sizeof(host), "%s", build_path("targets/deepbind_host"));
	char *argv[] = { host, "libdeepbind_plugin.so", "runpath", NULL };
	struct run_options plain = { .timeout = 20 }, preloaded = { .preload = 1, .timeout = 20 };
	struct run p = run_program(argv, &plain);
	cr_assert_str_eq(p.out, "found\ndone\n", "the plain run: %s", p.err);
	struct run r = run_program(argv, &preloaded);
	cr_expect_str_eq(r.out, p.out, "%s", r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	run_free(&p);
	run_free(&r);
}

/* ---- descriptors ----------------------------------------------------------- */

Test(reliability, first_open_gets_the_same_descriptor)
{
	struct run plain = reliability_plain("descriptors-first-open");
	struct run r = reliability("descriptors-first-open", NULL, 20);
	cr_expect_str_eq(r.out, plain.out, "with the preload:\n%s\nwithout:\n%s", r.out, plain.out);
	cr_expect_eq(count_of(r.err, BAD_UNLOCK), 1, "%s", r.err);
	run_free(&r);
	run_free(&plain);
}

Test(reliability, host_linked_with_libunwind_keeps_its_descriptors)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path("targets/libunwind_host"));
	char *argv[] = { path, NULL };
	struct run_options o = { .preload = 1, .timeout = 20 };
	struct run r = run_program(argv, &o);
	cr_expect_str_eq(r.out, "first fd 3\nafter report 3\n", "%s", r.out);
	cr_expect_eq(count_of(r.err, BAD_UNLOCK), 1, "%s", r.err);
	run_free(&r);
}

Test(reliability, reports_leave_no_descriptor_behind)
{
	struct run plain = reliability_plain("descriptors-no-leak");
	struct run r = reliability("descriptors-no-leak", NULL, 20);
	cr_expect_str_eq(r.out, plain.out, "with the preload:\n%s\nwithout:\n%s", r.out, plain.out);
	run_free(&r);
	run_free(&plain);
}

Test(reliability, daemon_closing_every_descriptor_keeps_its_data_and_our_log)
{
	char dir[] = "/tmp/lockdep-rcu-fd.XXXXXX";
	cr_assert(mkdtemp(dir));
	char data[256], options[512], log[256];
	snprintf(data, sizeof(data), "%s/data", dir);
	snprintf(options, sizeof(options), "log_path=%s/lockdep-rcu.log", dir);
	snprintf(log, sizeof(log), "%s/lockdep-rcu.log", dir);
	setenv("DATA_FILE", data, 1);
	struct run r = reliability("descriptors-closefrom-daemon", options, 20);
	unsetenv("DATA_FILE");
	cr_expect(strstr(r.out, "holds 5 bytes: DATA\n"), "the program's data file was written into:\n%s", r.out);
	char *text = slurp(log);
	cr_expect(text && count_of(text, BAD_UNLOCK) == 2, "both reports in the log:\n%s\nstderr:\n%s",
		  text ? text : "(none)", r.err);
	free(text);
	run_free(&r);
	char rm[512];
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
	cr_expect_eq(system(rm), 0);
}

Test(reliability, log_reaches_log_path_after_a_privilege_drop)
{
	if (getuid() != 0) {
		cr_log_info("not root: privilege drop untestable");
		return;
	}
	char dir[] = "/tmp/lockdep-rcu-priv.XXXXXX";
	cr_assert(mkdtemp(dir));
	chmod(dir, 0700);   /* only root may create files here */
	char options[512], log[256];
	snprintf(options, sizeof(options), "log_path=%s/lockdep-rcu.%%p.log", dir);
	struct run r = reliability("privilege-drop", options, 20);
	cr_expect(strstr(r.out, "dropped and reported\n"), "%s", r.out);
	cr_expect_eq(count_of(r.err, BAD_UNLOCK), 0, "the report went to the program's stderr:\n%s", r.err);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "cat %s/*.log > %s.all 2>/dev/null", dir, dir);
	cr_expect_eq(system(cmd), 0);
	snprintf(log, sizeof(log), "%s.all", dir);
	char *text = slurp(log);
	cr_expect(text && count_of(text, BAD_UNLOCK) == 1, "%s", text ? text : "(no log)");
	free(text);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s.all'", dir, dir);
	cr_expect_eq(system(cmd), 0);
	run_free(&r);
}

/* set*id() to the identity the process has already changes nothing: no
 * log made for it, no directory kept open (netsniff-ng "drops" to root). */
Test(reliability, credentials_set_to_themselves_leave_no_descriptor)
{
	char dir[] = "/tmp/lockdep-rcu-creds.XXXXXX";
	cr_assert(mkdtemp(dir));
	char options[512];
	snprintf(options, sizeof(options), "log_path=%s/lockdep-rcu.%%p.log", dir);
	struct run p = reliability_plain("credentials-unchanged");
	struct run r = reliability("credentials-unchanged", options, 20);
	cr_assert(strstr(p.out, "descriptors "), "%s", p.err);
	cr_expect_str_eq(r.out, p.out, "%s", r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s')\" && rmdir '%s'", dir, dir);
	cr_expect_eq(system(cmd), 0, "a file left in %s", dir);
	run_free(&p);
	run_free(&r);
}

Test(reliability, no_empty_log_left_behind)
{
	char dir[] = "/tmp/lockdep-rcu-empty.XXXXXX";
	cr_assert(mkdtemp(dir));
	char options[512];
	snprintf(options, sizeof(options), "log_path=%s/lockdep-rcu.%%p.log", dir);
	struct run_options o = { .preload = 1, .options = options };
	struct run r = run_target("correct_program", "memb", "ok", &o);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s')\"", dir);
	cr_expect_eq(system(cmd), 0, "files left in %s", dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
	run_free(&r);
}

/* ---- exit ------------------------------------------------------------------ */

Test(reliability, exit_sequence_runs_whole_only_the_status_changes)
{
	struct run r = reliability("exit-sequence-kept", NULL, 20);
	cr_expect(strstr(r.out, "buffered output"), "%s", r.out);
	cr_expect(strstr(r.out, "atexit handler ran\n"), "%s", r.out);
	cr_expect_eq(r.exit_code, 66, "exit status %d, expected %d:\n%s%s", r.exit_code, 66, r.out, r.err);
	run_free(&r);

	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path("targets/exit_witness_main"));
	for (int explicit_exit = 0; explicit_exit < 2; explicit_exit++) {
		char *argv[] = { path, explicit_exit ? "exit" : NULL, NULL };
		struct run_options o = { .preload = 1, .timeout = 20 };
		r = run_program(argv, &o);
		cr_expect(strstr(r.out, "main returns\n") && strstr(r.out, "library destructor ran\n"),
			  "[%s] a later library's destructor did not run:\n%s",
			  explicit_exit ? "exit()" : "return", r.out);
		cr_expect_eq(count_of(r.err, BAD_UNLOCK), 1, "%s", r.err);
		cr_expect_eq(r.exit_code, 66, "exit status %d, expected %d:\n%s%s", r.exit_code, 66, r.out, r.err);
		run_free(&r);
	}
	/* exitcode=0 keeps the program's own status */
	char *argv[] = { path, "exit", NULL };
	struct run_options keep = { .preload = 1, .timeout = 20, .options = "exitcode=0" };
	r = run_program(argv, &keep);
	cr_expect_eq(r.exit_code, 5, "exit status %d, expected %d:\n%s%s", r.exit_code, 5, r.out, r.err);
	run_free(&r);
}

Test(reliability, reports_in_flight_at_exit_come_out_whole)
{
	struct run r = reliability("exit-while-reporting", NULL, 30);
	cr_expect_eq(count_of(r.err, BAD_UNLOCK), 16, "%s", r.err);
	cr_expect_eq(count_of(r.err, "Call Trace:\n"), 16, "%s", r.err);
	cr_expect(strstr(r.err, "SUMMARY: lockdep-rcu: 16 reports"), "%s", r.err);
	cr_expect_eq(r.exit_code, 66, "exit status %d, expected %d:\n%s%s", r.exit_code, 66, r.out, r.err);
	run_free(&r);
}

Test(reliability, report_raced_by_abort_comes_out)
{
	for (int i = 0; i < 5; i++) {
		struct run r = reliability("abort-after-report", NULL, 20);
		cr_expect_eq(r.signal, 6, "%d", r.signal);
		cr_expect_eq(count_of(r.err, BAD_UNLOCK), 1, "run %d lost the report:\n%s", i, r.err);
		cr_expect(strstr(r.err, "Call Trace:\n"), "%s", r.err);
		run_free(&r);
	}
}

/* ---- perturb ----------------------------------------------------------------- */

Test(reliability, perturb_adds_no_cancellation_point)
{
	struct run r = reliability("perturb-no-cancellation-point", "perturb=1:seed=7", 60);
	cr_expect(strstr(r.out, "mutex left locked 0 times"), "%s\n%s", r.out, r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	run_free(&r);
}

/* perturb's short sleeps are not stretched by the thread's timer slack
 * (mpd: 58 s of audio in 264 s instead of 0.12 s, its clients timing out;
 * here a 1 s slack made each sleep a second and the run outlast its
 * timeout), and the slack is the program's again after each. */
Test(reliability, perturb_sleeps_are_not_stretched_by_the_timer_slack, .timeout = 60)
{
	struct run r = reliability("perturb-timer-slack", "perturb=1:seed=3", 10);
	cr_expect_not(r.timed_out, "perturb's sleeps took the 1 s slack:\n%s", r.err);
	cr_expect_str_eq(r.out, "timer slack kept\n", "%s", r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	run_free(&r);
}

/* Reports without log_path go to descriptor 2, the program's. A program
 * started with stderr closed, or closing it, has its first open() take
 * that number for a data file: the report was written into the file. A
 * stderr that is a pipe nobody reads killed the program with SIGPIPE. */
Test(reliability, reports_never_land_in_what_the_program_put_at_fd_2)
{
	char dir[] = "/tmp/lockdep-rcu-fd2.XXXXXX";
	cr_assert(mkdtemp(dir));
	char data[256];
	snprintf(data, sizeof(data), "%s/data", dir);
	setenv("DATA_FILE", data, 1);
	struct run r = reliability("stderr-closed-then-data-file", NULL, 20);
	cr_expect_str_eq(r.out, "fd 2 holds 10 bytes: DATA\nMORE\n", "%s", r.err);
	cr_expect_eq(r.exit_code, 66, "exit %d, signal %d", r.exit_code, r.signal);
	run_free(&r);

	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "exec %s stderr-closed-at-start 2>&-", build_path("targets/reliability.memb"));
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct run_options o = { .preload = 1, .timeout = 20 };
	r = run_program(argv, &o);
	cr_expect_str_eq(r.out, "fd 2 holds 10 bytes: DATA\nMORE\n", "%s", r.err);
	run_free(&r);
	unsetenv("DATA_FILE");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);

	r = reliability("stderr-pipe-unread", NULL, 20);
	cr_expect_eq(r.signal, 0, "killed by signal %d", r.signal);
	cr_expect_str_eq(r.out, "survived the report\n");
	run_free(&r);
}

Test(reliability, a_robust_mutex_not_recoverable_answers_as_without_the_preload)
{
	struct run p = reliability_plain("robust-not-recoverable");
	struct run r = reliability("robust-not-recoverable", NULL, 10);
	static const char out[] = "lock 130, unlock 0, lock 131\nother thread: lock 131\nunlock 1\n";
	cr_assert_str_eq(p.out, out, "the plain run");
	cr_expect_eq(r.signal, 0, "signal %d, timed out %d\n%s", r.signal, r.timed_out, r.err);
	cr_expect_str_eq(r.out, out, "%s", r.err);
	/* the thread that died holding it, and the last unlock (EPERM) */
	cr_expect_eq(splat_count(r.err), 2, "%s", r.err);
	cr_expect(strstr(r.err, "still has locks held!"), "%s", r.err);
	cr_expect_eq(count_of(r.err, BAD_UNLOCK), 1, "%s", r.err);
	run_free(&p);
	run_free(&r);
}

Test(reliability, a_handler_on_a_small_alternate_stack_runs_as_without_the_preload)
{
	struct run r = reliability("altstack-4k-ok", NULL, 10);
	cr_expect_eq(r.exit_code, 0, "exit %d, signal %d\n%s", r.exit_code, r.signal, r.err);
	cr_expect_str_eq(r.out, "handler ran 2 times on 4096 bytes\n", "%s", r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	run_free(&r);
	/* An inversion to validate on 4 and 8 KiB: the checks and the
	 * signal-safety hook need ~4.7 KiB past the kernel's ~3 KiB frame (they
	 * ran into the stack's end with a 4 KiB threshold, and were skipped
	 * below 6 KiB): they run on the thread's check stack and find it, as
	 * with room on the alternate stack (16 KiB) */
	static const char *const abba[] = { "altstack-4k-abba", "altstack-8k-abba", "altstack-16k-abba" };
	static const char *const ran[] = { "handler ran 2 times on 4096 bytes\n", "handler ran 2 times on 8192 bytes\n",
					   "handler ran 2 times on 16384 bytes\n" };
	for (int i = 0; i < 3; i++) {
		r = reliability(abba[i], NULL, 10);
		cr_expect_eq(r.signal, 0, "%s: signal %d\n%s", abba[i], r.signal, r.err);
		cr_expect_str_eq(r.out, ran[i], "%s: %s", abba[i], r.err);
		cr_expect_eq(count_of(r.err, "WARNING: possible circular locking dependency detected"), 1, "%s: %s",
			     abba[i], r.err);
		run_free(&r);
	}
}

/* Locks taken on a 4 KiB stack the program made (a ucontext coroutine, a
 * stack switched to by the program's own instructions): the program runs
 * as without the preload, and the inversion taken there is reported whole
 * (a new order on a 4 KiB makecontext stack crashed in the unwinder). */
Test(reliability, locks_on_a_small_coroutine_stack_are_checked_without_running_off_it)
{
	static const char *const kinds[] = { "ucontext", "switched" };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char ok[64], abba[64];
		snprintf(ok, sizeof(ok), "%s-4k-ok", kinds[i]);
		snprintf(abba, sizeof(abba), "%s-4k-abba", kinds[i]);
		struct run plain = reliability_plain(abba);
		cr_assert_eq(plain.exit_code, 0, "%s plain: %s", abba, plain.err);

		struct run r = reliability(ok, NULL, 20);
		cr_expect_eq(r.signal, 0, "%s: signal %d\n%s", ok, r.signal, r.err);
		cr_expect_eq(r.exit_code, 0, "%s: exit %d\n%s", ok, r.exit_code, r.err);
		cr_expect_str_eq(r.out, plain.out, "%s", ok);
		cr_expect_str_empty(r.err, "%s: %s", ok, r.err);
		run_free(&r);

		r = reliability(abba, NULL, 20);
		cr_expect_eq(r.signal, 0, "%s: signal %d\n%s", abba, r.signal, r.err);
		cr_expect_str_eq(r.out, plain.out, "%s", abba);
		cr_expect_eq(count_of(r.err, "WARNING: possible circular locking dependency detected"), 1, "%s: %s",
			     abba, r.err);
		cr_expect(strstr(r.err, "coro_take_locks+0x"), "%s: the stack shows where:\n%s", abba, r.err);
		run_free(&r);
		run_free(&plain);
	}
}

/* Children of a raw clone() (no fork handlers) made while another thread
 * was inside the tracer, holding one of its locks: they hung in their
 * first lock call, waiting for a holder that does not exist in them. Now
 * they find it gone, stop tracing and run as without the preload. */
Test(reliability, raw_clone_children_do_not_wait_for_a_vanished_holder, .timeout = 120)
{
	struct run r = reliability("raw-clone-children", NULL, 100);
	cr_expect_eq(r.exit_code, 0, "exit %d, signal %d\n%s", r.exit_code, r.signal, r.err);
	cr_expect_str_eq(r.out, "children unfinished: 0 of 30\n", "%s", r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	run_free(&r);
}

/* A vfork() child's _exit() printed the parent's summary (and the parent's
 * own, with every report, never came). */
Test(reliability, a_vfork_child_prints_no_summary_of_its_parent)
{
	struct run r = reliability("vfork-child-after-report", NULL, 20);
	cr_expect_str_eq(r.out, "vfork child exited 127\n", "%s", r.err);
	cr_expect_eq(count_of(r.err, "SUMMARY: "), 1, "%s", r.err);
	cr_expect(strstr(r.err, "SUMMARY: lockdep-rcu: 2 reports: 2 bad unlock balance\n"), "%s", r.err);
	run_free(&r);
}

/* A file mapped MAP_SHARED by syscall(SYS_mmap), not mmap(): the tracer
 * did not know the mapping was shared and wrote class tags into mutexes
 * in it, so into the file. */
Test(reliability, no_class_tag_reaches_a_file_mapped_by_the_raw_system_call)
{
	char dir[] = "/tmp/lockdep-rcu-rawmap.XXXXXX";
	cr_assert(mkdtemp(dir));
	char data[256], cmd[512];
	snprintf(data, sizeof(data), "%s/data", dir);
	setenv("DATA_FILE", data, 1);
	struct run r = reliability("raw-mmap-shared-file", NULL, 20);
	unsetenv("DATA_FILE");
	cr_expect_str_eq(r.out, "4096 bytes read, 0 not zero\n", "%s", r.err);
	run_free(&r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_expect_eq(system(cmd), 0);
}

Test(reliability, a_small_stack_used_deep_runs_as_without_the_preload)
{
	struct run p = reliability_plain("stack-16k-used-deep");
	struct run r = reliability("stack-16k-used-deep", NULL, 30);
	static const char out[] = "5632 bytes deep, nesting 1: joined\n6144 bytes deep, nesting 0: joined\n";
	cr_assert_str_eq(p.out, out, "the plain run: exit %d, signal %d", p.exit_code, p.signal);
	cr_expect_eq(r.exit_code, 0, "exit %d, signal %d\n%s", r.exit_code, r.signal, r.err);
	cr_expect_str_eq(r.out, out, "%s", r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	run_free(&p);
	run_free(&r);
}

/* A deferred cancellation is acted on only at cancellation points, and no
 * lock call is one. The tracer's own open() (naming a new class from ELF
 * files) and write() (a report) inside the lock calls were: a thread with
 * a cancellation request pending was cancelled inside pthread_mutex_lock()
 * and left the mutex locked forever, or inside a report with the report
 * lock held (every later report then hung). */
Test(reliability, a_pending_cancellation_is_not_acted_on_inside_lock_calls)
{
	struct run r = reliability("cancel-pending-in-lock-calls", NULL, 30);
	cr_expect_eq(r.exit_code, 66, "exit %d, signal %d\n%s", r.exit_code, r.signal, r.err);
	cr_expect_str_eq(r.out,
			 "cancelled 1, got past 1, outer lock 0\n"
			 "cancelled 1, got past 1, outer lock 0\n"
			 "done\n", "%s", r.err);
	cr_expect_eq(count_of(r.err, BAD_UNLOCK), 2, "%s", r.err);
	cr_expect(!strstr(r.err, "not printed"), "%s", r.err);
	run_free(&r);
}

/* A program that sandboxes itself with seccomp: in SECCOMP_MODE_STRICT only
 * read, write, exit and sigreturn are allowed, and the tracer's first lock
 * dependency mapped its stack depot then: the process was killed
 * (SIGKILL) where the plain program prints "ok". The tracer now makes what
 * it would make lazily when the program enters the sandbox. The twin: in a
 * filter sandbox (through syscall(SYS_seccomp)) the checks still report. */
Test(reliability, a_program_in_a_seccomp_sandbox_runs_as_without_the_preload)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path("targets/sandboxed"));
	char *argv[] = { path, "strict-nested", NULL };
	struct run_options plain = { .preload = 0, .timeout = 10 }, traced = { .preload = 1, .timeout = 10 };
	struct run p = run_program(argv, &plain), t = run_program(argv, &traced);
	cr_assert_eq(p.exit_code, 0, "the plain run: exit %d, signal %d", p.exit_code, p.signal);
	cr_expect_eq(t.exit_code, 0, "exit %d, signal %d\n%s", t.exit_code, t.signal, t.err);
	cr_expect_str_eq(t.out, "ok\n");
	cr_expect_str_empty(t.err, "%s", t.err);
	run_free(&p);
	run_free(&t);

	argv[1] = "filter-abba";
	t = run_program(argv, &traced);
	cr_expect_str_eq(t.out, "ok\n", "%s", t.err);
	cr_expect_eq(splat_count(t.err), 1, "%s", t.err);
	cr_expect(strstr(t.err, "WARNING: possible circular locking dependency detected"), "%s", t.err);
	run_free(&t);
}

/* libseccomp's feature probes (QEMU makes them at start-up with no
 * sandbox wanted): a filter call with a NULL filter, an action query, the
 * prctl form. They enter no sandbox, so the tracer prepares nothing for
 * one: with log_path the process kept the log's directory, log and
 * records open from there on (3 descriptors more) and left an empty
 * records file behind. Now: the descriptors of the plain run, and no file
 * left by a run with nothing to report. */
Test(reliability, seccomp_feature_probes_are_not_a_sandbox)
{
	char dir[] = "/tmp/lockdep-rcu-probe.XXXXXX";
	cr_assert(mkdtemp(dir));
	char options[256], path[4096];
	snprintf(options, sizeof(options), "log_path=%s/probe.%%p.log", dir);
	snprintf(path, sizeof(path), "%s", build_path("targets/sandboxed"));
	char *argv[] = { path, "probe", NULL };
	struct run_options plain = { .preload = 0, .timeout = 10 };
	struct run_options traced = { .preload = 1, .options = options, .timeout = 10 };
	struct run p = run_program(argv, &plain), t = run_program(argv, &traced);
	cr_assert_eq(p.exit_code, 0, "plain: exit %d", p.exit_code);
	cr_expect_eq(t.exit_code, 0, "exit %d, signal %d\n%s", t.exit_code, t.signal, t.err);
	cr_expect_str_eq(t.out, p.out, "%s", t.err);
	DIR *d = opendir(dir);
	int left = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		left += e->d_name[0] != '.';
	if (d)
		closedir(d);
	cr_expect_eq(left, 0, "files left in %s", dir);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_expect_eq(system(cmd), 0);
	run_free(&p);
	run_free(&t);
}

/* A report due inside a seccomp sandbox: the tracer's report read the
 * thread's name (prctl), its ids (getpid, gettid), the clock, switched
 * stacks with swapcontext (sigprocmask), mapped memory for line tables and
 * opened its log: in SECCOMP_MODE_STRICT (SIGKILL) or under a filter
 * that kills at any call the plain program does not make (SIGSYS), the
 * program died at its first lock-order bug. Now a report inside makes no
 * call but write(): the program ends as it does plain, with the report on
 * stderr, or in log_path opened before the sandbox. */
static void expect_report_in_sandbox(const char *scenario, const char *options)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path("targets/sandboxed"));
	char *argv[] = { path, (char *)scenario, NULL };
	struct run_options plain = { .preload = 0, .timeout = 10 };
	struct run_options traced = { .preload = 1, .options = options, .timeout = 10 };
	struct run p = run_program(argv, &plain), t = run_program(argv, &traced);
	cr_assert_eq(p.exit_code, 0, "%s plain: exit %d, signal %d", scenario, p.exit_code, p.signal);
	cr_expect_eq(t.exit_code, 0, "%s: exit %d, signal %d\n%s", scenario, t.exit_code, t.signal, t.err);
	cr_expect_str_eq(t.out, "ok\n", "%s", scenario);
	if (!options) {
		cr_expect_eq(splat_count(t.err), 1, "%s:\n%s", scenario, t.err);
		cr_expect(strstr(t.err, "WARNING: possible circular locking dependency detected"), "%s", t.err);
		/* named from what was read before the sandbox */
		cr_expect(strstr(t.err, "Comm: sandboxed"), "%s", t.err);
		cr_expect(strstr(t.err, " nest+0x"), "%s", t.err);
	}
	run_free(&p);
	run_free(&t);
}

Test(reliability, a_report_inside_a_seccomp_sandbox_is_made_with_write_alone)
{
	expect_report_in_sandbox("strict-abba", NULL);
	expect_report_in_sandbox("tight-abba", NULL);
	/* made inside: a thread (its id not asked of the kernel, which its
	 * start asked) and a forked child */
	expect_report_in_sandbox("tight-thread", NULL);
	expect_report_in_sandbox("tight-fork", NULL);
	/* a wait announced inside: the watchdog thread is not started there */
	expect_report_in_sandbox("tight-wait", NULL);
	/* the tracer's tables grow inside (pages from a reserve) */
	expect_report_in_sandbox("strict-grow", NULL);
	/* perturb's yields and sleeps (seed 1 makes some in each) */
	expect_report_in_sandbox("strict-abba", "perturb=1:seed=1");
	expect_report_in_sandbox("tight-thread", "perturb=1:seed=1");
	/* lock_stat: its per-thread stamps mapped before, no clock in strict */
	expect_report_in_sandbox("strict-abba", "lock_stat=1");
	expect_report_in_sandbox("tight-thread", "lock_stat=1");

	char dir[] = "/tmp/lockdep-rcu-sandbox.XXXXXX";
	cr_assert(mkdtemp(dir));
	char options[512], log[512], records[512];
	snprintf(options, sizeof(options), "log_path=%s/lockdep-rcu.log", dir);
	snprintf(log, sizeof(log), "%s/lockdep-rcu.log", dir);
	snprintf(records, sizeof(records), "%s/lockdep-rcu.log.jsonl", dir);
	expect_report_in_sandbox("strict-abba", options);
	char *text = slurp(log), *json = slurp(records);
	cr_expect(text && splat_count(text) == 1 &&
		  strstr(text, "WARNING: possible circular locking dependency detected"),
		  "the log:\n%s", text ? text : "(none)");
	cr_expect(json && strstr(json, "\"kind\":\"circular_dependency\""), "%s", json ? json : "(no records)");
	free(text);
	free(json);
	char rm[600];
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
	cr_expect_eq(system(rm), 0);
}

/* The watchdog is the tracer's thread, not the program's: a call that
 * wants the process single-threaded (a user namespace) answers as without
 * the preload, and the watchdog comes back at the next wait. */
Test(reliability, calls_that_want_a_single_thread_answer_as_without_the_preload)
{
	static const char out[] = "unshare 0 (Success), grace period after\n";
	for (const char *const *s = (const char *const[]){ "userns-after-watchdog-call", "userns-after-watchdog-syscall",
							 NULL };
	     *s; s++) {
		struct run p = reliability_plain(*s);
		struct run r = reliability(*s, NULL, 20);
		/* A machine that forbids user namespaces (a container's seccomp
		 * profile: EPERM) cannot show the bug; the runs still agree. */
		if (strcmp(p.out, out))
			cr_log_warn("[%s] no user namespace here: %s", *s, p.out);
		cr_expect_eq(r.exit_code, 0, "[%s] exit %d, signal %d\n%s", *s, r.exit_code, r.signal, r.err);
		cr_expect_str_eq(r.out, p.out, "[%s]\n%s", *s, r.err);
		cr_expect_str_empty(r.err, "[%s]\n%s", *s, r.err);
		run_free(&p);
		run_free(&r);
	}
}

/* A program under a tight RLIMIT_AS: the tracer's tables are address
 * space taken from the program's budget. The stack depot reserved 64 MiB
 * or nothing (a report without any stack); it now takes what the limit
 * leaves it. */
Test(reliability, a_report_under_a_tight_address_space_limit_keeps_its_stacks)
{
	struct run p = reliability_plain("tight-address-space-abba");
	struct run r = reliability("tight-address-space-abba", NULL, 20);
	cr_assert_str_eq(p.out, "allocation ok\n", "the plain run\n%s", p.err);
	cr_expect_str_eq(r.out, p.out, "%s", r.err);
	cr_expect_eq(count_of(r.err, "WARNING: possible circular locking dependency detected"), 1, "%s", r.err);
	static const char entry[] = "\n-> #1 (limit_b){lock}:\n";
	const char *chain = strstr(r.err, entry);
	cr_expect(chain && !strncmp(chain + strlen(entry), "       tight_address_space_abba+0x", 34),
		  "the chain's stacks\n%s", r.err);
	run_free(&p);
	run_free(&r);
}
