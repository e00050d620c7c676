/* dwarf_line.h - an object's DWARF line tables (.debug_line versions 2-5),
 * decoded once into one compact array sorted by address, so that file:line of
 * a code address is a binary search. */
#ifndef LOCKDEP_RCU_DWARF_LINE_H
#define LOCKDEP_RCU_DWARF_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/elf_image.h"
#include "symbolize/inflate.h"
#include "runtime/tracer_arena.h"

enum { LINE_NO_FILE = UINT32_MAX };

/* One row of the line number matrix; it covers the addresses up to the next
 * row of its sequence. Consecutive rows with the same file and line are
 * merged, and of several rows at one address only the last is kept (the one
 * libdw answers with). */
struct line_row {
	uint32_t offset; /* address - its sequence's start */
	uint32_t line;   /* 0: no line here (the sequence's end row, or line 0) */
	uint32_t file;   /* index in line_table.files, LINE_NO_FILE if unknown */
};

/* A contiguous run of code with its rows: one function, or one CU's code. */
struct line_sequence {
	uint64_t start, end;  /* ELF file addresses [start, end) */
	uint32_t first_row;   /* its rows: rows[first_row, first_row + row_count) */
	uint32_t row_count;   /* the last one is the end row, at end - start */
	const char *comp_dir; /* its unit's compilation directory, NULL if unknown */
};

/* A file as its line table names it. The path libdw reports, and we print,
 * is name when absolute, else dir + "/" + name (name alone without dir). */
struct line_file {
	const char *name;
	const char *dir; /* the file's directory entry, NULL if none */
};

/* Invariant: sequences sorted by start and not overlapping. Rows stay in
 * the order they were decoded: a lookup finds the sequence, then the row. */
struct line_table {
	const struct line_sequence *sequences;
	size_t sequence_count;
	const struct line_row *rows;
	const struct line_file *files;
	size_t file_count;
};

/* What line_table_find answers. */
struct line_location {
	const struct line_file *file;
	const char *comp_dir;
	uint32_t line;
};

/* Where the DWARF sections come from: the object itself or its separate
 * debug file. Inflated sections go into the arena; the image must stay
 * mapped while the table is used (file names point into it). */
struct dwarf_source {
	const struct elf_image *image;
	struct tracer_arena *arena;
	struct inflate_tables *tables;
};

/* Decodes every line program of source's .debug_line, keeping sequences
 * that start inside [low, high) (the object's file addresses): those of
 * functions the linker discarded start at 0 or outside. False when there
 * is no usable line table. Corrupt units are skipped, never trusted. */
bool line_table_build(struct line_table *table, const struct dwarf_source *source,
		      uint64_t low, uint64_t high);

/* The file and line of a file address; false when no line is known there. */
bool line_table_find(const struct line_table *table, uint64_t address,
		     struct line_location *location);

#endif
