/* dwarf_comp_dir.h - the compilation directory of each line table. DWARF 2-4
 * line tables leave directory 0 implicit: it is the DW_AT_comp_dir of the
 * compile unit whose DW_AT_stmt_list points at the table, in .debug_info.
 * (DWARF 5 tables list it themselves and need none of this.) */
#ifndef LOCKDEP_RCU_DWARF_COMP_DIR_H
#define LOCKDEP_RCU_DWARF_COMP_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/dwarf_form.h"

struct comp_dir_entry {
	uint64_t line_offset; /* DW_AT_stmt_list: the table's .debug_line offset */
	const char *comp_dir; /* NULL when the unit has none we can read */
};

/* Invariant: sorted by line_offset. Lives in scratch pages. */
struct comp_dir_map {
	struct comp_dir_entry *entries;
	size_t count;
	size_t capacity;
};

/* Reads the first DIE of every unit of .debug_info (its abbreviations from
 * .debug_abbrev). The strings point into the given sections. False when
 * nothing could be read; a corrupt unit ends the walk, keeping the others. */
bool comp_dir_map_build(struct comp_dir_map *map, const unsigned char *info, size_t info_size,
			const unsigned char *abbrev, size_t abbrev_size,
			const struct dwarf_strings *strings);

/* The compilation directory for the line table at this offset, or NULL. */
const char *comp_dir_map_find(const struct comp_dir_map *map, uint64_t line_offset);

void comp_dir_map_free(struct comp_dir_map *map);

#endif
