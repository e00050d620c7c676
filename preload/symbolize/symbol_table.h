/* symbol_table.h - one object's function and data symbols, sorted by address
 * so that naming an address is a binary search (a linear scan of libc's 10k
 * debug symbols took ~270 us per lookup). */
#ifndef LOCKDEP_RCU_SYMBOL_TABLE_H
#define LOCKDEP_RCU_SYMBOL_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/elf_image.h"
#include "symbolize/inflate.h"
#include "runtime/tracer_arena.h"

struct symbol {
	uint64_t start;       /* ELF file address (st_value) */
	uint64_t size;        /* 0: unknown, names only its own address */
	const char *name;     /* in the object's mapped string table */
	uint32_t name_length; /* printed part: no "@@GLIBC_2.14" version of
			       * debug .symtab names, noise in a splat */
	unsigned char type;   /* STT_FUNC, STT_OBJECT, ... */
	unsigned char rank;   /* among aliases at one address, higher wins */
};

/* Invariant: sorted by start; aliases at one start in rising preference. */
struct symbol_table {
	const struct symbol *symbols;
	size_t count;
};

/* Reads the code and data symbols of an SHT_SYMTAB or SHT_DYNSYM section of
 * image into the arena. The names point into the image, which must stay
 * mapped as long as the table is used. False when the section is unusable. */
bool symbol_table_read(struct symbol_table *table, const struct elf_image *image,
		       const Elf64_Shdr *section, struct tracer_arena *arena,
		       struct inflate_tables *tables);

/* The symbol enclosing a file address, NULL between symbols. A sizeless
 * symbol (assembly without .size, linker labels) names only its own address. */
const struct symbol *symbol_table_find(const struct symbol_table *table, uint64_t address);

#endif
