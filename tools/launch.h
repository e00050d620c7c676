/* Starting a program under the tracer: finding liblockdep-rcu.so, finding
 * the program as execvp() would, refusing programs the preload cannot enter
 * (statically linked, another ELF class or machine), composing LD_PRELOAD
 * and LOCKDEP_RCU_OPTIONS, and fork/exec with a clear error when exec fails. */
#ifndef LOCKDEP_RCU_LAUNCH_H
#define LOCKDEP_RCU_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>
#include "util.h"

/* The tracer: $LOCKDEP_RCU_PRELOAD if set, else next to this command
 * (build/ in the source tree), else PREFIX/lib/lockdep-rcu. Returns a new
 * absolute path, or NULL with a one-line message in err. */
char *find_tracer(struct strbuf *err);

/* Resolves name like execvp() (PATH when it has no '/'). Returns a new
 * absolute path, or NULL with a message in err and *status set to 127 (not
 * found) or 126 (found, not executable). */
char *resolve_program(const char *name, struct strbuf *err, int *status);

/* Checks that the tracer can be preloaded into the program: an ELF with a
 * dynamic loader (PT_INTERP), of the tracer's class and machine. Scripts
 * are checked through their "#!" interpreter. 0, or -1 with a message. */
int check_preloadable(const char *program, const char *tracer, struct strbuf *err);

/* Non-zero when the program is setuid/setgid for this user: the dynamic
 * loader then ignores LD_PRELOAD (a warning, not an error: root is exempt). */
int is_secure_exec(const char *program);

/* "tracer" or "tracer:old" (the tracer is not added twice). */
char *compose_preload(const char *tracer, const char *old);

/* Appends "k=v" to a ':'-separated option string. */
void options_append(struct strbuf *options, const char *kv);
/* key=value, the value quoted when it holds a separator. */
void options_append_value(struct strbuf *options, const char *key, const char *value);
/* The exitcode the tracer will use with these options (the last valid
 * exitcode=, else the default 66), as the tracer parses them. */
int options_exitcode(const char *options);
/* Whether the last `key` in options has a value that is not empty. */
int options_set(const char *options, const char *key);
/* A run killed after `timeout` seconds: the tracer's hang timeouts
 * (hung_task_timeout, stall_timeout) set below it, so its log explains the
 * hang before the kill; a value the user gave stays. */
void options_hang_timeouts(struct strbuf *options, double timeout);

struct spawn {
	char *const *argv;        /* argv[0] as the program sees it */
	const char *path;         /* the file to execute */
	const char *preload;      /* LD_PRELOAD value */
	const char *options;      /* LOCKDEP_RCU_OPTIONS value, or NULL to leave it */
	int out_fd, err_fd;       /* -1: inherit */
	int null_stdin;
	int new_process_group;    /* so a timeout can kill the program and its children */
};

/* Starts the program. Returns its pid, or -1 with a message in err when
 * fork or exec failed (exec errors come back through a close-on-exec pipe). */
pid_t spawn_program(const struct spawn *s, struct strbuf *err);

/* The tracer's options as `run --option` and `stress --option` pass them on,
 * checked against the tracer's own table (preload/base/options.h, included, not
 * copied): the command and the tracer cannot disagree on which options
 * exist and what type their values have. */
/* Checks "KEY=VALUE" (or several, split by ':' as in LOCKDEP_RCU_OPTIONS):
 * each KEY must be a tracer option, an integer option's VALUE an integer
 * as the tracer parses it, a string option's VALUE short enough for its
 * buffer. 0, or -1 with one line (no newline) in err. Ranges (max_frames
 * 1-128, ...) are left to the tracer, which names a bad value and keeps
 * the default. */
int tracer_options_check(const char *options, struct strbuf *err);

#endif
