/* dwarf_form.h - reading one DWARF attribute value by its form (DWARF 2-5 and
 * the GNU extensions gcc and dwz emit), enough to find strings and numbers in
 * line table headers and compile unit DIEs and to skip everything else. */
#ifndef LOCKDEP_RCU_DWARF_FORM_H
#define LOCKDEP_RCU_DWARF_FORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/byte_reader.h"

/* What the size of some forms depends on: the unit's header. */
struct dwarf_format {
	unsigned version;      /* 2..5 */
	unsigned offset_size;  /* 4: 32-bit DWARF, 8: 64-bit DWARF */
	unsigned address_size; /* 8 on x86-64 */
};

/* String sections that strp forms point into (inflated, may be empty). */
struct dwarf_strings {
	const unsigned char *str;      /* .debug_str */
	size_t str_size;
	const unsigned char *line_str; /* .debug_line_str */
	size_t line_str_size;
};

struct dwarf_value {
	uint64_t number;    /* constants, offsets, indexes, block lengths */
	const char *string; /* string forms we can resolve here, else NULL */
};

/* Reads the value of one attribute of this form at r and leaves r after it.
 * implicit_const is the value DW_FORM_implicit_const carries in the abbrev.
 * False on a form we do not know (the rest of the DIE is then unreadable)
 * or on truncated data. Strings through .debug_str_offsets (strx) or a
 * supplementary file (dwz's alt forms) are skipped, not resolved. */
bool dwarf_read_form(struct byte_reader *r, uint64_t form, const struct dwarf_format *format,
		     const struct dwarf_strings *strings, int64_t implicit_const,
		     struct dwarf_value *value);

/* unit_length: 4 bytes, or 0xffffffff and 8 bytes for 64-bit DWARF. Sets
 * *offset_size; returns the length, 0 on truncation or a reserved value. */
uint64_t dwarf_read_unit_length(struct byte_reader *r, unsigned *offset_size);

#endif
