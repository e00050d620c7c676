/* dwarf_comp_dir.c - a walk over the compile unit headers of .debug_info that
 * decodes only each unit's first DIE (the compile unit's), for two attributes. */
#include "symbolize/dwarf_comp_dir.h"

#include "symbolize/dwarf_constants.h"
#include "runtime/tracer_arena.h"
#include "base/tracer_sort.h"

/* The smallest unit: a 32-bit DWARF 2-4 header (11 bytes) with no DIE. */
enum { UNIT_HEADER_MIN = 11 };

/* Positions a reader on the attribute specifications of abbreviation `code`
 * in the table starting at abbrev_offset. Every entry consumes bytes, so the
 * scan ends at the section end at the latest. */
static bool find_abbreviation(const unsigned char *abbrev, size_t abbrev_size,
			      uint64_t abbrev_offset, uint64_t code, struct byte_reader *specs)
{
	if (abbrev_offset >= abbrev_size)
		return false;
	struct byte_reader r = byte_reader_init(abbrev + abbrev_offset, abbrev_size - abbrev_offset);
	while (!r.failed) {
		uint64_t entry = read_uleb128(&r);
		if (entry == 0)
			return false; /* end of this unit's table */
		read_uleb128(&r); /* tag */
		read_u8(&r);      /* has children */
		if (entry == code) {
			*specs = r;
			return !r.failed;
		}
		for (;;) { /* skip this entry's (attribute, form) pairs */
			uint64_t name = read_uleb128(&r);
			uint64_t form = read_uleb128(&r);
			if (form == DW_FORM_implicit_const)
				read_sleb128(&r);
			if ((name == 0 && form == 0) || r.failed)
				break;
		}
	}
	return false;
}

/* The stmt_list and comp_dir of the unit whose first DIE r is on. */
static bool read_unit_die(struct byte_reader *r, const struct dwarf_format *format,
			  const unsigned char *abbrev, size_t abbrev_size, uint64_t abbrev_offset,
			  const struct dwarf_strings *strings, struct comp_dir_entry *entry)
{
	uint64_t code = read_uleb128(r);
	struct byte_reader specs;
	if (code == 0 || !find_abbreviation(abbrev, abbrev_size, abbrev_offset, code, &specs))
		return false;
	bool has_line_table = false;
	entry->comp_dir = NULL;
	while (!specs.failed) {
		uint64_t name = read_uleb128(&specs);
		uint64_t form = read_uleb128(&specs);
		int64_t implicit = form == DW_FORM_implicit_const ? read_sleb128(&specs) : 0;
		if (name == 0 && form == 0)
			break;
		struct dwarf_value value;
		if (!dwarf_read_form(r, form, format, strings, implicit, &value))
			break; /* unknown form: what follows cannot be found */
		if (name == DW_AT_stmt_list) {
			entry->line_offset = value.number;
			has_line_table = true;
		} else if (name == DW_AT_comp_dir) {
			entry->comp_dir = value.string;
		}
	}
	return has_line_table;
}

static int by_line_offset(const void *a, const void *b)
{
	const struct comp_dir_entry *x = a, *y = b;
	return x->line_offset < y->line_offset ? -1 : x->line_offset > y->line_offset;
}

bool comp_dir_map_build(struct comp_dir_map *map, const unsigned char *info, size_t info_size,
			const unsigned char *abbrev, size_t abbrev_size,
			const struct dwarf_strings *strings)
{
	*map = (struct comp_dir_map){ NULL, 0, 0 };
	if (info == NULL || abbrev == NULL || info_size < UNIT_HEADER_MIN)
		return false;
	map->capacity = info_size / UNIT_HEADER_MIN;
	map->entries = tracer_pages_map(map->capacity * sizeof *map->entries);
	if (map->entries == NULL)
		return false;

	struct byte_reader units = byte_reader_init(info, info_size);
	while (byte_reader_left(&units) >= UNIT_HEADER_MIN && map->count < map->capacity) {
		struct dwarf_format format;
		uint64_t length = dwarf_read_unit_length(&units, &format.offset_size);
		if (length == 0 || length > byte_reader_left(&units))
			break;
		struct byte_reader unit = byte_reader_init(units.at, length);
		units.at += length;

		format.version = read_u16(&unit);
		uint64_t abbrev_offset;
		if (format.version >= 2 && format.version <= 4) {
			abbrev_offset = read_unsigned(&unit, format.offset_size);
			format.address_size = read_u8(&unit);
		} else if (format.version == 5) {
			unsigned unit_type = read_u8(&unit);
			format.address_size = read_u8(&unit);
			abbrev_offset = read_unsigned(&unit, format.offset_size);
			if (unit_type == DW_UT_skeleton || unit_type == DW_UT_split_compile)
				skip_bytes(&unit, 8); /* dwo_id */
			else if (unit_type == DW_UT_type || unit_type == DW_UT_split_type)
				continue; /* type units have no line table of their own */
		} else {
			continue;
		}
		if (unit.failed || format.address_size > 8)
			continue;
		struct comp_dir_entry *entry = &map->entries[map->count];
		if (read_unit_die(&unit, &format, abbrev, abbrev_size, abbrev_offset, strings, entry))
			map->count++;
	}
	if (map->count == 0) {
		comp_dir_map_free(map);
		return false;
	}
	tracer_sort(map->entries, map->count, sizeof *map->entries, by_line_offset);
	return true;
}

const char *comp_dir_map_find(const struct comp_dir_map *map, uint64_t line_offset)
{
	size_t lo = 0, hi = map->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (map->entries[mid].line_offset < line_offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < map->count && map->entries[lo].line_offset == line_offset)
		return map->entries[lo].comp_dir;
	return NULL;
}

void comp_dir_map_free(struct comp_dir_map *map)
{
	tracer_pages_unmap(map->entries, map->capacity * sizeof *map->entries);
	*map = (struct comp_dir_map){ NULL, 0, 0 };
}
