/* module_list.h - the objects loaded in this process, listed from the dynamic
 * loader (dl_iterate_phdr: works before constructors and sees every dlopen),
 * each with what the symbolizer knows of it: its file and separate debug
 * file, mapped on first use, its symbols and its line table, read on first
 * use, all dropped when the object is unloaded. Not thread-safe: the
 * symbolizer's caller serializes every call. */
#ifndef LOCKDEP_RCU_MODULE_LIST_H
#define LOCKDEP_RCU_MODULE_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/dwarf_line.h"
#include "symbolize/elf_image.h"
#include "symbolize/symbol_table.h"
#include "runtime/tracer_arena.h"

/* Loaded objects tracked at once; objects beyond print as bare addresses. */
enum { MAX_MODULES = 1024 };

struct module {
	bool in_use;
	bool listed;               /* seen by the latest listing */
	uintptr_t low, high;       /* [low, high): its PT_LOAD segments in memory */
	uintptr_t bias;            /* load bias: file address = address - bias */
	const char *loader_name;   /* dlpi_name, to recognize it when relisted */
	const char *path;          /* its file, absolute; NULL: none (the vDSO) */
	const char *name;          /* what splats print: the file's basename */
	unsigned char build_id[BUILD_ID_MAX]; /* as loaded, from its PT_NOTE */
	size_t build_id_len;       /* 0: it has none */
	const void *vdso_image;    /* the vDSO's ELF image in memory, else NULL */
	size_t vdso_image_size;

	/* read on first use, into `arena` and from the mapped images */
	bool files_tried, symbols_tried, lines_tried;
	struct tracer_arena arena;
	struct elf_image object;   /* its file, mapped only if it is what is loaded */
	struct elf_image debug;    /* its separate debug file, if found */
	struct symbol_table symbols;
	struct line_table lines;
};

/* The module containing address, NULL if none. Re-lists the loaded objects
 * first when one was loaded or unloaded since the last listing. */
struct module *module_containing(uintptr_t address);

/* The module's symbols (.symtab of the object or of its debug file, else
 * .dynsym), read on the first call; NULL when it has none. */
const struct symbol_table *module_symbols(struct module *module);

/* The module's line table, decoded on the first call; NULL when none. */
const struct line_table *module_lines(struct module *module);

/* Lists the loaded objects now (cheap when nothing changed). */
void module_list_refresh(void);

/* Drops every module overlapping [lo, hi) and makes the next lookup re-list:
 * an object there is being unloaded, and another may take its place. */
void module_list_forget_range(uintptr_t lo, uintptr_t hi);

#endif
