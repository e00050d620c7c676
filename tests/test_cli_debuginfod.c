/* lockdep-rcu report and debuginfod: a stripped program's frames are named,
 * function and file:line, from the debug file a debuginfod server has for
 * its build-id, when DEBUGINFOD_URLS names the server; never without it.
 *
 * The server is a real `debuginfod -F DIR` (Debian package debuginfod)
 * that the test starts on a free port and asks on 127.0.0.1. (elfutils
 * 0.188 has no option to listen on loopback alone; it serves, for the
 * seconds the test runs, the debug file of a test program.) */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "harness.h"
#include "cli_helpers.h"

/* What the test started, for the fini to stop and remove on every path. */
static pid_t server = -1;
static char *scratch;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void terminate_server(void)
{
	if (server > 0) {
		kill(server, SIGTERM);
		double give_up = now() + 30;
		int status;
		while (waitpid(server, &status, WNOHANG) == 0 && now() < give_up)
			usleep(20 * 1000);
		if (kill(server, 0) == 0) {
			kill(server, SIGKILL);
			waitpid(server, &status, 0);
		}
		server = -1;
	}
}

static void stop_server(void)
{
	terminate_server();
	if (scratch) {
		cli_remove_dir(scratch);
		scratch = NULL;
	}
}

static int in_path(const char *program)
{
	char *path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	int found = 0;
	for (char *dir = strtok(path, ":"); dir && !found; dir = strtok(NULL, ":")) {
		char candidate[4200];
		snprintf(candidate, sizeof(candidate), "%s/%s", dir, program);
		found = access(candidate, X_OK) == 0;
	}
	free(path);
	return found;
}

static int loopback_socket(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert(fd >= 0, "socket: %s", strerror(errno));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (port == 0) {
		cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0, "bind: %s", strerror(errno));
	} else if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A port nobody listens on now (another process may take it before the
 * server does: start_server() then tries another). */
static int free_port(void)
{
	int fd = loopback_socket(0);
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* The HTTP status of GET path on 127.0.0.1:port, -1 if nothing answered. */
static int http_status(int port, const char *path)
{
	int fd = loopback_socket(port);
	if (fd < 0)
		return -1;
	struct timeval limit = { .tv_sec = 10 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
	char request[512], reply[64] = { 0 };
	int len = snprintf(request, sizeof(request), "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n\r\n", path, port);
	int status = -1;
	if (write(fd, request, (size_t)len) == len && read(fd, reply, sizeof(reply) - 1) > 0)
		sscanf(reply, "HTTP/%*s %d", &status);
	close(fd);
	return status;
}

/* debuginfod indexing srv_dir, answering on port; 0 once it serves the
 * debug file of build_id, -1 if it exited first (its port taken). */
static int start_server(const char *srv_dir, int port, const char *build_id)
{
	char port_text[16], db[4200], log[4200];
	snprintf(port_text, sizeof(port_text), "%d", port);
	snprintf(db, sizeof(db), "%s/debuginfod-%d.sqlite", scratch, port);
	snprintf(log, sizeof(log), "%s/debuginfod.log", scratch);
	server = fork();
	cr_assert(server >= 0);
	if (server == 0) {
		int out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (out >= 0) {
			dup2(out, 1);
			dup2(out, 2);
		}
		/* one scanning thread, no rescans or grooming: a light load */
		execlp("debuginfod", "debuginfod", "-F", "-p", port_text, "-d", db, "-c", "1", "-t", "0", "-g", "0",
		       srv_dir, (char *)NULL);
		_exit(127);
	}
	char path[256];
	snprintf(path, sizeof(path), "/buildid/%s/debuginfo", build_id);
	/* scanning takes a moment, longer on a loaded machine */
	double give_up = now() + 120;
	while (now() < give_up) {
		int status;
		if (waitpid(server, &status, WNOHANG) == server) {
			server = -1;
			return -1;
		}
		if (http_status(port, path) == 200)
			return 0;
		usleep(100 * 1000);
	}
	char *text = cli_read(log);
	cr_assert_fail("debuginfod on port %d did not serve %s within 120 s; its log:\n%s", port, path,
		       text ? text : "(none)");
	return -1;
}

/* The GNU build-id readelf prints for path, in hex. */
static void build_id_of(const char *path, char *hex, size_t size)
{
	char cmd[4300], line[512];
	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", path);
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	hex[0] = 0;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, " Build ID: %127[0-9a-f]", hex) == 1)
			break;
	pclose(p);
	cr_assert(hex[0] && strlen(hex) < size, "no build-id in %s", path);
}

/* The group whose function is name, in report --json's output. */
static json_t *group_of(json_t *report, const char *name)
{
	size_t i;
	json_t *group;
	json_array_foreach(json_object_get(report, "groups"), i, group) {
		const char *function = json_string_value(json_object_get(group, "function"));
		if (function && !strcmp(function, name))
			return group;
	}
	return NULL;
}

/* A frame of function name anywhere in the report. */
static json_t *frame_of(json_t *report, const char *name)
{
	size_t i, k;
	json_t *group, *frame;
	json_array_foreach(json_object_get(report, "groups"), i, group) {
		json_array_foreach(json_object_get(group, "frames"), k, frame) {
			const char *function = json_string_value(json_object_get(frame, "function"));
			if (function && !strcmp(function, name))
				return frame;
		}
	}
	return NULL;
}

static int ends_with(const char *s, const char *suffix)
{
	return s && strlen(s) >= strlen(suffix) && !strcmp(s + strlen(s) - strlen(suffix), suffix);
}

Test(cli_debuginfod, stripped_program_is_symbolized_through_a_local_debuginfod, .fini = stop_server,
     .timeout = 400)
{
	if (!in_path("debuginfod"))
		cr_skip_test("debuginfod is not installed (Debian package debuginfod: tools/install-deps.sh test)");
	scratch = cli_temp_dir();
	/* the program built with -g, its debug information only on the
	 * server (as a -dbgsym package's), and a stripped copy that runs
	 * under a name no unstripped copy has */
	char *cmd;
	cr_assert(asprintf(&cmd,
			   "mkdir '%1$s/srv' '%1$s/run' && objcopy --only-keep-debug '%2$s' '%1$s/srv/demo.debug' && "
			   "strip -o '%1$s/run/demo' '%2$s'",
			   scratch, cli_target("demo_buggy_cache.memb")) > 0);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	free(cmd);
	char program[4200], logs[4200], srv[4200], cache[4200], build_id[128];
	snprintf(program, sizeof(program), "%s/run/demo", scratch);
	snprintf(logs, sizeof(logs), "%s/logs", scratch);
	snprintf(srv, sizeof(srv), "%s/srv", scratch);
	build_id_of(program, build_id, sizeof(build_id));

	struct run r = cli_env(0, NULL, "run", "-o", logs, "--", program, NULL);
	cr_assert_eq(r.exit_code, 66, "%s", r.err);
	run_free(&r);

	int port = -1;
	for (int attempt = 0; attempt < 5 && port < 0; attempt++) {
		int candidate = free_port();
		if (start_server(srv, candidate, build_id) == 0)
			port = candidate;
	}
	cr_assert(port > 0, "debuginfod did not start on any of 5 free ports");

	char urls[64], cache_path[4300];
	snprintf(urls, sizeof(urls), "DEBUGINFOD_URLS=http://127.0.0.1:%d", port);
	snprintf(cache, sizeof(cache), "%s/client-cache", scratch);
	snprintf(cache_path, sizeof(cache_path), "DEBUGINFOD_CACHE_PATH=%s", cache);

	/* without DEBUGINFOD_URLS no server is asked: the frames stay raw */
	const char *without[] = { "-u", "DEBUGINFOD_URLS", cache_path, NULL };
	r = cli_env(60, without, "report", "--json", logs, NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect_null(strstr(r.out, "route_stats"), "%s", r.out);
	cr_expect_null(strstr(r.out, "demo_buggy_cache.c"), "%s", r.out);
	cr_expect_null(strstr(r.err, "debuginfod"), "%s", r.err);
	run_free(&r);

	const char *with[] = { urls, cache_path, NULL };
	r = cli_env(180, with, "report", "--json", logs, NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect_null(strstr(r.err, "debuginfod"), "no note when the server had the file: %s", r.err);
	json_error_t error;
	json_t *report = json_loads(r.out, 0, &error);
	cr_assert(report, "not JSON (%s): %s", error.text, r.out);
	json_t *group = group_of(report, "route_stats");
	cr_assert(group, "no group names route_stats:\n%s", r.out);
	const char *file = json_string_value(json_object_get(group, "file"));
	cr_expect(ends_with(file, "tests/targets/demo_buggy_cache.c"), "file %s:\n%s", file, r.out);
	cr_expect_eq(json_integer_value(json_object_get(group, "line")), 19, "%s", r.out);
	json_t *main_frame = frame_of(report, "main");
	cr_assert(main_frame, "no frame names main:\n%s", r.out);
	const char *source = json_string_value(json_object_get(main_frame, "source"));
	cr_expect(source && strstr(source, "tests/targets/demo_buggy_cache.c:"), "main at %s:\n%s", source, r.out);
	cr_expect(json_is_true(json_object_get(main_frame, "symbolized_here")), "%s", r.out);
	cr_expect(group_of(report, "late_worker"), "%s", r.out);
	json_decref(report);
	run_free(&r);

	/* a server that has nothing (here: none on the port any more) leaves
	 * the frames raw, with a note, and the report is whole */
	terminate_server();
	snprintf(cache_path, sizeof(cache_path), "DEBUGINFOD_CACHE_PATH=%s/empty-cache", scratch);
	r = cli_env(180, with, "report", "--json", logs, NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect(strstr(r.err, "debuginfod has no debug information for ") && strstr(r.err, build_id),
		  "%s", r.err);
	cr_expect_null(strstr(r.out, "route_stats"), "%s", r.out);
	cr_expect(cli_json_valid(r.out), "%s", r.out);
	run_free(&r);
}
