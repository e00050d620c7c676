#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "text_log.h"
#include "util.h"

static const char *not_regular(mode_t mode)
{
	static const struct { mode_t type; const char *why; } kinds[] = {
		{ S_IFDIR, "a directory, not a regular file" }, { S_IFIFO, "a FIFO, not a regular file" },
		{ S_IFCHR, "a character device, not a regular file" }, { S_IFBLK, "a block device, not a regular file" },
		{ S_IFSOCK, "a socket, not a regular file" }, { S_IFLNK, "a symbolic link, not followed" },
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if ((mode & S_IFMT) == kinds[i].type)
			return kinds[i].why;
	return "not a regular file";
}

int log_file_open(const char *path, int follow, const char **why)
{
	struct stat st;
	if ((follow ? stat(path, &st) : lstat(path, &st)) < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = not_regular(st.st_mode);
		return -1;
	}
	/* O_NONBLOCK and the second check: the path may have been replaced by
	 * a FIFO since stat(). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*why = S_ISREG(st.st_mode) ? strerror(errno) : not_regular(st.st_mode);
		close(fd);
		return -1;
	}
	return fd;
}

static ssize_t read_some(int fd, char *buf, size_t n)
{
	ssize_t got;
	while ((got = read(fd, buf, n)) < 0 && errno == EINTR)
		;
	return got;
}

/* The length of the run of NUL bytes (nul) or of other bytes at p. */
static size_t run_length(const char *p, size_t n, int nul)
{
	size_t i = 0;
	if (nul) {
		while (i < n && p[i] == 0)
			i++;
		return i;
	}
	const char *z = memchr(p, 0, n);
	return z ? (size_t)(z - p) : n;
}

/* Samples the text from `from` on, NUL bytes left out, and goes back there.
 * A file of NUL bytes only is binary too. */
static int sniff(int fd, unsigned long long from, int *binary)
{
	struct text_sample sample = { 0 };
	int nul = 0;
	char buf[16384];
	if (lseek(fd, (off_t)from, SEEK_SET) < 0)
		return -1;
	while (sample.bytes < TEXT_SAMPLE_BYTES) {
		ssize_t got = read_some(fd, buf, sizeof(buf));
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		for (size_t at = 0, n; at < (size_t)got; at += n) {
			int is_nul = buf[at] == 0;
			n = run_length(buf + at, (size_t)got - at, is_nul);
			if (is_nul)
				nul = 1;
			else
				text_sample_add(&sample, buf + at, n);
		}
	}
	*binary = sample.bytes ? text_sample_is_binary(&sample) : nul;
	return lseek(fd, (off_t)from, SEEK_SET) < 0 ? -1 : 0;
}

struct reader {
	const struct log_callbacks *cb;
	void *ctx;
	struct log_file *out;
	char *window;             /* text read but not scanned yet: at most
				   * MAX_REPORT_BYTES kept, plus one chunk */
	size_t len;
	int skip_line;            /* dropping the rest of an over-long line */
	int in_garbage;           /* the last byte read was a NUL */
};

static void drop(struct reader *r, size_t n)
{
	memmove(r->window, r->window + n, r->len - n);
	r->len -= n;
}

static void scan(struct reader *r, int final)
{
	for (;;) {
		int in_report;
		size_t done = log_scan_part(r->window, r->len, final, r->cb, r->ctx, &r->out->scan, &in_report);
		drop(r, done);
		if (r->len <= MAX_REPORT_BYTES)
			return;
		/* Longer than anything the tracer writes: a report that never
		 * ended, or one line. Its first line goes, the rest is scanned
		 * again. */
		if (in_report)
			r->out->scan.truncated++;
		const char *nl = memchr(r->window, '\n', r->len);
		r->skip_line = !nl;
		drop(r, nl ? (size_t)(nl - r->window) + 1 : r->len);
	}
}

static void add_text(struct reader *r, const char *text, size_t n)
{
	if (r->skip_line) {
		const char *nl = memchr(text, '\n', n);
		if (!nl)
			return;
		r->skip_line = 0;
		n -= (size_t)(nl + 1 - text);
		text = nl + 1;
	}
	memcpy(r->window + r->len, text, n);
	r->len += n;
}

/* NUL bytes at offset: the text before them ends there. */
static void add_garbage(struct reader *r, unsigned long long offset, size_t n)
{
	struct log_file *out = r->out;
	if (!r->in_garbage) {
		scan(r, 1);
		r->skip_line = 0;   /* an over-long line ends here too */
		r->in_garbage = 1;
		if (out->garbage_runs < MAX_GARBAGE_PLACES)
			out->places[out->garbage_runs].offset = offset;
		out->garbage_runs++;
	}
	if (out->garbage_runs <= MAX_GARBAGE_PLACES)
		out->places[out->garbage_runs - 1].bytes += n;
	out->garbage += n;
}

int log_file_read(int fd, unsigned long long from, const struct log_callbacks *cb, void *ctx,
		  struct log_file *out)
{
	memset(out, 0, sizeof(*out));
	if (sniff(fd, from, &out->binary) < 0)
		return -1;
	if (out->binary)
		return 0;
	struct reader r = { .cb = cb, .ctx = ctx, .out = out };
	r.window = xmalloc(MAX_REPORT_BYTES + LOG_CHUNK_BYTES);
	char *chunk = xmalloc(LOG_CHUNK_BYTES);
	int status = 0;
	for (;;) {
		ssize_t got = read_some(fd, chunk, LOG_CHUNK_BYTES);
		if (got < 0) {
			status = -1;
			break;
		}
		if (got == 0)
			break;
		for (size_t at = 0, n; at < (size_t)got; at += n) {
			int nul = chunk[at] == 0;
			n = run_length(chunk + at, (size_t)got - at, nul);
			if (nul) {
				add_garbage(&r, from + out->bytes + at, n);
			} else {
				r.in_garbage = 0;
				add_text(&r, chunk + at, n);
			}
		}
		out->bytes += (unsigned long long)got;
		scan(&r, 0);
	}
	int e = errno;
	scan(&r, 1);
	free(chunk);
	free(r.window);
	errno = e;
	return status;
}
