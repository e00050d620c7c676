/* Where reports go: stderr, or log_path (with %p for the pid). The
 * descriptor of the log is the tracer's own and is treated as borrowed
 * from a host that may do anything with descriptors:
 *  - opened O_CLOEXEC and moved to a high number (F_DUPFD_CLOEXEC), so it
 *    never takes a number the program's next open() would get, and no
 *    system() child inherits it;
 *  - checked before each use (fstat: same device and inode as opened) and
 *    reopened when the program closed it or reused its number; a number
 *    that is no longer ours is never written to or closed;
 *  - created at the first report, so quiet processes leave no files
 *    behind; but created before the process changes its credentials or
 *    its root (the set*id() and chroot() wrappers call
 *    log_output_prepare()), since afterwards it may no longer be allowed
 *    to; a process that still cannot create it (a forked child) writes
 *    into its parent's log and says so;
 *  - a %p log still empty when the process exits is removed. */
#ifndef LOCKDEP_RCU_LOG_OUTPUT_H
#define LOCKDEP_RCU_LOG_OUTPUT_H
#include <stddef.h>

/* Opens log_path now, if set and not open yet: the process is about to
 * change its credentials (to new_uid/new_gid; -1: unchanged) or chroot. A
 * log made here goes to the new owner, who may then remove it if it stays
 * empty. */
void log_output_prepare(int new_uid, int new_gid);
/* Opens log_path and its records now, if set and not open yet: the
 * process is about to enter a seccomp sandbox, where no file is opened
 * (sandbox.h). Quiet, it leaves the empty log behind. */
void log_output_open_now(void);
/* Notes what descriptor 2 is when the tracer starts (its constructor):
 * reports go there only while it is still that, or what a program puts
 * there to keep its stderr. */
void log_output_note_stderr(void);
/* Writes one buffer with one write(2) when it fits (reports of racing
 * processes never interleave), looping on short writes and EINTR; errno
 * is preserved. */
void log_output_write(const char *buf, size_t len);
/* A file named in LOCKDEP_RCU_OPTIONS (suppressions, class rules) cannot
 * be read: the program would run checked otherwise than asked (nothing
 * suppressed), so it stops at once, as ThreadSanitizer does:
 * "lockdep-rcu: ERROR: cannot read the <what> file of LOCKDEP_RCU_OPTIONS:
 * <why>; stopping", and the status of exitcode (1 when that is 0). */
void log_output_die_unreadable(const char *what, const char *why) __attribute__((noreturn));
/* One line, printed once per title, when a bounded table is full:
 * "lockdep-rcu: BUG: <title> <detail>; the program keeps running". */
void log_output_limit_once(const char *title, const char *detail);
/* A report's record (report_record.h) to records_path when it is set (a
 * file of its own, %p expanded, made at the first record), else to
 * `<log>.jsonl` when reports go to a log file; nothing otherwise. */
void log_output_write_record(const char *buf, size_t len);
/* The path reports of this process go to ("" for stderr). */
const char *log_output_path(void);
/* fork: the child's %p log is its own, made at its first report. */
void log_output_fork_child(void);
/* Exit (and _exit): remove this process's %p log if it stayed empty. */
void log_output_close_at_exit(void);
#endif
