/* Offline symbolization of "[module+0xoff]" frames with binutils' addr2line.
 *
 * Why addr2line and not a DWARF library here (the tracer reads ELF and DWARF
 * itself, in the traced process, for its splats):
 *  - the offsets the tracer prints are file addresses, exactly what
 *    "addr2line -e module 0xoff" takes, so the frames a user copies from a
 *    log by hand and the ones resolved here agree;
 *  - it runs in its own process: a corrupt or huge binary can make it fail
 *    or hang, and then we kill it after a deadline and keep the raw frame,
 *    where a library would crash or hang the report ("the reader never
 *    crashes" covers the binaries it is pointed at too);
 *  - one addr2line process resolves hundreds of addresses of one module, so
 *    thousands of logs cost a few process starts, and -i names inlined
 *    functions;
 *  - no build dependency: binutils comes with the compiler (build-essential)
 *    on every machine that builds this project, while linking libdw needs
 *    libdw-dev, and dlopen()ing it (as the tracer once did) means
 *    redeclaring its API by hand.
 * Without addr2line the frames are printed as the tracer wrote them.
 * A module without debug information of its own is looked up by build-id
 * on the debuginfod servers of DEBUGINFOD_URLS, when set (debuginfod.h). */
#ifndef LOCKDEP_RCU_SYMBOLIZER_H
#define LOCKDEP_RCU_SYMBOLIZER_H

#include <stddef.h>

struct sym_request {
	const char *module;       /* basename, as printed in the frame */
	const char *path;         /* the object as the process had it mapped
				   * (from a record), NULL when not known */
	unsigned long address;    /* file address to look up (a return address - 1) */
	char *function;           /* results, owned by the request; NULL if unknown */
	char *source;             /* "file:line" of the innermost inlined function */
	char *inlined;            /* "inner < outer" when functions were inlined */
	int resolved;
};

struct symbolizer {
	char **dirs;              /* where to look for modules, in order */
	size_t ndirs, cap;
	size_t ndirs_first;       /* the first ones (--symbols) come before a
				   * request's own path: unstripped copies */
	double deadline;          /* seconds per addr2line run */
	void (*note)(const char *message, void *ctx);
	void *ctx;
	int missing_tool;         /* addr2line could not be started */
	struct debuginfod_cache *debuginfod; /* build-ids asked this run
				   * (tools/debuginfod.h), NULL until one is */
};

void symbolizer_init(struct symbolizer *s, void (*note)(const char *, void *), void *ctx);
/* Adds a directory (duplicates ignored). */
void symbolizer_add_dir(struct symbolizer *s, const char *dir);
/* The current directory, PATH, and the dynamic loader's directories. */
void symbolizer_add_default_dirs(struct symbolizer *s);
/* Resolves what it can; the requests of one object (its path when known,
 * else its name) come next to each other, and share addr2line runs. A
 * module is looked for by name in the first directories, then at its
 * path, then by name in the other directories. A function name that comes
 * from the symbol table alone (no line information) is kept only when the
 * address is inside that symbol: addr2line names any address after the
 * nearest symbol before it, in a stripped program an exported function
 * kilobytes away. */
void symbolize_requests(struct symbolizer *s, struct sym_request *reqs, size_t n);
void sym_request_free(struct sym_request *r);
void symbolizer_free(struct symbolizer *s);

#endif
