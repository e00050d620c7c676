/* The log descriptor's life; see log_output.h for the rules. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "runtime/log_output.h"
#include "base/options.h"
#include "runtime/sandbox.h"
#include "runtime/thread_state.h"
#include "base/raw_syscall.h"

struct log_file {
	int fd;              /* -1: not open */
	dev_t dev;
	ino_t ino;
	char path[LOG_PATH_MAX + 32];
	/* Made ahead of a credentials change or chroot: its directory, to
	 * remove it by name after the process has a new root, and whether
	 * we created it (and may give it to the process's new owner). */
	int dir_fd;
	int created;
	const char *suffix;  /* appended to the expanded log_path */
	int per_process;     /* its path has %p */
};

static struct log_file current = { .fd = -1, .dir_fd = -1, .suffix = "" };
/* The reports' records (report_record.h): at records_path when it is set,
 * whether the reports go to a log or to stderr; else beside the log. */
static struct log_file records = { .fd = -1, .dir_fd = -1, .suffix = ".jsonl" };
/* A forked child's fallback: the log it inherited from its parent. */
static struct log_file inherited = { .fd = -1, .dir_fd = -1, .suffix = "" };
static int wrote_anything;

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

/* ---- stderr, borrowed -------------------------------------------------------
 * Reports without log_path go to descriptor 2, which is the program's: it
 * may have been closed when the process started (2>&-), so that the
 * program's first open() took it for a data file, or replaced since (a
 * daemon's accepted socket, a file opened after close(2)). Fd 2 is written
 * to only when it is the file it was when the tracer started, or has been
 * replaced by what a program puts there to keep its stderr: a file opened
 * for appending (a log), a pipe (a logger), a character device (a terminal,
 * /dev/null). A report that may not go there is not printed (the summary's
 * count still has it). A pipe nobody reads raises SIGPIPE, which the plain
 * program never got: blocked around the write, and consumed if the write
 * raised it. */
static int stderr_at_start;   /* 0: not looked at yet, 1: open, 2: closed */
static dev_t stderr_dev;
static ino_t stderr_ino;

void log_output_note_stderr(void)
{
	struct stat st;
	if (__atomic_load_n(&stderr_at_start, __ATOMIC_ACQUIRE))
		return;
	int open_now = fstat(2, &st) == 0;
	if (open_now) {
		stderr_dev = st.st_dev;
		stderr_ino = st.st_ino;
	}
	__atomic_store_n(&stderr_at_start, open_now ? 1 : 2, __ATOMIC_RELEASE);
}

/* 0: not to be written; else 1, or 2 when a write may raise SIGPIPE. */
static int stderr_writable(void)
{
	log_output_note_stderr();
	if (stderr_at_start == 2)
		return 0;
	if (in_sandbox())
		return 1;   /* no fstat inside (sandbox.h): as it was */
	struct stat st;
	if (fstat(2, &st))
		return 0;
	int may_pipe = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ? 2 : 1;
	if (st.st_dev == stderr_dev && st.st_ino == stderr_ino)
		return may_pipe;
	if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
		return may_pipe;
	int flags = fcntl(2, F_GETFL);
	return S_ISREG(st.st_mode) && flags >= 0 && (flags & O_APPEND) ? 1 : 0;
}

static void write_stderr(const char *buf, size_t len)
{
	int how = stderr_writable();
	if (!how)
		return;
	if (how == 1) {
		write_all(2, buf, len);
		return;
	}
	/* Raw calls: the tracer's own sigprocmask wrapper would forget the
	 * thread's cached mask for nothing. */
	uint64_t pipe_bit = 1ull << (SIGPIPE - 1), old = 0, pending = 0;
	raw_syscall(SYS_rt_sigpending, &pending, sizeof(pending));
	raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &pipe_bit, &old, sizeof(old));
	write_all(2, buf, len);
	if (!(pending & pipe_bit)) {
		struct timespec none = { 0, 0 };
		raw_syscall(SYS_rt_sigtimedwait, &pipe_bit, NULL, &none, sizeof(pipe_bit));
	}
	raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
}

/* Whether the records have a path of their own (records_path). */
static int records_apart(void)
{
	return tracer_options.records_path[0] != 0;
}

/* f's path: its option's value with %p expanded, and its suffix (records
 * beside the log: the log's path and ".jsonl"). */
static void expand_path(struct log_file *f)
{
	const char *path = tracer_options.log_path, *suffix = f->suffix;
	if (f == &records && records_apart()) {
		path = tracer_options.records_path;
		suffix = "";
	}
	size_t n = 0, size = sizeof(f->path);
	f->per_process = 0;
	for (const char *p = path; *p && n < size - 32; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			n += (size_t)snprintf(f->path + n, size - n, "%d", (int)getpid());
			p++;
			f->per_process = 1;
		} else {
			f->path[n++] = *p;
		}
	}
	snprintf(f->path + n, size - n, "%s", suffix);
}

/* A number far above what the program uses: the program's open() returns
 * the lowest free number, which must stay what it is without the tracer. */
static int move_high(int fd)
{
	struct rlimit lim;
	int floor = 1000;
	if (!getrlimit(RLIMIT_NOFILE, &lim) && lim.rlim_cur < 1200)
		floor = (int)(lim.rlim_cur * 3 / 4);
	if (fd >= floor)
		return fd;
	int high = fcntl(fd, F_DUPFD_CLOEXEC, floor);
	if (high < 0)
		return fd;
	close(fd);
	return high;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Opens by name, or through the directory kept from before a chroot(). */
static int open_named(const struct log_file *f, int flags, mode_t mode)
{
	if (f->dir_fd >= 0)
		return openat(f->dir_fd, base_name(f->path), flags, mode);
	return open(f->path, flags, mode);
}

static int open_log(struct log_file *f)
{
	expand_path(f);
	int fd = open_named(f, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY, 0);
	f->created = 0;
	if (fd < 0 && errno == ENOENT) {
		fd = open_named(f, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
		f->created = fd >= 0;
	}
	if (fd < 0)
		return -errno;
	fd = move_high(fd);
	struct stat st;
	if (fstat(fd, &st)) {
		close(fd);
		return -EBADF;
	}
	f->fd = fd;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	return 0;
}

/* Whether f's descriptor is still the file we opened. In a sandbox it is
 * not checked (fstat may be what kills the process): opened before it, at
 * a number far above the program's, it is taken as ours. */
static int still_ours(const struct log_file *f)
{
	struct stat st;
	if (in_sandbox())
		return f->fd >= 0;
	return f->fd >= 0 && !fstat(f->fd, &st) && st.st_dev == f->dev && st.st_ino == f->ino;
}

static void say(const char *fmt, const char *a, const char *b)
{
	char line[LOG_PATH_MAX * 2 + 160];
	int n = snprintf(line, sizeof(line), fmt, a, b);
	if (n > 0)
		write_stderr(line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* The directory of the log, kept open (O_PATH) to make or remove the log
 * by name from a process that chroot()ed since. */
static void keep_directory(struct log_file *f)
{
	if (f->dir_fd >= 0)
		return;
	expand_path(f);
	char dir[sizeof(f->path)];
	snprintf(dir, sizeof(dir), "%s", f->path);
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		f->dir_fd = move_high(fd);
}

/* Whether the process, as uid/gid (-1: as now), may still create files
 * in the log's directory. */
static int directory_writable_as(const struct log_file *f, int uid, int gid)
{
	struct stat st;
	if (f->dir_fd < 0 || fstatat(f->dir_fd, "", &st, AT_EMPTY_PATH))
		return 0;
	uid_t u = uid >= 0 ? (uid_t)uid : geteuid();
	gid_t g = gid >= 0 ? (gid_t)gid : getegid();
	if (u == 0)
		return 1;
	if (st.st_uid == u)
		return (st.st_mode & S_IWUSR) != 0;
	if (st.st_gid == g)
		return (st.st_mode & S_IWGRP) != 0;
	return (st.st_mode & S_IWOTH) != 0;
}

void log_output_prepare(int new_uid, int new_gid)
{
	options_init(log_output_write);
	int saved = errno;
	if (tracer_options.log_path[0]) {
		keep_directory(&current);
		/* Made now only if the process may not make it later: a quiet
		 * process then leaves no file behind in a directory it can write. */
		if (!still_ours(&current) && !directory_writable_as(&current, new_uid, new_gid)) {
			int err = open_log(&current);
			if (err)
				say("lockdep-rcu: cannot open log_path '%s': %s; reports go to stderr\n",
				    current.path, strerror(-err));
		}
		/* The process's new owner may then remove it if it stays empty (a
		 * sticky directory lets only a file's owner do that). */
		if (still_ours(&current) && current.created && (new_uid >= 0 || new_gid >= 0))
			(void)!fchown(current.fd, (uid_t)new_uid, (gid_t)new_gid);
	}
	if (records_apart()) {   /* the same for the records' own file */
		keep_directory(&records);
		if (!still_ours(&records) && !directory_writable_as(&records, new_uid, new_gid))
			(void)open_log(&records);
		if (still_ours(&records) && records.created && (new_uid >= 0 || new_gid >= 0))
			(void)!fchown(records.fd, (uid_t)new_uid, (gid_t)new_gid);
	}
	errno = saved;
}

/* The descriptor for the next write: ours, reopened if the program took it
 * away, the parent's log as a fallback, else stderr. */
static int log_fd(void)
{
	options_init(log_output_write);
	if (!tracer_options.log_path[0])
		return 2;
	if (still_ours(&current))
		return current.fd;
	if (in_sandbox())
		return 2;   /* not opened before it: no file is opened inside */
	current.fd = -1;   /* closed or reused by the program: not ours to close */
	int err = open_log(&current);
	if (!err)
		return current.fd;
	if (still_ours(&inherited)) {
		say("lockdep-rcu: cannot create log '%s' (%s); this process's reports go to its parent's log\n",
		    current.path, strerror(-err));
		current = inherited;
		return current.fd;
	}
	say("lockdep-rcu: cannot open log_path '%s': %s; reports go to stderr\n", current.path,
	    strerror(-err));
	tracer_options.log_path[0] = 0;
	return 2;
}

void log_output_open_now(void)
{
	options_init(log_output_write);
	if (in_sandbox())
		return;
	int saved = errno;
	if (tracer_options.log_path[0]) {
		keep_directory(&current);
		(void)log_fd();
	}
	if (records_apart()) {
		keep_directory(&records);
		if (!still_ours(&records)) {
			records.fd = -1;
			(void)open_log(&records);
		}
	} else if (tracer_options.log_path[0] && still_ours(&current)) {
		records.dir_fd = current.dir_fd;
		if (!still_ours(&records)) {
			records.fd = -1;
			(void)open_log(&records);
		}
	}
	errno = saved;
}

void log_output_write(const char *buf, size_t len)
{
	int saved = errno;
	int cancel = tracer_cancel_off();
	int fd = log_fd();
	if (fd == 2) {
		write_stderr(buf, len);
	} else {
		write_all(fd, buf, len);
		wrote_anything = 1;
	}
	tracer_cancel_restore(cancel);
	errno = saved;
}

/* Whether the records file is open, opening it if it can be (not in a
 * sandbox: no file is opened there). */
static int records_ready(void)
{
	if (still_ours(&records))
		return 1;
	if (in_sandbox())
		return 0;
	records.fd = -1;   /* closed or reused by the program: not ours to close */
	int err = open_log(&records);
	static int said;
	if (err && records_apart() && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		say("lockdep-rcu: cannot open records_path '%s': %s; no records are written\n", records.path,
		    strerror(-err));
	return !err;
}

void log_output_write_record(const char *buf, size_t len)
{
	int saved = errno;
	int cancel = tracer_cancel_off();
	options_init(log_output_write);
	if (records_apart()) {
		if (records_ready())
			write_all(records.fd, buf, len);
	} else if (tracer_options.log_path[0] && log_fd() != 2) {
		/* made beside the log, through the same directory after a chroot */
		records.dir_fd = current.dir_fd;
		if (records_ready())
			write_all(records.fd, buf, len);
	}
	tracer_cancel_restore(cancel);
	errno = saved;
}

const char *log_output_path(void)
{
	return tracer_options.log_path[0] ? current.path : "";
}

void log_output_fork_child(void)
{
	if (in_sandbox())
		return;   /* its own would be opened inside: the parent's */
	if (records_apart() && records.per_process) {
		records.fd = -1;   /* the child's own, made at its first report */
		records.dir_fd = -1;
		records.created = 0;
	}
	if (!current.per_process || current.fd < 0)
		return;   /* one shared log (or stderr): keep writing there */
	inherited = current;
	current.fd = -1;
	current.dir_fd = -1;
	current.created = 0;
	current.path[0] = 0;
	if (!records_apart())
		records.fd = -1;   /* the child's own, beside its own log */
	wrote_anything = 0;
}

/* Removes f if it is ours, per process, and empty; 1 when it did. */
static int remove_if_empty(struct log_file *f)
{
	struct stat st;
	if (!f->per_process || !still_ours(f) || fstat(f->fd, &st) || st.st_size != 0)
		return 0;
	if (f->dir_fd >= 0)
		unlinkat(f->dir_fd, base_name(f->path), 0);
	else
		unlink(f->path);
	return 1;
}

void log_output_close_at_exit(void)
{
	if (in_sandbox() || !process_is_ours())
		return;   /* no unlink inside: an empty log stays */
	/* records of their own are made ahead only for a sandbox or a change
	 * of owner or root: empty when nothing was reported */
	if (records_apart())
		remove_if_empty(&records);
	/* and the records beside the log, opened with it and as empty */
	if (!wrote_anything && remove_if_empty(&current) && !records_apart())
		remove_if_empty(&records);
}

void log_output_die_unreadable(const char *what, const char *why)
{
	char line[768];
	int n = snprintf(line, sizeof(line),
			 "lockdep-rcu: ERROR: cannot read the %s file of LOCKDEP_RCU_OPTIONS: %s; stopping, as the "
			 "program would run checked otherwise than asked\n",
			 what, why);
	log_output_write(line, n < 0 ? 0 : (size_t)n >= sizeof(line) ? sizeof(line) - 1 : (size_t)n);
	raw_exit_group(tracer_options.exitcode ? tracer_options.exitcode : 1);
}

void log_output_limit_once(const char *title, const char *detail)
{
	/* A handful of distinct limits: remember the titles already printed. */
	static const char *printed[16];
	for (unsigned i = 0; i < 16; i++) {
		const char *cur = __atomic_load_n(&printed[i], __ATOMIC_ACQUIRE);
		if (cur == title)
			return;
		if (!cur) {
			const char *expected = NULL;
			if (!__atomic_compare_exchange_n(&printed[i], &expected, title, 0,
							 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				if (expected == title)
					return;
				continue;
			}
			char line[320];
			int n = snprintf(line, sizeof(line), "lockdep-rcu: BUG: %s %s; the program keeps running\n",
					 title, detail);
			log_output_write(line, n > 0 ? (size_t)n : 0);
			return;
		}
	}
}
