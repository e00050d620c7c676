/* graph_path=FILE: the lock-class dependency graph, written at exit as
 * Graphviz DOT, in the form base/graph_format.h defines (`lockdep-rcu
 * graph` merges and renders these files, and reads exactly that form).
 *
 * A relative FILE is taken from the directory the program started in (a
 * daemon chdir()s to /). Without %p only the process that loaded the
 * tracer writes it (a forked child would overwrite its parent's). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "graph/graph_dump.h"
#include "classes/lock_classes.h"
#include "graph/lock_graph.h"
#include "base/options.h"
#include "report/report.h"
#include "runtime/sandbox.h"
#include "unwind/stack_depot.h"
#include "symbolize/symbolize.h"
#include "base/tracer_sort.h"
#include "base/raw_syscall.h"
#include "base/graph_format.h"
#include "runtime/log_output.h"
#include "symbolize/symbolizer_lock.h"

static char path_template[LOG_PATH_MAX + 4096];
static pid_t loading_pid;

void graph_dump_setup(void)
{
	const char *path = tracer_options.graph_path;
	if (!path[0])
		return;
	loading_pid = getpid();
	char cwd[4096];
	if (path[0] != '/' && getcwd(cwd, sizeof(cwd)))
		snprintf(path_template, sizeof(path_template), "%s/%s", cwd, path);
	else
		snprintf(path_template, sizeof(path_template), "%s", path);
}

/* ---- buffered output to the file ----------------------------------------- */

static int out_fd = -1;
static char out[1 << 16];
static size_t out_len;

static void out_flush(void)
{
	const char *p = out;
	while (out_len && out_fd >= 0) {
		ssize_t n = write(out_fd, p, out_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		p += n;
		out_len -= (size_t)n;
	}
	out_len = 0;
}

static void out_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out_printf(const char *fmt, ...)
{
	char line[2048];
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

/* A DOT string's contents, escaped (graph_format.h). */
static void escape(const char *s, char *buf, size_t size)
{
	size_t n = 0;
	for (; *s && n + 3 < size; s++) {
		if (graph_escaped(*s))
			buf[n++] = GRAPH_ESCAPE;
		buf[n++] = (unsigned char)*s < 0x20 ? ' ' : *s;
	}
	buf[n] = 0;
}

static void class_label(uint32_t class_id, char *buf, size_t size)
{
	char name[256];
	lock_class_name(class_id, name, sizeof(name));
	escape(name, buf, size);
}

/* DOT names a node by its label, so two classes that print alike (two
 * keys given one name, two init sites that symbolize alike) would be drawn
 * as one node, with edges between them that no class has. As kernel
 * lockdep numbers classes sharing a name ("name#2"), the later ones (by
 * class id: the order they were made) get "#N". */
struct node_name {
	uint64_t hash;          /* of the label: equal labels, equal hashes */
	uint32_t class_id;
};

static uint64_t label_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static int node_name_compare(const void *a, const void *b)
{
	const struct node_name *x = a, *y = b;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->class_id < y->class_id ? -1 : x->class_id > y->class_id;
}

/* The graph's nodes: *version[class] is 1 for the first class of a label,
 * 2 for the next... (0 for a class not in the graph). */
static void number_names(uint32_t *nodes, size_t n, struct node_name *names, uint16_t *version)
{
	for (size_t i = 0; i < n; i++) {
		char label[600];
		class_label(nodes[i], label, sizeof(label));
		names[i] = (struct node_name){ label_hash(label), nodes[i] };
	}
	tracer_sort(names, n, sizeof(*names), node_name_compare);
	for (size_t i = 0; i < n; i++)
		version[names[i].class_id] = i && names[i - 1].hash == names[i].hash
			? (uint16_t)(version[names[i - 1].class_id] + 1) : 1;
}

/* A node's name: the class's, numbered by number_names() when shared. */
static void node_label(uint32_t class_id, const uint16_t *version, char *buf, size_t size)
{
	class_label(class_id, buf, size);
	if (version[class_id] > 1) {
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, "#%u", version[class_id]);
	}
}

#define NODE_KIND(name, kind, style) { kind, style },
static const struct { const char *kind, *style; } node_kinds[] = { GRAPH_NODE_KINDS(NODE_KIND) };
#define EDGE_MARK(name, attr, text) text,
static const char *const edge_marks[] = { GRAPH_EDGE_MARKS(EDGE_MARK) };

static void print_node(uint32_t class_id, const uint16_t *version)
{
	char name[600];
	node_label(class_id, version, name, sizeof(name));
	enum graph_node_kind kind = lock_classes[class_id].key_kind == CLASS_RCU_FLAVOR ? GRAPH_NODE_RCU :
				    lock_classes[class_id].key_kind == CLASS_SRCU ? GRAPH_NODE_SRCU : GRAPH_NODE_LOCK;
	out_printf(GRAPH_NODE_LINE, name, node_kinds[kind].kind, node_kinds[kind].style);
}

/* "function file:line" and "file:line" (basename) of an edge's first frame. */
static void edge_site(uint32_t stack, char *site, size_t site_size, char *label, size_t label_size)
{
	const uintptr_t *frames;
	site[0] = label[0] = 0;
	if (!stack_depot_fetch(stack, &frames) || !frames[0])
		return;
	char function[256] = "", file[512] = "";
	int line = 0;
	symbolize_function(frames[0], function, sizeof(function));
	int have_source = symbolize_source(frames[0] - 1, file, sizeof(file), &line);
	char text[1024];
	if (have_source) {
		const char *base = strrchr(file, '/');
		snprintf(text, sizeof(text), "%s %s:%d", function[0] ? function : "?", file, line);
		escape(text, site, site_size);
		snprintf(text, sizeof(text), "%s:%d", base ? base + 1 : file, line);
	} else {
		snprintf(text, sizeof(text), "%s", function[0] ? function : "?");
		escape(text, site, site_size);
	}
	escape(text, label, label_size);
}

struct dump_job {
	struct dependency_view *edges;
	size_t n;
	uint8_t *seen;             /* [MAX_LOCK_CLASSES] */
	uint16_t *version;         /* [MAX_LOCK_CLASSES] */
	uint32_t *nodes;           /* [MAX_LOCK_CLASSES]: the classes in the graph */
	struct node_name *names;   /* [MAX_LOCK_CLASSES] */
};

static void print_graph(void *arg)
{
	struct dump_job *job = arg;
	char comm[17] = "", label[64];
	raw_thread_name(comm);
	escape(comm, label, sizeof(label));
	out_printf(GRAPH_HEAD);
	char graph_label[128];
	snprintf(graph_label, sizeof(graph_label), "lockdep-rcu %s: %s (pid %d)", LOCKDEP_RCU_VERSION, label,
		 (int)getpid());
	out_printf(GRAPH_LABEL_LINE, graph_label);
	out_printf(GRAPH_NODE_DEFAULTS);
	size_t nodes = 0;
	for (size_t i = 0; i < job->n; i++) {
		uint32_t ends[2] = { job->edges[i].from, job->edges[i].to };
		for (int k = 0; k < 2; k++)
			if (!job->seen[ends[k]]) {
				job->seen[ends[k]] = 1;
				job->nodes[nodes++] = ends[k];
			}
	}
	number_names(job->nodes, nodes, job->names, job->version);
	for (size_t i = 0; i < nodes; i++)
		print_node(job->nodes[i], job->version);
	for (size_t i = 0; i < job->n; i++) {
		const struct dependency_view *e = &job->edges[i];
		char from[600], to[600], site[1200], where[600];
		node_label(e->from, job->version, from, sizeof(from));
		node_label(e->to, job->version, to, sizeof(to));
		edge_site(e->stack, site, sizeof(site), where, sizeof(where));
		out_printf(GRAPH_EDGE_LINE, from, to, site, where, e->in_reported_cycle ? edge_marks[GRAPH_MARK_CYCLE] : "",
			   e->sync ? edge_marks[GRAPH_MARK_SYNC] : "", e->read_only ? edge_marks[GRAPH_MARK_READ] : "",
			   e->urcu_workers_only && !e->sync ? edge_marks[GRAPH_MARK_URCU] : "");
	}
	out_printf(GRAPH_TAIL);
	out_flush();
}

static void expand(char *buf, size_t size)
{
	size_t n = 0;
	for (const char *p = path_template; *p && n + 1 < size; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			n += (size_t)snprintf(buf + n, size - n, "%d", (int)getpid());
			p++;
		} else {
			buf[n++] = *p;
		}
	}
	buf[n < size ? n : size - 1] = 0;
}

void graph_dump_write(void)
{
	static int written;
	if (!path_template[0] || __atomic_exchange_n(&written, 1, __ATOMIC_ACQ_REL))
		return;
	if (!strstr(path_template, "%p") && report_pid() != loading_pid)
		return;
	if (in_sandbox()) {   /* the file cannot be made inside (sandbox.h) */
		static const char note[] = "lockdep-rcu: graph_path not written: the process is in a seccomp sandbox\n";
		log_output_write(note, sizeof(note) - 1);
		return;
	}
	size_t edges_size = sizeof(struct dependency_view) * MAX_LOCKDEP_EDGES;
	size_t names_size = sizeof(struct node_name) * MAX_LOCK_CLASSES;
	size_t nodes_size = sizeof(uint32_t) * MAX_LOCK_CLASSES;
	size_t version_size = sizeof(uint16_t) * MAX_LOCK_CLASSES;
	size_t seen_size = MAX_LOCK_CLASSES;
	size_t total = edges_size + names_size + nodes_size + version_size + seen_size;
	char *memory = raw_mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (memory == MAP_FAILED)
		return;
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	/* Largest alignment first: every part stays aligned. */
	struct dump_job job = {
		.edges = (struct dependency_view *)memory,
		.names = (struct node_name *)(memory + edges_size),
		.nodes = (uint32_t *)(memory + edges_size + names_size),
		.version = (uint16_t *)(memory + edges_size + names_size + nodes_size),
		.seen = (uint8_t *)(memory + edges_size + names_size + nodes_size + version_size),
	};
	job.n = lock_graph_snapshot(ts, job.edges, MAX_LOCKDEP_EDGES);
	char path[sizeof(path_template) + 16];
	expand(path, sizeof(path));
	int saved_errno = errno;
	out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
	if (out_fd >= 0) {
		symbolizer_run(ts, print_graph, &job);
		close(out_fd);
		out_fd = -1;
	} else {
		char line[sizeof(path) + 96];
		int len = snprintf(line, sizeof(line), "lockdep-rcu: cannot write graph_path %s: %s\n", path,
				   strerror(errno));
		log_output_write(line, len > 0 ? (size_t)len : 0);
	}
	errno = saved_errno;
	tracer_leave(ts);
	raw_munmap(memory, total);
}
