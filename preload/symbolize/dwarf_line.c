/* dwarf_line.c - runs the line number programs of .debug_line (DWARF 2-5) and
 * keeps their rows, with an address-sorted index of their sequences. Two
 * passes over the unit headers: the first counts files and bytes to size the
 * arrays, the second decodes. Rows are written once, where they stay: in
 * this VM a fresh page costs ~17 us, more than decoding what it holds. */
#include "symbolize/dwarf_line.h"

#include <string.h>

#include "base/byte_reader.h"
#include "symbolize/dwarf_comp_dir.h"
#include "symbolize/dwarf_constants.h"
#include "symbolize/dwarf_form.h"
#include "base/tracer_sort.h"

/* DWARF 5 describes directory and file entries by (content, form) pairs:
 * gcc uses 1 for directories and 2 or 3 (path, directory, MD5) for files. */
enum { LINE_ENTRY_FORMATS_MAX = 16 };

/* A sequence shorter than this (one row and its end) still names code. */
enum { SEQUENCE_ROWS_MIN = 2 };

/* ---- unit headers ---------------------------------------------------------- */

struct line_header {
	uint64_t offset; /* of the unit in .debug_line */
	struct dwarf_format format;
	unsigned min_inst_length;
	unsigned max_ops; /* operations per instruction: 1 except on VLIW */
	int line_base;
	unsigned line_range;
	unsigned opcode_base;
	const unsigned char *opcode_lengths; /* arguments of opcodes 1..opcode_base-1 */
	struct byte_reader tables;  /* directory and file tables */
	struct byte_reader program; /* the line number program */
};

/* Reads the next unit's header and steps `units` past the unit. False when
 * the unit cannot be used; *more says whether units can go on after it. */
static bool read_line_header(struct byte_reader *units, const unsigned char *section,
			     struct line_header *h, bool *more)
{
	h->offset = (uint64_t)(units->at - section);
	uint64_t length = dwarf_read_unit_length(units, &h->format.offset_size);
	*more = length != 0 && length <= byte_reader_left(units);
	if (!*more)
		return false;
	struct byte_reader unit = byte_reader_init(units->at, length);
	units->at += length;

	h->format.version = read_u16(&unit);
	h->format.address_size = 8;
	if (h->format.version < 2 || h->format.version > 5)
		return false;
	if (h->format.version >= 5) {
		h->format.address_size = read_u8(&unit);
		unsigned segment_selector_size = read_u8(&unit);
		if (segment_selector_size != 0 || h->format.address_size > 8)
			return false;
	}
	uint64_t header_length = read_unsigned(&unit, h->format.offset_size);
	if (unit.failed || header_length > byte_reader_left(&unit))
		return false;
	struct byte_reader header = byte_reader_init(unit.at, header_length);
	h->program = byte_reader_init(unit.at + header_length, byte_reader_left(&unit) - header_length);

	h->min_inst_length = read_u8(&header);
	h->max_ops = h->format.version >= 4 ? read_u8(&header) : 1;
	read_u8(&header); /* default_is_stmt: every row counts here, as in libdw */
	h->line_base = (int8_t)read_u8(&header);
	h->line_range = read_u8(&header);
	h->opcode_base = read_u8(&header);
	h->opcode_lengths = h->opcode_base > 0 ? read_bytes(&header, h->opcode_base - 1) : NULL;
	h->tables = header;
	/* line_range divides every special opcode, max_ops every advance */
	return !header.failed && h->line_range != 0 && h->max_ops != 0 && h->opcode_base != 0;
}

/* ---- directory and file tables --------------------------------------------- */

/* Where pass 2 puts a unit's directories and files; NULL arrays: count only. */
struct file_table_out {
	const char **dirs;
	size_t dirs_capacity;
	struct line_file *files;
	size_t files_capacity;
	const char *comp_dir; /* DWARF 2-4: directory 0, from .debug_info;
			       * DWARF 5: set from directory 0 */
	bool uses_strp;       /* DWARF 5: an entry format names .debug_str */
};

struct entry_format {
	uint64_t content; /* DW_LNCT_* */
	uint64_t form;
};

static bool read_entry_formats(struct byte_reader *r, struct entry_format *formats,
			       unsigned *count, struct file_table_out *out)
{
	*count = read_u8(r);
	if (*count > LINE_ENTRY_FORMATS_MAX)
		return false;
	for (unsigned i = 0; i < *count; i++) {
		formats[i].content = read_uleb128(r);
		formats[i].form = read_uleb128(r);
		if (formats[i].form == DW_FORM_strp)
			out->uses_strp = true;
	}
	return !r->failed;
}

/* One DWARF 5 directory or file entry: its path and directory index. An
 * entry that takes no bytes could repeat 2^64 times: refused. */
static bool read_entry(struct byte_reader *r, const struct entry_format *formats, unsigned count,
		       const struct dwarf_format *format, const struct dwarf_strings *strings,
		       const char **path, uint64_t *dir_index)
{
	const unsigned char *start = r->at;
	*path = NULL;
	*dir_index = UINT64_MAX;
	for (unsigned i = 0; i < count; i++) {
		struct dwarf_value value;
		if (!dwarf_read_form(r, formats[i].form, format, strings, 0, &value))
			return false;
		if (formats[i].content == DW_LNCT_path)
			*path = value.string;
		else if (formats[i].content == DW_LNCT_directory_index)
			*dir_index = value.number;
	}
	return r->at > start;
}

static const char *dir_at(const struct file_table_out *out, size_t dir_count, uint64_t index)
{
	if (out->dirs == NULL || index >= dir_count || index >= out->dirs_capacity)
		return NULL;
	return out->dirs[index];
}

static void add_file(struct file_table_out *out, size_t *file_count, const char *name,
		     const char *dir)
{
	if (out->files != NULL && *file_count < out->files_capacity)
		out->files[*file_count] = (struct line_file){ name, dir };
	(*file_count)++;
}

/* DWARF 5: directory 0 is the compilation directory, files count from 0. */
static bool read_tables_v5(struct line_header *h, const struct dwarf_strings *strings,
			   struct file_table_out *out, size_t *dir_count, size_t *file_count)
{
	struct byte_reader *r = &h->tables;
	struct entry_format formats[LINE_ENTRY_FORMATS_MAX];
	unsigned format_count;
	const char *path;
	uint64_t index;

	if (!read_entry_formats(r, formats, &format_count, out))
		return false;
	uint64_t dirs = read_uleb128(r);
	for (uint64_t i = 0; i < dirs && !r->failed; i++) {
		if (!read_entry(r, formats, format_count, &h->format, strings, &path, &index))
			return false;
		if (out->dirs != NULL && *dir_count < out->dirs_capacity)
			out->dirs[*dir_count] = path;
		(*dir_count)++;
	}
	out->comp_dir = dir_at(out, *dir_count, 0);

	if (!read_entry_formats(r, formats, &format_count, out))
		return false;
	uint64_t files = read_uleb128(r);
	for (uint64_t i = 0; i < files && !r->failed; i++) {
		if (!read_entry(r, formats, format_count, &h->format, strings, &path, &index))
			return false;
		add_file(out, file_count, path, dir_at(out, *dir_count, index));
	}
	return !r->failed;
}

/* DWARF 2-4: directory 0 is implicit (the compilation directory), the
 * others and the files are NUL-terminated lists; files count from 1. */
static bool read_tables_v2(struct line_header *h, struct file_table_out *out, size_t *dir_count,
			   size_t *file_count)
{
	struct byte_reader *r = &h->tables;
	if (out->dirs != NULL && out->dirs_capacity > 0)
		out->dirs[0] = out->comp_dir;
	*dir_count = 1;
	for (;;) {
		const char *dir = read_cstring(r);
		if (dir == NULL)
			return false;
		if (dir[0] == '\0')
			break;
		if (out->dirs != NULL && *dir_count < out->dirs_capacity)
			out->dirs[*dir_count] = dir;
		(*dir_count)++;
	}
	for (;;) {
		const char *name = read_cstring(r);
		if (name == NULL)
			return false;
		if (name[0] == '\0')
			break;
		uint64_t index = read_uleb128(r);
		read_uleb128(r); /* modification time */
		read_uleb128(r); /* file length */
		add_file(out, file_count, name, dir_at(out, *dir_count, index));
	}
	return !r->failed;
}

static bool read_file_tables(struct line_header *h, const struct dwarf_strings *strings,
			     struct file_table_out *out, size_t *dir_count, size_t *file_count)
{
	*dir_count = *file_count = 0;
	if (h->format.version >= 5)
		return read_tables_v5(h, strings, out, dir_count, file_count);
	return read_tables_v2(h, out, dir_count, file_count);
}

/* ---- running the line programs --------------------------------------------- */

/* Rows go straight to their final place (an arena block sized by pass 1,
 * trimmed after); sequences to scratch pages until they are sorted. */
struct line_builder {
	struct line_row *rows;
	size_t row_count, row_capacity;
	struct line_sequence *sequences;
	size_t sequence_count, sequence_capacity;
	uint64_t low, high; /* the object's file addresses */
	const char *comp_dir; /* of the unit being decoded */
	/* the sequence being decoded */
	bool open;
	bool broken; /* addresses went backwards, or out of room */
	size_t first_row;
	uint64_t start;
};

/* The unit's file register mapped to the global file table. */
struct unit_files {
	size_t first;  /* the unit's first file in line_table.files */
	size_t count;
	bool from_one; /* DWARF 2-4 number files from 1 */
};

static uint32_t global_file(const struct unit_files *files, uint64_t file)
{
	if (files->from_one) {
		if (file == 0)
			return LINE_NO_FILE;
		file--;
	}
	if (file >= files->count || files->first + file >= LINE_NO_FILE)
		return LINE_NO_FILE;
	return (uint32_t)(files->first + file);
}

/* line is the line register: unsigned arithmetic, so corrupt advances wrap
 * instead of overflowing; a value that is not a positive int is no line. */
static void add_row(struct line_builder *b, uint64_t address, uint32_t file, uint64_t line)
{
	uint32_t stored_line = line > 0 && line <= INT32_MAX ? (uint32_t)line : 0;
	if (!b->open) {
		b->open = true;
		b->broken = false;
		b->first_row = b->row_count;
		b->start = address;
	}
	if (b->broken)
		return;
	if (address < b->start || address - b->start > UINT32_MAX) {
		b->broken = true; /* DWARF: addresses only grow in a sequence */
		return;
	}
	uint32_t offset = (uint32_t)(address - b->start);
	if (b->row_count > b->first_row) {
		struct line_row *last = &b->rows[b->row_count - 1];
		if (offset < last->offset) {
			b->broken = true;
			return;
		}
		if (offset == last->offset) {
			last->file = file; /* a later row at one address wins */
			last->line = stored_line;
			return;
		}
		if (last->file == file && last->line == stored_line)
			return; /* the last row already covers this address */
	}
	if (b->row_count == b->row_capacity) {
		b->broken = true;
		return;
	}
	b->rows[b->row_count++] = (struct line_row){ offset, stored_line, file };
}

/* DW_LNE_end_sequence: keeps the sequence when it is well-formed and in the
 * object; a function the linker dropped starts at address 0 (or at the
 * tombstone -1), and its rows are discarded right away. */
static void end_sequence(struct line_builder *b, uint64_t address)
{
	if (!b->open)
		return;
	b->open = false;
	size_t first = b->first_row;
	if (!b->broken && b->row_count > first && b->row_count < b->row_capacity &&
	    address >= b->start && address - b->start <= UINT32_MAX &&
	    address - b->start >= b->rows[b->row_count - 1].offset && b->start != 0 &&
	    b->start >= b->low && b->start < b->high && b->row_count < UINT32_MAX &&
	    b->sequence_count < b->sequence_capacity) {
		b->rows[b->row_count++] =
			(struct line_row){ (uint32_t)(address - b->start), 0, LINE_NO_FILE };
		b->sequences[b->sequence_count++] = (struct line_sequence){
			.start = b->start,
			.end = address,
			.first_row = (uint32_t)first,
			.row_count = (uint32_t)(b->row_count - first),
			.comp_dir = b->comp_dir,
		};
		return;
	}
	b->row_count = first;
}

struct line_state {
	uint64_t address;
	uint64_t op_index;
	uint64_t file;
	uint64_t line; /* signed in DWARF; kept unsigned so it wraps, not overflows */
};

static void reset_state(struct line_state *s)
{
	*s = (struct line_state){ .address = 0, .op_index = 0, .file = 1, .line = 1 };
}

/* DWARF 4 6.2.5.1: the operation advance, general enough for VLIW. */
static void advance(struct line_state *s, const struct line_header *h, uint64_t operations)
{
	uint64_t ops = s->op_index + operations;
	s->address += h->min_inst_length * (ops / h->max_ops);
	s->op_index = ops % h->max_ops;
}

static void run_program(struct line_header *h, const struct unit_files *files,
			struct line_builder *b)
{
	struct byte_reader *r = &h->program;
	struct line_state s;
	reset_state(&s);
	/* every opcode consumes at least one byte: the loop is bounded */
	while (byte_reader_left(r) > 0) {
		unsigned opcode = read_u8(r);
		if (opcode >= h->opcode_base) { /* special opcode: advance and add a row */
			unsigned adjusted = opcode - h->opcode_base;
			advance(&s, h, adjusted / h->line_range);
			s.line += (uint64_t)(int64_t)(h->line_base + (int)(adjusted % h->line_range));
			add_row(b, s.address, global_file(files, s.file), s.line);
			continue;
		}
		if (opcode == 0) { /* extended opcode, length-prefixed */
			uint64_t length = read_uleb128(r);
			if (length == 0 || length > byte_reader_left(r))
				break;
			struct byte_reader op = byte_reader_init(r->at, length);
			r->at += length;
			unsigned sub = read_u8(&op);
			if (sub == DW_LNE_end_sequence) {
				end_sequence(b, s.address);
				reset_state(&s);
			} else if (sub == DW_LNE_set_address && (length - 1 == 8 || length - 1 == 4)) {
				s.address = read_unsigned(&op, length - 1);
				s.op_index = 0;
			}
			/* DW_LNE_define_file (DWARF 2-4, unused by gcc) adds no
			 * file here: rows naming it print no file:line */
			continue;
		}
		switch (opcode) {
		case DW_LNS_copy:
			add_row(b, s.address, global_file(files, s.file), s.line);
			break;
		case DW_LNS_advance_pc:
			advance(&s, h, read_uleb128(r));
			break;
		case DW_LNS_advance_line:
			s.line += (uint64_t)read_sleb128(r);
			break;
		case DW_LNS_set_file:
			s.file = read_uleb128(r);
			break;
		case DW_LNS_const_add_pc:
			advance(&s, h, (255 - h->opcode_base) / h->line_range);
			break;
		case DW_LNS_fixed_advance_pc:
			s.address += read_u16(r);
			s.op_index = 0;
			break;
		case DW_LNS_negate_stmt:
		case DW_LNS_set_basic_block:
		case DW_LNS_set_prologue_end:
		case DW_LNS_set_epilogue_begin:
			break;
		default: /* set_column, set_isa, and opcodes newer than we know */
			for (unsigned i = 0; i < h->opcode_lengths[opcode - 1] && !r->failed; i++)
				read_uleb128(r);
			break;
		}
	}
	/* a sequence without its end is not trusted */
	if (b->open) {
		b->open = false;
		b->row_count = b->first_row;
	}
}

/* ---- the whole section ------------------------------------------------------ */

struct dwarf_sections {
	struct elf_bytes line;
	struct dwarf_strings strings;
	struct comp_dir_map comp_dirs; /* built only for DWARF 2-4 tables */
};

static struct elf_bytes load_section(const struct dwarf_source *source, const char *name)
{
	struct elf_bytes bytes;
	const Elf64_Shdr *section = elf_section_named(source->image, name);
	if (!elf_section_contents(source->image, section, source->arena, source->tables, &bytes))
		bytes = (struct elf_bytes){ NULL, 0 };
	return bytes;
}

/* What pass 1 learns: the sizes for pass 2, and which sections it needs. */
struct line_census {
	size_t files;       /* in all units */
	size_t max_dirs;    /* in one unit */
	size_t program_bytes;
	bool uses_strp;     /* some DWARF 5 entry names .debug_str */
	bool has_v2_to_v4;  /* some unit needs comp_dir from .debug_info */
};

static void count_units(const struct dwarf_sections *dwarf, struct line_census *census)
{
	*census = (struct line_census){ 0 };
	struct byte_reader units = byte_reader_init(dwarf->line.data, dwarf->line.size);
	bool more = true;
	while (more && byte_reader_left(&units) > 0) {
		struct line_header h;
		struct file_table_out count_only = { 0 };
		size_t dirs, files;
		if (!read_line_header(&units, dwarf->line.data, &h, &more) ||
		    !read_file_tables(&h, &dwarf->strings, &count_only, &dirs, &files))
			continue;
		census->files += files;
		census->max_dirs = dirs > census->max_dirs ? dirs : census->max_dirs;
		census->program_bytes += byte_reader_left(&h.program);
		census->uses_strp |= count_only.uses_strp;
		census->has_v2_to_v4 |= h.format.version < 5;
	}
}

/* Pass 2: each unit's files into the table, its rows into the builder. */
static void decode_units(struct dwarf_sections *dwarf, struct line_file *files,
			 size_t files_capacity, size_t *file_count, const char **dirs,
			 size_t dirs_capacity, struct line_builder *b)
{
	struct byte_reader units = byte_reader_init(dwarf->line.data, dwarf->line.size);
	bool more = true;
	*file_count = 0;
	while (more && byte_reader_left(&units) > 0) {
		struct line_header h;
		if (!read_line_header(&units, dwarf->line.data, &h, &more))
			continue;
		struct file_table_out out = {
			.dirs = dirs,
			.dirs_capacity = dirs_capacity,
			.files = files + *file_count,
			.files_capacity = files_capacity - *file_count,
			.comp_dir = h.format.version < 5 ? comp_dir_map_find(&dwarf->comp_dirs, h.offset)
							 : NULL,
		};
		size_t dir_count, unit_files;
		if (!read_file_tables(&h, &dwarf->strings, &out, &dir_count, &unit_files) ||
		    unit_files > out.files_capacity)
			continue;
		struct unit_files mapping = { *file_count, unit_files, h.format.version < 5 };
		*file_count += unit_files;
		b->comp_dir = out.comp_dir;
		run_program(&h, &mapping, b);
	}
}

/* Orders by start; ties (only in corrupt data) by position, so the order is
 * fixed although the sort is not stable. */
static int by_start(const void *a, const void *b)
{
	const struct line_sequence *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->first_row < y->first_row ? -1 : x->first_row > y->first_row;
}

/* The sorted sequence index, into the arena; a sequence overlapping the one
 * before it (corrupt or duplicated data) is left out. */
static bool index_sequences(struct line_table *table, struct line_builder *b,
			    struct tracer_arena *arena)
{
	tracer_sort(b->sequences, b->sequence_count, sizeof *b->sequences, by_start);
	size_t kept = 0;
	for (size_t i = 0; i < b->sequence_count; i++) {
		if (kept > 0 && b->sequences[i].start < b->sequences[kept - 1].end)
			continue;
		b->sequences[kept++] = b->sequences[i];
	}
	struct line_sequence *sequences = tracer_arena_alloc(arena, kept * sizeof *sequences);
	if (kept == 0 || sequences == NULL)
		return false;
	memcpy(sequences, b->sequences, kept * sizeof *sequences);
	table->sequences = sequences;
	table->sequence_count = kept;
	return true;
}

bool line_table_build(struct line_table *table, const struct dwarf_source *source,
		      uint64_t low, uint64_t high)
{
	*table = (struct line_table){ 0 };
	struct dwarf_sections dwarf = { 0 };
	dwarf.line = load_section(source, ".debug_line");
	if (dwarf.line.size == 0)
		return false;
	struct elf_bytes line_str = load_section(source, ".debug_line_str");
	dwarf.strings.line_str = line_str.data;
	dwarf.strings.line_str_size = line_str.size;

	struct line_census census;
	count_units(&dwarf, &census);
	if (census.program_bytes == 0 || census.files >= LINE_NO_FILE)
		return false;
	/* gcc's DWARF 5 tables name everything in .debug_line_str: the other
	 * sections are inflated only for tables that need them */
	if (census.uses_strp || census.has_v2_to_v4) {
		struct elf_bytes str = load_section(source, ".debug_str");
		dwarf.strings.str = str.data;
		dwarf.strings.str_size = str.size;
	}
	if (census.has_v2_to_v4) {
		struct elf_bytes info = load_section(source, ".debug_info");
		struct elf_bytes abbrev = load_section(source, ".debug_abbrev");
		comp_dir_map_build(&dwarf.comp_dirs, info.data, info.size, abbrev.data, abbrev.size,
				   &dwarf.strings);
	}

	/* Upper bounds: a row takes at least one opcode byte, a kept sequence
	 * two rows. Only the pages actually written are ever touched. */
	struct line_builder b = {
		.row_capacity = census.program_bytes,
		.sequence_capacity = census.program_bytes / SEQUENCE_ROWS_MIN + 1,
		.low = low,
		.high = high,
	};
	size_t dirs_size = (census.max_dirs + 1) * sizeof(const char *);
	size_t rows_size = b.row_capacity * sizeof *b.rows;
	struct line_file *files = tracer_arena_alloc(source->arena, census.files * sizeof *files);
	b.rows = tracer_arena_alloc(source->arena, rows_size); /* the arena's last block */
	b.sequences = tracer_pages_map(b.sequence_capacity * sizeof *b.sequences);
	const char **dirs = tracer_pages_map(dirs_size);
	bool built = false;
	if (files != NULL && b.rows != NULL && b.sequences != NULL && dirs != NULL) {
		size_t file_count;
		decode_units(&dwarf, files, census.files, &file_count, dirs, census.max_dirs, &b);
		tracer_arena_shrink(source->arena, b.rows, rows_size, b.row_count * sizeof *b.rows);
		table->rows = b.rows;
		table->files = files;
		table->file_count = file_count;
		built = index_sequences(table, &b, source->arena);
	}
	tracer_pages_unmap(b.sequences, b.sequence_capacity * sizeof *b.sequences);
	tracer_pages_unmap(dirs, dirs_size);
	comp_dir_map_free(&dwarf.comp_dirs);
	if (!built)
		*table = (struct line_table){ 0 };
	return built;
}

bool line_table_find(const struct line_table *table, uint64_t address,
		     struct line_location *location)
{
	size_t lo = 0, hi = table->sequence_count; /* the first sequence above */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (table->sequences[mid].start <= address)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || address >= table->sequences[lo - 1].end)
		return false;
	const struct line_sequence *seq = &table->sequences[lo - 1];
	const struct line_row *rows = table->rows + seq->first_row;
	uint32_t offset = (uint32_t)(address - seq->start);
	lo = 0, hi = seq->row_count; /* the first row above */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rows[mid].offset <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	const struct line_row *row = &rows[lo - 1];
	if (row->line == 0 || row->file >= table->file_count || table->files[row->file].name == NULL)
		return false;
	location->file = &table->files[row->file];
	location->comp_dir = seq->comp_dir;
	location->line = row->line;
	return true;
}
