/* Building a report's record (see report_record.h). One record at a time:
 * the caller holds the report lock, so static buffers serve. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include "report/report_record.h"
#include "base/utf8.h"
#include "base/record_schema.h"
#include "runtime/sandbox.h"
#include "symbolize/symbolize.h"
#include "runtime/thread_state.h"

/* A record is assembled from three segments filled in whatever order the
 * report prints them: the header (kind, title, message, site), the locks and
 * the frames. An item (a frame, a lock) goes in whole or not at all, so a
 * record cut short by its size is still one valid JSON object. */
struct segment {
	char text[RECORD_BUFFER_SIZE / 4];
	size_t len;
	int items;
};
static struct segment header, locks, frames, scratch;
static struct segment *target = &header;
static char record[RECORD_BUFFER_SIZE];
static size_t record_len;
static int have_message, have_site;
static uint64_t bug_hash;
/* A thread ending with locks held is one bug per innermost lock (where it
 * was taken), however many it holds: only the last "leaked" lock counts. */
static uint64_t innermost_leak;
static int have_leak;
/* Where hash_text() adds: bug_hash, or innermost_leak while a leaked lock
 * is recorded. */
static uint64_t *hash_target = &bug_hash;

/* The item being written: its segment's length before it, so a cut item is
 * taken back. */
static size_t item_start;
static int item_cut;

static void begin_item(struct segment *seg)
{
	target = seg;
	item_start = seg->len;
	item_cut = 0;
	if (seg != &header && seg->items)
		seg->text[seg->len++] = ',';
}

static void end_item(void)
{
	if (item_cut)
		target->len = item_start;
	else if (target != &header)
		target->items++;
	target->text[target->len] = 0;
	target = &header;
}

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...)
{
	struct segment *seg = target;
	size_t room = sizeof(seg->text) - seg->len;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(seg->text + seg->len, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room)
		item_cut = 1;
	else
		seg->len += (size_t)n;
}

/* The contents of a JSON string: quotes, backslashes and control bytes
 * escaped, and every byte that is not part of a UTF-8 sequence written as
 * U+FFFD, so that a record is strict UTF-8 JSON whatever bytes a name
 * holds (a thread's name is the program's to choose). Only whole
 * sequences are written: a string cut for room stays valid. */
static void json_escape(const char *s, size_t len, char *buf, size_t size, size_t *out)
{
	static const char replacement[] = "\xef\xbf\xbd";
	size_t n = *out;
	for (size_t i = 0; i < len && s[i] && n + 8 < size;) {
		const unsigned char *c = (const unsigned char *)s + i;
		size_t seq = utf8_sequence(c, strnlen(s + i, len - i));
		if (*c == '"' || *c == '\\') {
			buf[n++] = '\\';
			buf[n++] = (char)*c;
		} else if (*c < 0x20 || *c == 0x7f) {
			n += (size_t)snprintf(buf + n, 7, "\\u%04x", *c);
		} else if (!seq) {
			memcpy(buf + n, replacement, 3);
			n += 3;
		} else {
			memcpy(buf + n, c, seq);
			n += seq;
		}
		i += seq ? seq : 1;
	}
	if (n < size)
		buf[n] = 0;
	*out = n;
}

/* A JSON string; cut at 1 KiB. */
static void put_string(const char *s, size_t len)
{
	char text[1024 + 8];
	size_t n = 0;
	json_escape(s, len, text, sizeof(text), &n);
	text[n] = 0;
	put("\"%s\"", text);
}

static void hash_text(const char *s)
{
	for (; *s; s++) {
		*hash_target ^= (unsigned char)*s;
		*hash_target *= 0x100000001b3ull;
	}
	*hash_target ^= 0xff;
	*hash_target *= 0x100000001b3ull;
}

/* A frame, and into the bug's hash what identifies it across runs: the
 * function and source line, else the module and offset. */
static void put_frame(uintptr_t pc, int return_address, int hashed)
{
	char module[512], function[256], file[512];
	uintptr_t offset = 0;
	int line = 0;
	uintptr_t lookup = return_address && pc ? pc - 1 : pc;
	int have_module = symbolize_module(pc, module, sizeof(module), &offset);
	size_t have_function = return_address ? symbolize_function(pc, function, sizeof(function)) : 0;
	uintptr_t start = return_address ? symbolize_function_start(pc) : 0;
	int have_source = symbolize_source(lookup, file, sizeof(file), &line);
	put("{" RECORD_KEY(RECORD_FRAME_PC) "\"0x%lx\"", (unsigned long)pc);
	if (have_module) {
		put("," RECORD_KEY(RECORD_FRAME_MODULE));
		put_string(module, strlen(module));
		put("," RECORD_KEY(RECORD_FRAME_OFFSET) "\"0x%lx\"", (unsigned long)offset);
	}
	if (have_function) {
		put("," RECORD_KEY(RECORD_FRAME_FUNCTION));
		put_string(function, strlen(function));
		if (start && start <= pc)
			put("," RECORD_KEY(RECORD_FRAME_FUNCTION_OFFSET) "\"0x%lx\"", (unsigned long)(pc - start));
	}
	if (have_source) {
		put("," RECORD_KEY(RECORD_FRAME_FILE));
		put_string(file, strlen(file));
		put("," RECORD_KEY(RECORD_FRAME_LINE) "%d", line);
	}
	put("}");
	if (!hashed)
		return;
	if (have_function)
		hash_text(function);
	if (have_source) {
		char where[560];
		const char *base = strrchr(file, '/');
		snprintf(where, sizeof(where), "%s:%d", base ? base + 1 : file, line);
		hash_text(where);
	} else if (have_module) {
		char where[560];
		const char *base = strrchr(module, '/');
		snprintf(where, sizeof(where), "%s+%lx", base ? base + 1 : module, (unsigned long)offset);
		hash_text(where);
	}
}

void record_begin(const char *kind, const char *title, unsigned long seq, int subject_tid,
		  const char *subject_comm)
{
	header.len = locks.len = frames.len = 0;
	header.items = locks.items = frames.items = 0;
	target = &header;
	have_message = have_site = 0;
	bug_hash = 0xcbf29ce484222325ull;
	have_leak = 0;
	hash_target = &bug_hash;
	hash_text(kind);
	char comm[17];
	if (subject_tid)
		snprintf(comm, sizeof(comm), "%s", subject_comm);
	else
		report_comm(comm);
	struct timespec now = { 0, 0 };
	if (clock_usable())   /* a strict sandbox has no clock: no "time" */
		clock_gettime(CLOCK_REALTIME, &now);
	put("{" RECORD_KEY(RECORD_V) "%d," RECORD_KEY(RECORD_KIND), RECORD_SCHEMA_VERSION);
	put_string(kind, strlen(kind));
	put("," RECORD_KEY(RECORD_TITLE));
	put_string(title, strlen(title));
	if (seq)
		put("," RECORD_KEY(RECORD_SEQ) "%lu", seq);
	put("," RECORD_KEY(RECORD_PID) "%d," RECORD_KEY(RECORD_TID) "%d," RECORD_KEY(RECORD_COMM), (int)report_pid(),
	    subject_tid ? subject_tid : (int)report_tid(thread_state()));
	put_string(comm, strlen(comm));
	if (now.tv_sec)
		put("," RECORD_KEY(RECORD_TIME) "%ld.%03ld", (long)now.tv_sec, now.tv_nsec / 1000000);
}

void record_message(const char *text, size_t len)
{
	if (have_message)
		return;
	have_message = 1;
	put("," RECORD_KEY(RECORD_MESSAGE));
	put_string(text, len);
}

void record_site(uintptr_t pc, int return_address)
{
	if (have_site || !pc)
		return;
	have_site = 1;
	begin_item(&header);
	put("," RECORD_KEY(RECORD_SITE));
	put_frame(pc, return_address, 1);
	end_item();
}

void record_site_source(const char *file, int line)
{
	if (have_site)
		return;
	have_site = 1;
	begin_item(&header);
	put("," RECORD_KEY(RECORD_SITE) "{" RECORD_KEY(RECORD_FRAME_FILE));
	put_string(file, strlen(file));
	put("," RECORD_KEY(RECORD_FRAME_LINE) "%d}", line);
	end_item();
	char where[600];
	snprintf(where, sizeof(where), "%s:%d", file, line);
	hash_text(where);
}

void record_frame(uintptr_t pc)
{
	begin_item(&frames);
	put_frame(pc, 1, 0);
	end_item();
}

void record_lock(const char *role, const void *address, const char *name, const char *kind, uintptr_t acquired_at)
{
	begin_item(&locks);
	put("{" RECORD_KEY(RECORD_LOCK_ROLE));
	put_string(role, strlen(role));
	if (address)
		put("," RECORD_KEY(RECORD_LOCK_ADDRESS) "\"0x%lx\"", (unsigned long)(uintptr_t)address);
	put("," RECORD_KEY(RECORD_LOCK_NAME));
	put_string(name, strlen(name));
	put("," RECORD_KEY(RECORD_LOCK_KIND));
	put_string(kind, strlen(kind));
	/* The locks a report is about are part of the bug (a thread ending
	 * with locks held is grouped by where each was taken); the locks that
	 * happen to be held around it are not, nor the readers an RCU object
	 * was freed under: which readers were inside their sections at that
	 * moment is timing, the freeing site is the bug (reported once). */
	int identity = strcmp(role, "held") != 0 && strcmp(role, "reader") != 0;
	if (!strcmp(role, "leaked")) {
		innermost_leak = 0xcbf29ce484222325ull;
		have_leak = 1;
		hash_target = &innermost_leak;
	}
	if (acquired_at) {
		put("," RECORD_KEY(RECORD_LOCK_ACQUIRED_AT));
		put_frame(acquired_at, 1, identity);
	}
	put("}");
	end_item();
	if (identity) {
		/* A name may carry an address ("lock@55d1afc420c0": a static of
		 * a stripped program), different in every run: not hashed. */
		char stable[256];
		snprintf(stable, sizeof(stable), "%s", name);
		char *at = strchr(stable, '@');
		if (at)
			*at = 0;
		hash_text(role);
		hash_text(stable);
	}
	hash_target = &bug_hash;
}

const char *record_end(size_t *len)
{
	if (have_leak) {
		bug_hash ^= innermost_leak;
		bug_hash *= 0x100000001b3ull;
	}
	record_len = (size_t)snprintf(record, sizeof(record), "%.*s", (int)header.len, header.text);
	if (locks.items)
		record_len += (size_t)snprintf(record + record_len, sizeof(record) - record_len, "," RECORD_KEY(RECORD_LOCKS) "[%.*s]",
					       (int)locks.len, locks.text);
	if (frames.items)
		record_len += (size_t)snprintf(record + record_len, sizeof(record) - record_len, "," RECORD_KEY(RECORD_FRAMES) "[%.*s]",
					       (int)frames.len, frames.text);
	record_len += (size_t)snprintf(record + record_len, sizeof(record) - record_len, "," RECORD_KEY(RECORD_BUG) "\"%016llx\"}\n",
				       (unsigned long long)bug_hash);
	*len = record_len;
	return record;
}

void record_frame_text(uintptr_t pc, char *buf, size_t size)
{
	scratch.len = 0;
	scratch.items = 0;
	begin_item(&scratch);
	put_frame(pc, 1, 0);
	int cut = item_cut;
	end_item();
	snprintf(buf, size, "%.*s", cut ? 0 : (int)scratch.len, scratch.text);
	if (cut || !buf[0])
		snprintf(buf, size, "{" RECORD_KEY(RECORD_FRAME_PC) "\"0x%lx\"}", (unsigned long)pc);
}

void record_json_escape(const char *s, char *buf, size_t size, size_t *len)
{
	json_escape(s, strlen(s), buf, size, len);
}
