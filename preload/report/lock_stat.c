/* Lock statistics; see lock_stat.h. Counters are per class, updated with
 * relaxed atomics from every thread (the kernel keeps them per CPU; a
 * contended lock's counters bounce along with the lock itself). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include "report/lock_stat.h"
#include "classes/lock_classes.h"
#include "runtime/log_output.h"
#include "base/options.h"
#include "report/report.h"
#include "runtime/sandbox.h"
#include "report/report_record.h"
#include "base/record_schema.h"
#include "symbolize/symbolize.h"
#include "base/tracer_sort.h"
#include "base/raw_syscall.h"
#include "symbolize/symbolizer_lock.h"

int lock_stat_enabled;

struct lock_time {
	uint64_t min, max, total, nr;   /* ns; min 0: none yet */
};

struct lock_point {
	uintptr_t ip;
	uint64_t count;
};

enum { SIDE_WRITE, SIDE_READ, NR_SIDES };

struct class_stats {
	struct lock_time wait[NR_SIDES], hold[NR_SIDES];
	uint64_t contended_bounces[NR_SIDES], acquired_bounces[NR_SIDES];
	struct lock_point contention[LOCKSTAT_POINTS], contending[LOCKSTAT_POINTS];
};

/* Where each lock was last taken, and on which CPU: by address, lossy. */
struct last_acquisition {
	const void *lock;
	uintptr_t ip;
	int cpu;
};
#define LAST_ACQUISITIONS (1u << 16)

static struct class_stats *stats;               /* [MAX_LOCK_CLASSES] */
static struct last_acquisition *last_acquired;  /* [LAST_ACQUISITIONS] */

static void *map_zeroed(size_t size)
{
	void *p = raw_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void lock_stat_setup(void)
{
	if (!tracer_options.lock_stat || lock_stat_enabled)
		return;
	stats = map_zeroed(sizeof(*stats) * MAX_LOCK_CLASSES);
	last_acquired = map_zeroed(sizeof(*last_acquired) * LAST_ACQUISITIONS);
	if (stats && last_acquired)
		__atomic_store_n(&lock_stat_enabled, 1, __ATOMIC_RELEASE);
}

void lock_stat_fork_child(void)
{
	if (!lock_stat_enabled)
		return;
	memset(stats, 0, sizeof(*stats) * MAX_LOCK_CLASSES);
	memset(last_acquired, 0, sizeof(*last_acquired) * LAST_ACQUISITIONS);
}

uint64_t lock_stat_now(void)
{
	if (!clock_usable())
		return 0;   /* a strict sandbox: the clock faults; no times */
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void time_add(struct lock_time *t, uint64_t ns)
{
	if (!ns)
		ns = 1;   /* 0 means "no minimum yet" */
	__atomic_fetch_add(&t->total, ns, __ATOMIC_RELAXED);
	__atomic_fetch_add(&t->nr, 1, __ATOMIC_RELAXED);
	uint64_t cur = __atomic_load_n(&t->max, __ATOMIC_RELAXED);
	while (ns > cur && !__atomic_compare_exchange_n(&t->max, &cur, ns, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	cur = __atomic_load_n(&t->min, __ATOMIC_RELAXED);
	while ((!cur || ns < cur) &&
	       !__atomic_compare_exchange_n(&t->min, &cur, ns, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* One more at ip: its slot, or the first free one (the first four sites
 * seen keep their slots, as in the kernel). */
static void point_add(struct lock_point *points, uintptr_t ip)
{
	if (!ip)
		return;
	for (int i = 0; i < LOCKSTAT_POINTS; i++) {
		uintptr_t cur = __atomic_load_n(&points[i].ip, __ATOMIC_RELAXED);
		if (!cur) {
			uintptr_t expected = 0;
			if (!__atomic_compare_exchange_n(&points[i].ip, &expected, ip, 0, __ATOMIC_RELAXED,
							 __ATOMIC_RELAXED) && expected != ip)
				continue;
			cur = ip;
		}
		if (cur == ip) {
			__atomic_fetch_add(&points[i].count, 1, __ATOMIC_RELAXED);
			return;
		}
	}
}

static struct last_acquisition *last_of(const void *lock)
{
	uint64_t h = (uint64_t)(uintptr_t)lock * 0x9E3779B97F4A7C15ull;
	return &last_acquired[h >> (64 - 16)];
}

void lock_stat_contended(struct thread_state *ts, const void *lock, uintptr_t ip, int read, uint64_t waited)
{
	tracer_enter(ts);
	uint32_t class_id = lock_class_of(lock, ip);
	if (class_id) {
		struct class_stats *s = &stats[class_id];
		int side = read ? SIDE_READ : SIDE_WRITE;
		time_add(&s->wait[side], waited);
		point_add(s->contention, ip);
		struct last_acquisition *last = last_of(lock);
		if (__atomic_load_n(&last->lock, __ATOMIC_RELAXED) == lock) {
			point_add(s->contending, __atomic_load_n(&last->ip, __ATOMIC_RELAXED));
			if (__atomic_load_n(&last->cpu, __ATOMIC_RELAXED) != sched_getcpu())
				__atomic_fetch_add(&s->contended_bounces[side], 1, __ATOMIC_RELAXED);
		}
	}
	tracer_leave(ts);
}

/* A page of hold stamps per thread, made at its first acquisition. */
static uint64_t *hold_stamps(struct thread_state *ts)
{
	if (__builtin_expect(ts->hold_stamps != NULL, 1))
		return ts->hold_stamps;
	if (ts->hold_stamps_gone)
		return NULL;   /* after lock_stat_thread_end() */
	ts->hold_stamps = map_zeroed(sizeof(uint64_t) * MAX_LOCK_DEPTH);
	return ts->hold_stamps;
}

void lock_stat_prepare_thread(struct thread_state *ts)
{
	if (__atomic_load_n(&lock_stat_enabled, __ATOMIC_ACQUIRE))
		(void)hold_stamps(ts);
}


void lock_stat_acquired(struct thread_state *ts, unsigned index)
{
	uint64_t *stamps = hold_stamps(ts);
	if (!stamps)
		return;
	const struct held_lock *h = &ts->held[index];
	struct last_acquisition *last = last_of(h->lock);
	int cpu = sched_getcpu();
	if (__atomic_load_n(&last->lock, __ATOMIC_RELAXED) == h->lock &&
	    __atomic_load_n(&last->cpu, __ATOMIC_RELAXED) != cpu) {
		tracer_enter(ts);
		uint32_t class_id = held_class_lookup((struct held_lock *)h);
		if (class_id)
			__atomic_fetch_add(&stats[class_id].acquired_bounces[h->kind == HELD_RWLOCK_READ], 1,
					   __ATOMIC_RELAXED);
		tracer_leave(ts);
	}
	__atomic_store_n(&last->lock, h->lock, __ATOMIC_RELAXED);
	__atomic_store_n(&last->ip, h->acquire_ip, __ATOMIC_RELAXED);
	__atomic_store_n(&last->cpu, cpu, __ATOMIC_RELAXED);
	stamps[index] = lock_stat_now();
}

void lock_stat_released(struct thread_state *ts, unsigned index)
{
	uint64_t *stamps = ts->hold_stamps;
	if (!stamps || !stamps[index])
		return;
	uint64_t held_for = lock_stat_now() - stamps[index];
	stamps[index] = 0;
	struct held_lock *h = &ts->held[index];
	tracer_enter(ts);
	uint32_t class_id = h->class_id ? h->class_id : held_class_lookup(h);
	if (class_id)
		time_add(&stats[class_id].hold[h->kind == HELD_RWLOCK_READ], held_for);
	tracer_leave(ts);
}

void lock_stat_moved(struct thread_state *ts, unsigned to, unsigned from)
{
	if (ts->hold_stamps) {
		ts->hold_stamps[to] = ts->hold_stamps[from];
		ts->hold_stamps[from] = 0;
	}
}

void lock_stat_thread_end(struct thread_state *ts)
{
	uint64_t *stamps = ts->hold_stamps;
	ts->hold_stamps = NULL;
	ts->hold_stamps_gone = 1;
	if (stamps)
		raw_munmap(stamps, sizeof(uint64_t) * MAX_LOCK_DEPTH);
}

/* ---- the table at exit ------------------------------------------------------ */

/* The kernel's snprint_time(): microseconds with two decimals, rounded. */
static void format_time(char *buf, size_t size, uint64_t ns)
{
	ns += 5;
	snprintf(buf, size, "%llu.%02u", (unsigned long long)(ns / 1000), (unsigned)(ns % 1000) / 10);
}

static void format_times(char *buf, size_t size, const struct lock_time *t)
{
	char min[24], max[24], total[24], avg[24];
	format_time(min, sizeof(min), t->min);
	format_time(max, sizeof(max), t->max);
	format_time(total, sizeof(total), t->total);
	format_time(avg, sizeof(avg), t->nr ? t->total / t->nr : 0);
	snprintf(buf, size, "%14llu %14s %14s %14s %14s", (unsigned long long)t->nr, min, max, total, avg);
}

/* Output is written a buffer at a time. */
static char out[1 << 16];
static size_t out_len;

static void out_flush(void)
{
	if (out_len)
		log_output_write(out, out_len);
	out_len = 0;
}

static void out_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out_printf(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
	if (out_len + len > sizeof(out))
		out_flush();
	memcpy(out + out_len, line, len);
	out_len += len;
}

static void out_rule(char c, int width)
{
	char line[256];
	memset(line, c, (size_t)width);
	line[width] = 0;
	out_printf("%s", line);
}

#define TABLE_WIDTH (40 + 1 + 12 * (14 + 1))

static uint64_t contentions(const struct class_stats *s)
{
	return s->wait[SIDE_READ].nr + s->wait[SIDE_WRITE].nr;
}

static uint64_t acquisitions(const struct class_stats *s)
{
	return s->hold[SIDE_READ].nr + s->hold[SIDE_WRITE].nr;
}

/* Most contended first, as the kernel sorts; then most taken, then by id. */
static int compare_classes(const void *a, const void *b)
{
	const struct class_stats *x = &stats[*(const uint32_t *)a], *y = &stats[*(const uint32_t *)b];
	uint64_t cx = contentions(x), cy = contentions(y);
	if (cx != cy)
		return cx > cy ? -1 : 1;
	uint64_t ax = acquisitions(x), ay = acquisitions(y);
	if (ax != ay)
		return ax > ay ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void print_side(const char *name, const char *suffix, const struct class_stats *s, int side)
{
	char wait[128], hold[128], label[300];
	snprintf(label, sizeof(label), "%s%s:", name, suffix);
	format_times(wait, sizeof(wait), &s->wait[side]);
	format_times(hold, sizeof(hold), &s->hold[side]);
	out_printf("%41s%14llu %s %14llu %s\n", label, (unsigned long long)s->contended_bounces[side], wait,
		   (unsigned long long)s->acquired_bounces[side], hold);
}

static void print_points(const char *name, const struct lock_point *points, int *rule_done)
{
	for (int i = 0; i < LOCKSTAT_POINTS && points[i].ip; i++) {
		if (!*rule_done) {
			/* the kernel's seq_line(): dashes under the name */
			int width = (int)strlen(name) < 40 ? (int)strlen(name) : 40;
			out_printf("%*s", 40 - width, "");
			out_rule('-', width);
			out_printf("\n");
			*rule_done = 1;
		}
		char where[512], ip[32];
		symbolize_code(points[i].ip, where, sizeof(where));
		snprintf(ip, sizeof(ip), "[<%016lx>]", (unsigned long)points[i].ip);
		out_printf("%40s %14llu %29s %s\n", name, (unsigned long long)points[i].count, ip, where);
	}
}

static void put_time_fields(char *buf, size_t size, size_t *len, const char *what, const struct lock_time *t)
{
	*len += (size_t)snprintf(buf + *len, size - *len,
				 ",\"%s_min\":%.2f,\"%s_max\":%.2f,\"%s_total\":%.2f", what, t->min / 1000.0, what,
				 t->max / 1000.0, what, t->total / 1000.0);
}

static void put_points(char *buf, size_t size, size_t *len, const char *what, const struct lock_point *points)
{
	*len += (size_t)snprintf(buf + *len, size - *len, ",\"%s\":[", what);
	for (int i = 0; i < LOCKSTAT_POINTS && points[i].ip && *len < size; i++) {
		char frame[2048];
		record_frame_text(points[i].ip, frame, sizeof(frame));
		*len += (size_t)snprintf(buf + *len, size - *len, "%s{" RECORD_KEY(RECORD_STAT_COUNT) "%llu," RECORD_KEY(RECORD_STAT_SITE) "%s}", i ? "," : "",
					 (unsigned long long)points[i].count, frame);
	}
	if (*len < size)
		*len += (size_t)snprintf(buf + *len, size - *len, "]");
}

/* One record per class and side (see report_record.h for the frames). */
static void record_class(const char *name, const char *kind, const struct class_stats *s, int side,
			 const char *comm)
{
	static char rec[24 * 1024];
	size_t len = 0, size = sizeof(rec);
	len += (size_t)snprintf(rec, size, "{" RECORD_KEY(RECORD_V) "%d," RECORD_KEY(RECORD_KIND) "\"" RECORD_LOCK_STAT_KIND "\","
				RECORD_KEY(RECORD_PID) "%d," RECORD_KEY(RECORD_COMM) "\"", RECORD_SCHEMA_VERSION, (int)getpid());
	record_json_escape(comm, rec, size, &len);
	len += (size_t)snprintf(rec + len, size - len, "\"," RECORD_KEY(RECORD_STAT_CLASS) "\"");
	record_json_escape(name, rec, size, &len);
	len += (size_t)snprintf(rec + len, size - len,
				"\"," RECORD_KEY(RECORD_STAT_LOCK_KIND) "\"%s\"," RECORD_KEY(RECORD_STAT_CON_BOUNCES) "%llu,"
				RECORD_KEY(RECORD_STAT_CONTENTIONS) "%llu", kind,
				(unsigned long long)s->contended_bounces[side], (unsigned long long)s->wait[side].nr);
	put_time_fields(rec, size, &len, RECORD_STAT_WAITTIME, &s->wait[side]);
	len += (size_t)snprintf(rec + len, size - len, "," RECORD_KEY(RECORD_STAT_ACQ_BOUNCES) "%llu," RECORD_KEY(RECORD_STAT_ACQUISITIONS) "%llu",
				(unsigned long long)s->acquired_bounces[side], (unsigned long long)s->hold[side].nr);
	put_time_fields(rec, size, &len, RECORD_STAT_HOLDTIME, &s->hold[side]);
	put_points(rec, size, &len, RECORD_STAT_CONTENTION_POINTS, s->contention);
	put_points(rec, size, &len, RECORD_STAT_CONTENDING_POINTS, s->contending);
	if (len + 3 >= size)
		return;   /* never a cut record */
	len += (size_t)snprintf(rec + len, size - len, "}\n");
	log_output_write_record(rec, len);
}

struct table_job {
	uint32_t *order;
	size_t n;
};

static void print_table(void *arg)
{
	struct table_job *job = arg;
	char comm[17] = "";
	raw_thread_name(comm);
	out_len = 0;
	out_printf("\nlock_stat version 0.4\n");
	out_rule('-', TABLE_WIDTH);
	out_printf("\n%40s %14s %14s %14s %14s %14s %14s %14s %14s %14s %14s %14s %14s\n", "class name",
		   "con-bounces", "contentions", "waittime-min", "waittime-max", "waittime-total", "waittime-avg",
		   "acq-bounces", "acquisitions", "holdtime-min", "holdtime-max", "holdtime-total", "holdtime-avg");
	out_rule('-', TABLE_WIDTH);
	out_printf("\n\n");
	for (size_t i = 0; i < job->n; i++) {
		const struct class_stats *s = &stats[job->order[i]];
		char name[256];
		lock_class_name(job->order[i], name, sizeof(name));
		int has_read = s->hold[SIDE_READ].nr || s->wait[SIDE_READ].nr;
		int has_write = s->hold[SIDE_WRITE].nr || s->wait[SIDE_WRITE].nr;
		if (has_write) {
			print_side(name, has_read ? "-W" : "", s, SIDE_WRITE);
			record_class(name, has_read ? "write" : "lock", s, SIDE_WRITE, comm);
		}
		if (has_read) {
			print_side(name, "-R", s, SIDE_READ);
			record_class(name, "read", s, SIDE_READ, comm);
		}
		if (contentions(s)) {
			int rule_done = 0;
			print_points(name, s->contention, &rule_done);
			print_points(name, s->contending, &rule_done);
			out_printf("\n");
			out_rule('.', TABLE_WIDTH);
			out_printf("\n");
		}
		out_printf("\n");
	}
	out_flush();
}

void lock_stat_print(void)
{
	static int printed;
	if (!lock_stat_enabled || __atomic_exchange_n(&printed, 1, __ATOMIC_ACQ_REL))
		return;
	if (in_sandbox()) {   /* its table needs memory mapped (sandbox.h) */
		static const char note[] = "lockdep-rcu: lock_stat table not printed: the process is in a seccomp sandbox\n";
		log_output_write(note, sizeof(note) - 1);
		return;
	}
	uint32_t nr = lock_classes_count();
	uint32_t *order = raw_mmap(NULL, sizeof(uint32_t) * nr + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
	if (order == MAP_FAILED)
		return;
	size_t n = 0;
	for (uint32_t id = 1; id < nr; id++)
		if (acquisitions(&stats[id]) || contentions(&stats[id]))
			order[n++] = id;
	tracer_sort(order, n, sizeof(order[0]), compare_classes);
	struct table_job job = { order, n };
	symbolizer_run(thread_state(), print_table, &job);
	raw_munmap(order, sizeof(uint32_t) * nr + 1);
}
