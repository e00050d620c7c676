/* Reading one log file whole, in memory that does not grow with it: the
 * file is read a chunk at a time and scanned as it comes (text_log.h), so
 * a report is handled as soon as it has ended and only the text not
 * scanned yet is kept.
 *
 * Runs of NUL bytes are garbage, not a reason to drop the log: a process
 * that crashed leaves zeros where the file system had reserved blocks it
 * never wrote. Each run ends the text before it as the end of the file
 * would (a report it cuts is cut short), and the text after it is read
 * on. A file whose text (NUL bytes left out) looks binary is not read. */
#ifndef LOCKDEP_RCU_LOGFILE_H
#define LOCKDEP_RCU_LOGFILE_H

#include "text_log.h"

/* Read at a time. */
#define LOG_CHUNK_BYTES (1u << 20)
/* The longest report or line kept whole. The tracer builds each report in a
 * 64 KiB buffer: a "report" longer than this never ended (counted as cut
 * short), and a longer line outside reports (a program's own output) is
 * skipped. */
#define MAX_REPORT_BYTES (1u << 20)

/* Runs of garbage whose place is kept, for the note. */
#define MAX_GARBAGE_PLACES 3

struct garbage_place {
	unsigned long long offset, bytes;
};

struct log_file {
	struct log_scan scan;          /* what the text held */
	unsigned long long bytes;      /* read */
	int binary;                    /* not text (text_sample_is_binary), or NUL
					* bytes only: not scanned */
	unsigned long long garbage;    /* NUL bytes skipped */
	size_t garbage_runs;           /* runs of them */
	struct garbage_place places[MAX_GARBAGE_PLACES];   /* the first runs */
};

/* Opens a log for reading without ever blocking: anything but a regular
 * file is refused before it is opened (a FIFO with no writer would block,
 * /dev/zero never ends, opening a device can have effects). follow: 0
 * refuses a symbolic link too. Returns the descriptor, or -1 with *why
 * saying why ("a FIFO, not a regular file", or strerror(errno)). */
int log_file_open(const char *path, int follow, const char **why);

/* Reads the log open on fd from offset `from` to its end, passing its
 * reports and tracer lines to cb. 0, or -1 with errno set when a read
 * failed (*out then holds what was read before). */
int log_file_read(int fd, unsigned long long from, const struct log_callbacks *cb, void *ctx,
		  struct log_file *out);

#endif
