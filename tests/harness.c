/* fork/exec with pipes and a deadline: deadlock tests leave their target
 * hanging on purpose, and the report printed before the hang is the result. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "harness.h"

const char *const all_flavors[] = { "memb", "mb", "signal", "qsbr", "bp", NULL };
const char *const registering_flavors[] = { "memb", "mb", "signal", "qsbr", NULL };

const char *build_path(const char *relative)
{
	static __thread char path[4096];
	const char *dir = getenv("LOCKDEP_RCU_BUILD");
	snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "build", relative);
	return path;
}

struct buffer {
	char *data;
	size_t len, cap;
};

static void buffer_add(struct buffer *b, const char *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->data = realloc(b->data, b->cap);
		if (!b->data)
			abort();
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void child_exec(char *const argv[], const struct run_options *o, int out, int err)
{
	dup2(out, 1);
	dup2(err, 2);
	setpgid(0, 0);
	if (o->preload) {
		char preload[4096];
		const char *so = build_path("liblockdep-rcu.so");
		if (so[0] == '/')
			snprintf(preload, sizeof(preload), "%s", so);
		else if (!getcwd(preload, sizeof(preload) - strlen(so) - 2))
			_exit(127);
		else
			snprintf(preload + strlen(preload), sizeof(preload) - strlen(preload), "/%s", so);
		setenv("LD_PRELOAD", preload, 1);
	} else {
		unsetenv("LD_PRELOAD");
	}
	if (o->log_path) {
		char options[8192];
		snprintf(options, sizeof(options), "log_path=%s%s%s", o->log_path, o->options ? ":" : "",
			 o->options ? o->options : "");
		setenv("LOCKDEP_RCU_OPTIONS", options, 1);
	} else if (o->options)
		setenv("LOCKDEP_RCU_OPTIONS", o->options, 1);
	else
		unsetenv("LOCKDEP_RCU_OPTIONS");
	execv(argv[0], argv);
	dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

struct run run_program(char *const argv[], const struct run_options *o)
{
	struct run r = { 0 };
	struct buffer out = { 0 }, err = { 0 };
	buffer_add(&out, "", 0);
	buffer_add(&err, "", 0);
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
		abort();
	pid_t pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0)
		child_exec(argv, o, po[1], pe[1]);
	close(po[1]);
	close(pe[1]);
	double deadline = now() + (o->timeout > 0 ? o->timeout : 20);
	struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
	int open_fds = 2;
	while (open_fds > 0) {
		double left = deadline - now();
		if (left <= 0) {
			r.timed_out = 1;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			deadline = now() + 5;   /* drain what was written before the kill */
		}
		int n = poll(fds, 2, left > 0 ? (int)(left * 1000) + 1 : 100);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char buf[8192];
			ssize_t got = read(fds[i].fd, buf, sizeof(buf));
			if (got > 0) {
				buffer_add(i == 0 ? &out : &err, buf, (size_t)got);
			} else if (got == 0 || errno != EINTR) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
		if (r.timed_out && left <= -5)
			break;
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	kill(-pid, SIGKILL);   /* leftovers of a killed process group */
	if (WIFEXITED(status)) {
		r.exit_code = WEXITSTATUS(status);
	} else {
		r.exit_code = -1;
		r.signal = WTERMSIG(status);
	}
	r.out = out.data;
	r.err = err.data;
	return r;
}

struct run run_target(const char *target, const char *flavor, const char *scenario,
		      const struct run_options *o)
{
	char rel[512];
	snprintf(rel, sizeof(rel), "targets/%s.%s", target, flavor);
	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path(rel));
	char *argv[] = { path, (char *)scenario, NULL };
	return run_program(argv, o);
}

void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

int count_of(const char *haystack, const char *needle)
{
	int n = 0;
	size_t len = strlen(needle);
	for (const char *p = haystack; (p = strstr(p, needle)); p += len)
		n++;
	return n;
}

int splat_count(const char *log)
{
	/* Every report opens with a blank line and a rule of '=' */
	return count_of(log, "\n====");
}

int target_site_line(const struct run *r, int n)
{
	const char *p = r->out;
	int line = -1;
	for (int i = 0; i < n; i++) {
		p = strstr(p, "site ");
		if (!p || sscanf(p, "site %d", &line) != 1)
			return -1;
		p += 5;
	}
	return line;
}

int has_site_message(const struct run *r, const char *file, const char *message)
{
	char expected[1024];
	snprintf(expected, sizeof(expected), "%s:%d %s!", file, target_site_line(r, 1), message);
	return strstr(r->err, expected) != NULL;
}
