#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "symbolizer.h"
#include "debuginfod.h"
#include "../preload/symbolize/demangle.h"
#include "util.h"

#define ADDRESSES_PER_RUN 256

void symbolizer_init(struct symbolizer *s, void (*note)(const char *, void *), void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->deadline = 60;
	s->note = note;
	s->ctx = ctx;
}

void symbolizer_add_dir(struct symbolizer *s, const char *dir)
{
	if (!dir || !*dir)
		return;
	for (size_t i = 0; i < s->ndirs; i++)
		if (!strcmp(s->dirs[i], dir))
			return;
	grow(&s->dirs, &s->cap, s->ndirs + 1, sizeof(*s->dirs));
	s->dirs[s->ndirs++] = xstrdup(dir);
}

static void add_conf_file(struct symbolizer *s, const char *path)
{
	char *text;
	size_t len;
	int truncated;
	if (read_file(path, 1 << 16, &text, &len, &truncated))
		return;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		while (*line == ' ' || *line == '\t')
			line++;
		char *end = line + strcspn(line, " \t#");
		*end = 0;
		if (line[0] == '/')
			symbolizer_add_dir(s, line);
	}
	free(text);
}

void symbolizer_add_default_dirs(struct symbolizer *s)
{
	char cwd[PATH_MAX];
	if (getcwd(cwd, sizeof(cwd)))
		symbolizer_add_dir(s, cwd);
	const char *path = getenv("PATH");
	if (path) {
		char *copy = xstrdup(path);
		for (char *dir = strtok(copy, ":"); dir; dir = strtok(NULL, ":"))
			symbolizer_add_dir(s, dir);
		free(copy);
	}
	glob_t g;
	if (glob("/etc/ld.so.conf.d/*.conf", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			add_conf_file(s, g.gl_pathv[i]);
		globfree(&g);
	}
	static const char *const std_dirs[] = { "/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib" };
	for (size_t i = 0; i < sizeof(std_dirs) / sizeof(std_dirs[0]); i++)
		symbolizer_add_dir(s, std_dirs[i]);
}

static int is_regular(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static char *find_in_dirs(struct symbolizer *s, size_t from, size_t to, const char *module)
{
	for (size_t i = from; i < to; i++) {
		char *path = path_join(s->dirs[i], module);
		if (is_regular(path))
			return path;
		free(path);
	}
	return NULL;
}

/* Only regular files: a path from a record may name anything (a FIFO would
 * block addr2line until its deadline). */
static char *find_module(struct symbolizer *s, const struct sym_request *r)
{
	if (strchr(r->module, '/'))
		return NULL;   /* a basename is expected */
	char *path = find_in_dirs(s, 0, s->ndirs_first, r->module);
	if (!path && r->path && r->path[0] == '/' && is_regular(r->path))
		path = xstrdup(r->path);
	if (!path)
		path = find_in_dirs(s, s->ndirs_first, s->ndirs, r->module);
	return path;
}

/* Runs argv (a binutils tool on module), returns its stdout (NULL if it
 * could not run or overran the deadline, then killed). */
static char *capture(struct symbolizer *s, char *const argv[], const char *module)
{
	int out[2];
	if (pipe2(out, O_CLOEXEC))
		return NULL;
	pid_t pid = fork();
	if (pid < 0) {
		close(out[0]);
		close(out[1]);
		return NULL;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(out[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	close(out[1]);
	struct strbuf b = { 0 };
	double deadline = monotonic_seconds() + s->deadline;
	int killed = 0;
	for (;;) {
		double left = deadline - monotonic_seconds();
		if (left <= 0) {
			kill(pid, SIGKILL);
			killed = 1;
			break;
		}
		struct pollfd p = { out[0], POLLIN, 0 };
		int n = poll(&p, 1, (int)(left * 1000) + 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			continue;
		char buf[8192];
		ssize_t got = read(out[0], buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		sb_add(&b, buf, (size_t)got);
	}
	close(out[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (killed || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (!killed && WIFEXITED(status) && WEXITSTATUS(status) == 127 && !s->missing_tool) {
			s->missing_tool = 1;
			if (s->note) {
				char msg[128];
				snprintf(msg, sizeof(msg), "%s (binutils) could not be run: frames keep module+offset",
					 argv[0]);
				s->note(msg, s->ctx);
			}
		} else if (killed && s->note) {
			char msg[PATH_MAX + 64];
			snprintf(msg, sizeof(msg), "%s took longer than %.0f s on %s: killed", argv[0], s->deadline,
				 module);
			s->note(msg, s->ctx);
		}
		sb_free(&b);
		return NULL;
	}
	return sb_detach(&b);
}

static int is_address_line(const char *l)
{
	return !strncmp(l, "0x", 2) && l[2] && strspn(l + 2, "0123456789abcdef") == strlen(l + 2);
}

/* addr2line prints the absolute path; relative to the current directory
 * it reads like the tracer's (which strips the compilation directory). */
static char *clean_source(const char *loc)
{
	if (!strncmp(loc, "??", 2))
		return NULL;
	char *s = xstrdup(loc);
	char *disc = strstr(s, " (discriminator");
	if (disc)
		*disc = 0;
	char cwd[PATH_MAX];
	size_t n;
	if (getcwd(cwd, sizeof(cwd)) && (n = strlen(cwd)) > 1 && !strncmp(s, cwd, n) && s[n] == '/')
		memmove(s, s + n + 1, strlen(s + n + 1) + 1);
	if (ends_with(s, ":0")) {
		free(s);   /* a file without a line tells nothing */
		return NULL;
	}
	return s;
}

/* A function name as the tracer prints it: a C++ one demangled the same
 * way (preload/symbolize/demangle.c), so that a frame named here and the same frame
 * named by the tracer count as one. */
static char *function_name(const char *name)
{
	char buf[512];
	size_t n = demangle_name(name, strlen(name), buf, sizeof(buf));
	return xstrdup(n && n < sizeof(buf) - 1 ? buf : name);
}

static void finish_request(struct sym_request *r, char **functions, size_t nfunc, char *first_loc)
{
	size_t outer = nfunc;
	while (outer > 0 && !strcmp(functions[outer - 1], "??"))
		outer--;
	if (outer > 0) {
		r->function = function_name(functions[outer - 1]);
		if (outer > 1) {
			struct strbuf b = { 0 };
			for (size_t i = 0; i + 1 < outer; i++) {
				char *f = function_name(functions[i]);
				sb_printf(&b, "%s%s", i ? " < " : "", f);
				free(f);
			}
			r->inlined = sb_detach(&b);
		}
	}
	r->source = first_loc ? clean_source(first_loc) : NULL;
	r->resolved = r->function || r->source;
}

/* Parses "-a -f -i" output into the requests of this batch (matched by
 * address, not by order, so a short output cannot shift the results). */
static void parse_output(char *text, struct sym_request *reqs, size_t n)
{
	struct sym_request *cur = NULL;
	char *functions[64];
	size_t nfunc = 0;
	char *first_loc = NULL;
	int expect_function = 1;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
		if (!line || is_address_line(line)) {
			if (cur && !cur->resolved)
				finish_request(cur, functions, nfunc, first_loc);
			if (!line)
				break;
			cur = NULL;
			nfunc = 0;
			first_loc = NULL;
			expect_function = 1;
			unsigned long a = strtoul(line + 2, NULL, 16);
			for (size_t i = 0; i < n; i++)
				if (reqs[i].address == a && !reqs[i].resolved)
					cur = &reqs[i];
			continue;
		}
		if (!cur)
			continue;
		if (expect_function) {
			if (nfunc < sizeof(functions) / sizeof(functions[0]))
				functions[nfunc++] = line;
		} else if (!first_loc) {
			first_loc = line;
		}
		expect_function = !expect_function;
	}
}

/* One object: its path when known, else its name. */
static const char *object_of(const struct sym_request *r)
{
	return r->path ? r->path : r->module;
}

static void symbolize_module(struct symbolizer *s, const char *path, struct sym_request *reqs, size_t n)
{
	for (size_t start = 0; start < n && !s->missing_tool; start += ADDRESSES_PER_RUN) {
		size_t count = n - start < ADDRESSES_PER_RUN ? n - start : ADDRESSES_PER_RUN;
		char **argv = xcalloc(count + 8, sizeof(char *));
		size_t a = 0;
		argv[a++] = "addr2line";
		argv[a++] = "-a";
		argv[a++] = "-f";
		argv[a++] = "-i";
		argv[a++] = "-e";
		argv[a++] = (char *)path;
		for (size_t i = 0; i < count; i++)
			argv[a++] = xasprintf("0x%lx", reqs[start + i].address);
		argv[a] = NULL;
		char *out = capture(s, argv, path);
		if (out)
			parse_output(out, reqs + start, count);
		free(out);
		for (size_t i = 6; i < a; i++)
			free(argv[i]);
		free(argv);
	}
}

/* The module's symbols as nm -S lists them: .symtab, else .dynsym, the
 * tables addr2line reads. NULL when it has none or nm cannot run. */
static char *symbol_listing(struct symbolizer *s, const char *path)
{
	char *symtab[] = { "nm", "-S", "--defined-only", (char *)path, NULL };
	char *dynsym[] = { "nm", "-D", "-S", "--defined-only", (char *)path, NULL };
	char **tables[] = { symtab, dynsym };
	for (size_t i = 0; i < 2; i++) {
		char *out = capture(s, tables[i], path);
		if (out && *out)
			return out;
		free(out);
	}
	return NULL;
}

/* Whether a listed symbol called name holds address: [start, start+size),
 * or a sizeless one exactly at address (an assembly label). */
static int symbol_holds(const char *listing, const char *name, unsigned long address)
{
	size_t name_len = strlen(name);
	for (const char *line = listing; *line; line += strcspn(line, "\n"), line += *line == '\n') {
		unsigned long start, size = 0;
		char type, symbol[512];
		int sized = sscanf(line, "%lx %lx %c %511s", &start, &size, &type, symbol) == 4;
		if (!sized && sscanf(line, "%lx %c %511s", &start, &type, symbol) != 3)
			continue;
		/* "memcpy@@GLIBC_2.14": the version is not part of the name */
		if (strncmp(symbol, name, name_len) || (symbol[name_len] && symbol[name_len] != '@'))
			continue;
		if (sized ? address - start < size : address == start)
			return 1;
	}
	return 0;
}

/* A function addr2line named from the symbol table alone (no file:line):
 * kept only when the address is inside that symbol. */
static void check_symbol_extents(struct symbolizer *s, const char *path, struct sym_request *reqs, size_t n)
{
	char *listing = NULL;
	for (size_t i = 0; i < n; i++) {
		struct sym_request *r = &reqs[i];
		if (!r->function || r->source)
			continue;
		if (!listing && !(listing = symbol_listing(s, path)))
			listing = xstrdup("");
		if (symbol_holds(listing, r->function, r->address))
			continue;
		free(r->function);
		free(r->inlined);
		r->function = r->inlined = NULL;
		r->resolved = 0;
	}
	free(listing);
}

void symbolize_requests(struct symbolizer *s, struct sym_request *reqs, size_t n)
{
	for (size_t start = 0; start < n;) {
		size_t end = start + 1;
		while (end < n && !strcmp(object_of(&reqs[end]), object_of(&reqs[start])))
			end++;
		char *path = find_module(s, &reqs[start]);
		if (path) {
			symbolize_module(s, path, reqs + start, end - start);
			check_symbol_extents(s, path, reqs + start, end - start);
			const char *debug_file = debuginfod_debug_file(s, path, reqs + start, end - start);
			if (debug_file) {
				symbolize_module(s, debug_file, reqs + start, end - start);
				check_symbol_extents(s, debug_file, reqs + start, end - start);
			}
		} else if (s->note) {
			char *msg = xasprintf("module %s not found: its frames keep module+offset "
					      "(--symbols DIR says where it is)", reqs[start].module);
			s->note(msg, s->ctx);
			free(msg);
		}
		free(path);
		start = end;
	}
}

void sym_request_free(struct sym_request *r)
{
	free(r->function);
	free(r->source);
	free(r->inlined);
	memset(r, 0, sizeof(*r));
}

void symbolizer_free(struct symbolizer *s)
{
	for (size_t i = 0; i < s->ndirs; i++)
		free(s->dirs[i]);
	free(s->dirs);
	debuginfod_cache_free(s->debuginfod);
	memset(s, 0, sizeof(*s));
}
