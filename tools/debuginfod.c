#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "debuginfod.h"
#include "symbolizer.h"
#include "splat.h"
#include "util.h"

/* ---- the ELF file: build-id and whether it has DWARF ------------------------ */

static int read_exact(int fd, void *buf, size_t size, uint64_t offset)
{
	if (offset > (uint64_t)INT64_MAX - size)
		return -1;
	ssize_t got = pread(fd, buf, size, (off_t)offset);
	return got == (ssize_t)size ? 0 : -1;
}

static size_t align_up(size_t n, size_t align)
{
	return (n + align - 1) & ~(align - 1);
}

/* The NT_GNU_BUILD_ID in one block of notes; every size checked against it. */
static size_t build_id_in_notes(const unsigned char *notes, size_t size, size_t align, unsigned char *id,
				size_t max)
{
	size_t at = 0;
	while (size - at >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		memcpy(&nh, notes + at, sizeof(nh));
		at += sizeof(nh);
		size_t name_size = align_up(nh.n_namesz, align), desc_size = align_up(nh.n_descsz, align);
		if (name_size < nh.n_namesz || name_size > size - at)
			return 0;
		const unsigned char *name = notes + at;
		at += name_size;
		if (desc_size < nh.n_descsz || desc_size > size - at)
			return 0;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(name, "GNU", 4) && nh.n_descsz &&
		    nh.n_descsz <= max) {
			memcpy(id, notes + at, nh.n_descsz);
			return nh.n_descsz;
		}
		at += desc_size;
	}
	return 0;
}

static int has_debug_info_section(int fd, const Elf64_Ehdr *eh)
{
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || !eh->e_shnum || eh->e_shnum > 4096 ||
	    eh->e_shstrndx >= eh->e_shnum)
		return 0;
	Elf64_Shdr *sections = xcalloc(eh->e_shnum, sizeof(*sections));
	char *names = NULL;
	int found = 0;
	if (read_exact(fd, sections, eh->e_shnum * sizeof(*sections), eh->e_shoff))
		goto out;
	const Elf64_Shdr *strtab = &sections[eh->e_shstrndx];
	if (strtab->sh_size == 0 || strtab->sh_size > (1 << 20))
		goto out;
	names = xmalloc(strtab->sh_size + 1);
	if (read_exact(fd, names, strtab->sh_size, strtab->sh_offset))
		goto out;
	names[strtab->sh_size] = 0;
	for (size_t i = 0; i < eh->e_shnum && !found; i++) {
		const char *name = sections[i].sh_name < strtab->sh_size ? names + sections[i].sh_name : "";
		found = sections[i].sh_type != SHT_NOBITS &&
			(!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"));
	}
out:
	free(names);
	free(sections);
	return found;
}

size_t elf_file_build_id(const char *path, unsigned char *id, size_t max, int *has_dwarf)
{
	*has_dwarf = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	Elf64_Ehdr eh;
	size_t len = 0;
	if (read_exact(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
		goto out;
	*has_dwarf = has_debug_info_section(fd, &eh);
	for (unsigned i = 0; i < eh.e_phnum && i < 4096 && !len; i++) {
		Elf64_Phdr ph;
		if (read_exact(fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)))
			break;
		if (ph.p_type != PT_NOTE || ph.p_filesz == 0 || ph.p_filesz > (1 << 16))
			continue;
		unsigned char *notes = xmalloc(ph.p_filesz);
		if (!read_exact(fd, notes, ph.p_filesz, ph.p_offset))
			len = build_id_in_notes(notes, ph.p_filesz, ph.p_align == 8 ? 8 : 4, id, max);
		free(notes);
	}
out:
	close(fd);
	return len;
}

/* ---- libdebuginfod, loaded when first needed ---------------------------------- */

/* Its API as elfutils' debuginfod.h declares it (stable since 0.179;
 * libdebuginfod-dev is not needed to build). */
typedef struct debuginfod_client debuginfod_client;
typedef int (*debuginfod_progressfn_t)(debuginfod_client *client, long a, long b);

struct debuginfod_api {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *client, const unsigned char *build_id, int build_id_len,
			      char **path);
	void (*set_progressfn)(debuginfod_client *client, debuginfod_progressfn_t fn);
	void (*set_user_data)(debuginfod_client *client, void *data);
	void *(*get_user_data)(debuginfod_client *client);
	void (*end)(debuginfod_client *client);
};

/* The progress callback's way to the library (it gets only the client). */
static struct debuginfod_api loaded_api;

struct cached_build_id {
	unsigned char id[64];
	size_t len;
	char *debug_file;             /* NULL: no server had it */
};

struct debuginfod_cache {
	int tried_loading, loaded;
	struct debuginfod_api api;
	double give_up_at;            /* the run's budget ends (0: not started) */
	int out_of_time;
	struct cached_build_id *ids;
	size_t nids, cap;
};

static void note(struct symbolizer *s, char *message)
{
	if (s->note)
		s->note(message, s->ctx);
	free(message);
}

static int load_library(struct symbolizer *s, struct debuginfod_cache *c)
{
	if (c->tried_loading)
		return c->loaded;
	c->tried_loading = 1;
	/* Kept loaded until exit: libcurl, under it, does not expect to be
	 * unloaded. */
	void *lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *why = dlerror();
		note(s, xasprintf("DEBUGINFOD_URLS is set, but libdebuginfod.so.1 (Debian: libdebuginfod1) "
				  "could not be loaded: %s; stripped modules keep module+offset",
				  why ? why : "not found"));
		return 0;
	}
	*(void **)&c->api.begin = dlsym(lib, "debuginfod_begin");
	*(void **)&c->api.find_debuginfo = dlsym(lib, "debuginfod_find_debuginfo");
	*(void **)&c->api.set_progressfn = dlsym(lib, "debuginfod_set_progressfn");
	*(void **)&c->api.set_user_data = dlsym(lib, "debuginfod_set_user_data");
	*(void **)&c->api.get_user_data = dlsym(lib, "debuginfod_get_user_data");
	*(void **)&c->api.end = dlsym(lib, "debuginfod_end");
	if (!c->api.begin || !c->api.find_debuginfo || !c->api.set_progressfn || !c->api.set_user_data ||
	    !c->api.get_user_data || !c->api.end) {
		note(s, xasprintf("libdebuginfod.so.1 lacks the functions of elfutils 0.179 or later: "
				  "stripped modules keep module+offset"));
		return 0;
	}
	loaded_api = c->api;
	c->loaded = 1;
	return 1;
}

/* The library calls this about once a second while it waits for a server
 * (connecting included); nonzero cancels the query. */

static int past_budget(debuginfod_client *client, long done, long total)
{
	(void)done;
	(void)total;
	const struct debuginfod_cache *c = loaded_api.get_user_data(client);
	return monotonic_seconds() > c->give_up_at;
}

static char *hex(const unsigned char *id, size_t len)
{
	char *text = xmalloc(2 * len + 1);
	for (size_t i = 0; i < len; i++)
		snprintf(text + 2 * i, 3, "%02x", id[i]);
	return text;
}

/* Asks the servers once for this build-id; the answer, found or not, is
 * kept for the rest of the run. */
static const char *fetch(struct symbolizer *s, struct debuginfod_cache *c, const char *path,
			 const unsigned char *id, size_t len)
{
	for (size_t i = 0; i < c->nids; i++)
		if (c->ids[i].len == len && !memcmp(c->ids[i].id, id, len))
			return c->ids[i].debug_file;
	if (c->out_of_time || !load_library(s, c))
		return NULL;
	if (!c->give_up_at)
		c->give_up_at = monotonic_seconds() + DEBUGINFOD_BUDGET_SECONDS;
	char *debug_file = NULL;
	char *id_text = hex(id, len);
	debuginfod_client *client = c->api.begin();
	if (!client) {
		note(s, xasprintf("debuginfod could not start a client (out of memory?): %s keeps module+offset",
				  path_basename(path)));
	} else {
		c->api.set_user_data(client, c);
		c->api.set_progressfn(client, past_budget);
		int fd = c->api.find_debuginfo(client, id, (int)len, &debug_file);
		c->api.end(client);
		if (fd >= 0) {
			close(fd);
		} else {
			free(debug_file);
			debug_file = NULL;
			if (monotonic_seconds() > c->give_up_at) {
				c->out_of_time = 1;
				note(s, xasprintf("debuginfod: gave up after %.0f s in all (at %s, build-id %s); "
						  "the modules not fetched by then keep module+offset",
						  DEBUGINFOD_BUDGET_SECONDS, path_basename(path), id_text));
			} else {
				note(s, xasprintf("debuginfod has no debug information for %s (build-id %s): %s; "
						  "its frames keep module+offset",
						  path, id_text, strerror(-fd)));
			}
		}
	}
	free(id_text);
	grow(&c->ids, &c->cap, c->nids + 1, sizeof(*c->ids));
	struct cached_build_id *entry = &c->ids[c->nids++];
	memcpy(entry->id, id, len);
	entry->len = len;
	entry->debug_file = debug_file;
	return debug_file;
}

const char *debuginfod_debug_file(struct symbolizer *s, const char *path, struct sym_request *reqs, size_t n)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!urls || !*urls)
		return NULL;
	size_t missing = 0;
	for (size_t i = 0; i < n; i++)
		missing += !reqs[i].source;
	if (!missing)
		return NULL;
	unsigned char id[64];
	int has_dwarf;
	size_t len = elf_file_build_id(path, id, sizeof(id), &has_dwarf);
	/* With DWARF of its own, a frame without a line is one the compiler
	 * described with none (assembly): a server's copy says no more. */
	if (has_dwarf || !len)
		return NULL;
	if (!s->debuginfod)
		s->debuginfod = xcalloc(1, sizeof(*s->debuginfod));
	const char *debug_file = fetch(s, s->debuginfod, path, id, len);
	if (!debug_file)
		return NULL;
	/* A name without a line came from .dynsym: the debug file's symbol
	 * table and lines name it again, better. */
	for (size_t i = 0; i < n; i++) {
		struct sym_request *r = &reqs[i];
		if (r->source)
			continue;
		free(r->function);
		free(r->inlined);
		r->function = r->inlined = NULL;
		r->resolved = 0;
	}
	return debug_file;
}

void debuginfod_cache_free(struct debuginfod_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nids; i++)
		free(c->ids[i].debug_file);
	free(c->ids);
	free(c);
}
