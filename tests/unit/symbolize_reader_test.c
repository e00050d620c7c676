/* symbolize_reader_test.c - Criterion tests of the symbolizer's readers, in
 * process under ASan/UBSan: the inflater on known zlib streams and on broken
 * ones, heapsort and arena, a hand-written DWARF 2 line program, truncated and
 * corrupted ELF images and compressed sections placed right before an
 * inaccessible page (any read past them faults), and symbolizing this very
 * binary without leaving a descriptor open. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <dirent.h>
#include <elf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/dwarf_line.h"
#include "symbolize/elf_image.h"
#include "symbolize/inflate.h"
#include "symbolize/symbol_table.h"
#include "symbolize/symbolize.h"
#include "runtime/tracer_arena.h"
#include "base/tracer_sort.h"

static struct inflate_tables tables;

/* ---- inflate ---------------------------------------------------------------- */

/* Generated with python3's zlib: level 0 (stored), Z_FIXED (fixed Huffman),
 * level 9 (dynamic Huffman), and a Z_FULL_FLUSH between two halves. */
static const unsigned char stored_stream[] = {
	0x78, 0x01, 0x01, 0x14, 0x00, 0xeb, 0xff, 0x73, 0x74, 0x6f, 0x72, 0x65,
	0x64, 0x3a, 0x20, 0x63, 0x6f, 0x70, 0x69, 0x65, 0x64, 0x20, 0x61, 0x73,
	0x20, 0x69, 0x73, 0x4f, 0x78, 0x07, 0x50,
};
static const unsigned char fixed_stream[] = {
	0x78, 0x01, 0x4b, 0xcb, 0xac, 0x48, 0x4d, 0x51, 0xf0, 0x28, 0x4d, 0x4b,
	0xcb, 0x4d, 0xcc, 0x53, 0x48, 0xce, 0x4f, 0x49, 0x2d, 0xd6, 0x51, 0x48,
	0x23, 0x52, 0x50, 0x11, 0x00, 0xbf, 0xb6, 0x16, 0x23,
};
static const unsigned char dynamic_stream[] = {
	0x78, 0xda, 0xc5, 0x94, 0x31, 0x0e, 0xc2, 0x30, 0x10, 0x04, 0x7b, 0x5e,
	0x91, 0x27, 0x24, 0xce, 0xd9, 0xb1, 0xa9, 0xa1, 0x43, 0x34, 0x14, 0x94,
	0x56, 0x94, 0xb8, 0x40, 0x8a, 0x42, 0x10, 0x0a, 0x12, 0xbf, 0x07, 0x84,
	0xf8, 0xc0, 0x4e, 0x41, 0x67, 0x59, 0x5e, 0xad, 0xef, 0x76, 0xee, 0xa6,
	0xcb, 0x5c, 0xaa, 0x7a, 0x5b, 0xed, 0xce, 0xf9, 0x70, 0x3c, 0xe5, 0x7e,
	0x7c, 0xf4, 0xf3, 0x50, 0xf2, 0x32, 0xfc, 0x6e, 0x86, 0xeb, 0xf2, 0xfc,
	0x9e, 0xf7, 0xb9, 0xcc, 0x63, 0xbe, 0x97, 0xdb, 0x5a, 0xde, 0x4f, 0x36,
	0xd3, 0x47, 0xd9, 0xc8, 0x4a, 0x93, 0x95, 0x49, 0xff, 0x6d, 0x90, 0xa5,
	0xce, 0xcb, 0xd2, 0x56, 0x77, 0x35, 0xbd, 0xd6, 0xa0, 0x37, 0x38, 0xea,
	0xa9, 0x36, 0x35, 0x60, 0xc9, 0x01, 0x5f, 0x33, 0x40, 0x05, 0x20, 0x2a,
	0x01, 0xa4, 0x00, 0x53, 0xce, 0x03, 0xdf, 0xa8, 0xd7, 0xdb, 0x3a, 0x03,
	0x73, 0x00, 0xb6, 0x05, 0xe0, 0xca, 0x0c, 0xf8, 0x46, 0xbd, 0x5e, 0xef,
	0xf4, 0x3e, 0xfb, 0x4e, 0xcf, 0x37, 0x00, 0xae, 0x02, 0xf0, 0xed, 0x40,
	0xbd, 0x1d, 0xe8, 0x73, 0x04, 0xf9, 0x26, 0xc0, 0x55, 0x02, 0x3c, 0x83,
	0x31, 0x02, 0xd3, 0xdb, 0xf8, 0x3f, 0x6d, 0x2b, 0xb0, 0x25, 0x5b, 0xb0,
	0x9d, 0xcd, 0xc8, 0xf4, 0x4a, 0xe9, 0xbe, 0x00, 0x85, 0x16, 0x30, 0x1a,
};
static const unsigned char empty_stream[] = {
	0x78, 0xda, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01,
};
static const unsigned char flushed_long_distance_stream[] = {
	0x78, 0xda, 0xec, 0xc7, 0x41, 0x09, 0x00, 0x20, 0x0c, 0x00, 0x40, 0x23,
	0x8d, 0x21, 0x62, 0x9d, 0x31, 0xec, 0x5f, 0xc1, 0x1a, 0x0a, 0x77, 0xbf,
	0x8b, 0x75, 0xf6, 0xcc, 0x9c, 0xfb, 0xac, 0xe8, 0xaa, 0x8e, 0x4f, 0x3f,
	0x00, 0x00, 0x00, 0x00, 0xe0, 0x61, 0x17, 0x00, 0x00, 0xff, 0xff, 0xed,
	0xc7, 0xd1, 0x09, 0x00, 0x20, 0x08, 0x00, 0x51, 0x47, 0x92, 0x10, 0x71,
	0x1d, 0x11, 0x77, 0xa8, 0xa6, 0x6f, 0x89, 0x3e, 0x0a, 0xee, 0x71, 0x3f,
	0x27, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x70, 0x87, 0x7a, 0x87, 0x8d,
	0x61, 0xd1, 0xae, 0x95, 0x59, 0xbf, 0xfe, 0x5c, 0xfb, 0xc1, 0x0e, 0xd0,
	0x23, 0xb2, 0xf5,
};

/* What the streams above decode to, built here the way python built them. */
static size_t dynamic_text(unsigned char *out, size_t size)
{
	size_t len = 0;
	for (int i = 0; i < 40 && len < size; i++)
		len += (size_t)snprintf((char *)out + len, size - len,
					"line %d: DW_LNS_advance_pc DW_LNS_copy DW_LNE_end_sequence\n",
					i * i % 1000);
	return len;
}

static size_t long_distance_text(unsigned char *out)
{
	size_t len = 0;
	for (int copy = 0; copy < 2; copy++) {
		for (int i = 0; i < 200; i++)
			out[len++] = (unsigned char)"0123456789abcdef"[(i * 37 + i * i) % 16];
		if (copy == 0) {
			memset(out + len, 0, 9000);
			len += 9000;
		}
	}
	for (int i = 0; i < 50; i++) {
		memcpy(out + len, "xyz", 3);
		len += 3;
	}
	return len;
}

struct vector {
	const char *name;
	const unsigned char *stream;
	size_t stream_size;
	unsigned char expected[16384];
	size_t expected_size;
};

static struct vector vectors[5];

static void load_vectors(void)
{
#define VECTOR(i, array) \
	vectors[i].name = #array, vectors[i].stream = array, vectors[i].stream_size = sizeof array
	VECTOR(0, stored_stream);
	VECTOR(1, fixed_stream);
	VECTOR(2, dynamic_stream);
	VECTOR(3, empty_stream);
	VECTOR(4, flushed_long_distance_stream);
#undef VECTOR
	const char *stored = "stored: copied as is";
	const char *fixed = "fixed Huffman codes, fixed Huffman codes, fixed Huffman codes!";
	memcpy(vectors[0].expected, stored, vectors[0].expected_size = strlen(stored));
	memcpy(vectors[1].expected, fixed, vectors[1].expected_size = strlen(fixed));
	vectors[2].expected_size = dynamic_text(vectors[2].expected, sizeof vectors[2].expected);
	vectors[3].expected_size = 0;
	vectors[4].expected_size = long_distance_text(vectors[4].expected);
}

/* Inflates from an exact-size heap copy into an exact-size heap buffer, so
 * ASan sees any byte read or written outside them. */
static bool inflate_exact(const unsigned char *stream, size_t stream_size, size_t out_size,
			  unsigned char *result)
{
	unsigned char *in = malloc(stream_size ? stream_size : 1);
	unsigned char *out = malloc(out_size ? out_size : 1);
	memcpy(in, stream, stream_size);
	bool ok = inflate_zlib(in, stream_size, out, out_size, &tables);
	if (ok && result)
		memcpy(result, out, out_size);
	free(in);
	free(out);
	return ok;
}

Test(inflate, known_streams)
{
	load_vectors();
	unsigned char out[16384];
	for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
		const struct vector *v = &vectors[i];
		cr_expect(inflate_exact(v->stream, v->stream_size, v->expected_size, out),
			  "%s did not inflate", v->name);
		cr_expect(memcmp(out, v->expected, v->expected_size) == 0, "%s inflated wrong", v->name);
		/* the size is part of the contract: one byte more or less fails */
		cr_expect(!inflate_exact(v->stream, v->stream_size, v->expected_size + 1, NULL),
			  "%s accepted a larger output", v->name);
		if (v->expected_size > 0)
			cr_expect(!inflate_exact(v->stream, v->stream_size, v->expected_size - 1, NULL),
				  "%s overflowed a smaller output", v->name);
	}
}

Test(inflate, truncated_streams_fail)
{
	load_vectors();
	for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
		const struct vector *v = &vectors[i];
		for (size_t len = 0; len < v->stream_size; len++)
			cr_expect(!inflate_exact(v->stream, len, v->expected_size, NULL),
				  "%s cut to %zu bytes inflated", v->name, len);
	}
}

Test(inflate, corrupted_streams_fail_or_decode_right)
{
	load_vectors();
	unsigned char copy[512], out[16384];
	for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
		const struct vector *v = &vectors[i];
		/* every bit of the headers and code tables, then every 5th */
		for (size_t bit = 0; bit < v->stream_size * 8; bit += bit < 512 ? 1 : 5) {
			memcpy(copy, v->stream, v->stream_size);
			copy[bit / 8] ^= (unsigned char)(1u << (bit % 8));
			/* a flip in padding bits is harmless; any other must fail */
			if (inflate_exact(copy, v->stream_size, v->expected_size, out))
				cr_expect(memcmp(out, v->expected, v->expected_size) == 0,
					  "%s with bit %zu flipped decoded to other data", v->name, bit);
		}
	}
}

Test(inflate, garbage_and_bad_headers)
{
	unsigned char junk[600];
	unsigned long seed = 12345;
	for (int round = 0; round < 1000; round++) {
		size_t len = 2 + (size_t)(round * 7 % 590);
		for (size_t i = 0; i < len; i++) {
			seed = seed * 6364136223846793005ul + 1442695040888963407ul;
			junk[i] = (unsigned char)(seed >> 56);
		}
		junk[0] = 0x78, junk[1] = 0xda; /* a valid zlib header: reach the blocks */
		inflate_exact(junk, len, (size_t)(seed >> 40) % 4096, NULL);
	}
	const unsigned char not_deflate[] = { 0x79, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01 };
	const unsigned char bad_check[] = { 0x78, 0x9d, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01 };
	const unsigned char dictionary[] = { 0x78, 0xbb, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01 };
	const unsigned char block_type_3[] = { 0x78, 0x9c, 0x07, 0x00, 0x00, 0x00, 0x00, 0x01 };
	cr_expect(inflate_exact(empty_stream, sizeof empty_stream, 0, NULL));
	cr_expect(!inflate_exact(not_deflate, sizeof not_deflate, 0, NULL));
	cr_expect(!inflate_exact(bad_check, sizeof bad_check, 0, NULL));
	cr_expect(!inflate_exact(dictionary, sizeof dictionary, 0, NULL));
	cr_expect(!inflate_exact(block_type_3, sizeof block_type_3, 0, NULL));
}

/* ---- heapsort and arena -------------------------------------------------- */

static int by_value(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return x < y ? -1 : x > y;
}

Test(tracer_sort, sorts_any_input)
{
	static long values[5000];
	unsigned long seed = 7;
	for (size_t n = 0; n < 5000; n = n * 3 + 1) {
		for (size_t i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ul + 1;
			values[i] = (long)(seed >> 52); /* many duplicates */
		}
		tracer_sort(values, n, sizeof values[0], by_value);
		for (size_t i = 1; i < n; i++)
			cr_assert(values[i - 1] <= values[i], "n=%zu: unsorted at %zu", n, i);
	}
}

Test(tracer_arena, allocates_shrinks_and_releases)
{
	struct tracer_arena arena = TRACER_ARENA_INIT;
	char *small = tracer_arena_alloc(&arena, 10);
	char *other = tracer_arena_alloc(&arena, 1);
	cr_assert(small && other && small != other);
	cr_expect((uintptr_t)small % TRACER_ARENA_ALIGN == 0 && (uintptr_t)other % TRACER_ARENA_ALIGN == 0);
	memset(small, 1, 10);
	size_t big_size = 8u << 20;
	char *big = tracer_arena_alloc(&arena, big_size);
	cr_assert_not_null(big);
	big[0] = big[big_size - 1] = 2;
	size_t mapped = arena.mapped;
	tracer_arena_shrink(&arena, big, big_size, 4096);
	cr_expect(arena.mapped < mapped, "shrinking the last block returns its pages");
	char *after = tracer_arena_alloc(&arena, 100);
	cr_expect(after >= big + 4096 || after < big, "no overlap with the shrunk block");
	tracer_arena_shrink(&arena, small, 10, 1); /* not the last block: ignored */
	cr_expect(small[9] == 1);
	tracer_arena_release(&arena);
	cr_expect_eq(arena.mapped, 0);
	cr_expect_null(arena.chunks);
	cr_expect_null(tracer_arena_alloc(&arena, SIZE_MAX));
}

/* ---- a hand-made ELF with a DWARF 2 line table ------------------------------ */

struct section_spec {
	const char *name;
	uint32_t type;
	uint64_t flags;
	const void *data;
	size_t size;
};

/* An ELF file with these sections (after the null section), built in an
 * aligned heap buffer: header, contents, .shstrtab, section headers. */
static unsigned char *build_elf(const struct section_spec *specs, size_t count, size_t *size)
{
	size_t names_size = 1 + sizeof ".shstrtab";
	for (size_t i = 0; i < count; i++)
		names_size += strlen(specs[i].name) + 1;
	size_t at = sizeof(Elf64_Ehdr);
	size_t data_size = 0;
	for (size_t i = 0; i < count; i++)
		data_size += (specs[i].size + 7) & ~(size_t)7;
	size_t headers_at = (at + data_size + names_size + 7) & ~(size_t)7;
	*size = headers_at + (count + 2) * sizeof(Elf64_Shdr);
	unsigned char *image = aligned_alloc(16, (*size + 15) & ~(size_t)15);
	memset(image, 0, *size);
	Elf64_Ehdr *ehdr = (Elf64_Ehdr *)image;
	memcpy(ehdr->e_ident, ELFMAG, SELFMAG);
	ehdr->e_ident[EI_CLASS] = ELFCLASS64;
	ehdr->e_ident[EI_DATA] = ELFDATA2LSB;
	ehdr->e_ident[EI_VERSION] = EV_CURRENT;
	ehdr->e_type = ET_DYN;
	ehdr->e_machine = EM_X86_64;
	ehdr->e_shoff = headers_at;
	ehdr->e_shentsize = sizeof(Elf64_Shdr);
	ehdr->e_shnum = (uint16_t)(count + 2);
	ehdr->e_shstrndx = (uint16_t)(count + 1);
	Elf64_Shdr *headers = (Elf64_Shdr *)(image + headers_at);
	char *names = (char *)image + at + data_size;
	size_t name_at = 1;
	for (size_t i = 0; i < count; i++) {
		Elf64_Shdr *h = &headers[i + 1];
		h->sh_name = (uint32_t)name_at;
		strcpy(names + name_at, specs[i].name);
		name_at += strlen(specs[i].name) + 1;
		h->sh_type = specs[i].type;
		h->sh_flags = specs[i].flags;
		h->sh_offset = at;
		h->sh_size = specs[i].size;
		h->sh_addralign = 1;
		memcpy(image + at, specs[i].data, specs[i].size);
		at += (specs[i].size + 7) & ~(size_t)7;
	}
	Elf64_Shdr *strtab = &headers[count + 1];
	strtab->sh_name = (uint32_t)name_at;
	strcpy(names + name_at, ".shstrtab");
	strtab->sh_type = SHT_STRTAB;
	strtab->sh_offset = at;
	strtab->sh_size = names_size;
	return image;
}

/* A DWARF 2 unit (opcode_base 10) with five sequences: one kept, one at
 * address 0 (a function the linker dropped), one outside the object, one
 * overlapping the first, and one more kept with a 4-byte set_address. */
static const unsigned char dwarf2_line_unit[] = {
	0, 0, 0, 0,		/* unit_length, patched below */
	2, 0,			/* version */
	45, 0, 0, 0,		/* header_length: up to the program */
	1, 1, (unsigned char)-5, 14, 10, /* min_inst, is_stmt, line_base, line_range, opcode_base */
	0, 1, 1, 1, 1, 0, 0, 0, 1, /* standard_opcode_lengths */
	'/', 's', 'r', 'c', '/', 'i', 'n', 'c', 0, 0, /* include_directories */
	'm', 'a', 'i', 'n', '.', 'c', 0, 0, 0, 0, /* file 1, directory 0 */
	'u', 't', 'i', 'l', '.', 'h', 0, 1, 0, 0, /* file 2, directory 1 */
	0,
	/* sequence 1: 0x1000 main.c:10, 0x1004 :11, 0x100c util.h:100, end 0x1010 */
	0, 9, 2, 0x00, 0x10, 0, 0, 0, 0, 0, 0,
	3, 9, 1,
	0x0a + (1 - -5) + 14 * 4,
	4, 2, 3, 0xd9, 0x00, 2, 8, 1, /* +89: two SLEB128 bytes */
	2, 4, 0, 1, 1,
	/* sequence 2 at 0: dropped */
	0, 9, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 16, 0, 1, 1,
	/* sequence 3 outside [0x1000, 0x3000): dropped */
	0, 9, 2, 0, 0, 0x90, 0, 0, 0, 0, 0, 1, 2, 4, 0, 1, 1,
	/* sequence 4 overlapping sequence 1: dropped */
	0, 9, 2, 0x08, 0x10, 0, 0, 0, 0, 0, 0, 1, 2, 0x18, 0, 1, 1,
	/* sequence 5: 0x2000 main.c:7 (4-byte address), end 0x2002 */
	0, 5, 2, 0x00, 0x20, 0, 0, 3, 6, 1, 2, 2, 0, 1, 1,
};

struct line_case {
	uint64_t address;
	const char *name; /* NULL: no line */
	const char *dir;
	uint32_t line;
};

static void check_lines(const struct line_table *table)
{
	static const struct line_case cases[] = {
		{ 0xfff, NULL, NULL, 0 },        { 0x1000, "main.c", NULL, 10 },
		{ 0x1003, "main.c", NULL, 10 },  { 0x1004, "main.c", NULL, 11 },
		{ 0x100b, "main.c", NULL, 11 },  { 0x100c, "util.h", "/src/inc", 100 },
		{ 0x100f, "util.h", "/src/inc", 100 }, { 0x1010, NULL, NULL, 0 },
		{ 0x0, NULL, NULL, 0 },          { 0x8, NULL, NULL, 0 },
		{ 0x900000, NULL, NULL, 0 },     { 0x1018, NULL, NULL, 0 },
		{ 0x2000, "main.c", NULL, 7 },   { 0x2001, "main.c", NULL, 7 },
		{ 0x2002, NULL, NULL, 0 },
	};
	cr_expect_eq(table->sequence_count, 2, "kept sequences: %zu", table->sequence_count);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct line_case *c = &cases[i];
		struct line_location where;
		bool found = line_table_find(table, c->address, &where);
		if (c->name == NULL) {
			cr_expect(!found, "0x%lx should have no line", (unsigned long)c->address);
			continue;
		}
		cr_expect(found, "0x%lx has no line", (unsigned long)c->address);
		if (!found)
			continue;
		cr_expect_str_eq(where.file->name, c->name, "0x%lx", (unsigned long)c->address);
		cr_expect_eq(where.line, c->line, "0x%lx: line %u", (unsigned long)c->address, where.line);
		if (c->dir)
			cr_expect(where.file->dir && strcmp(where.file->dir, c->dir) == 0);
		else
			cr_expect_null(where.file->dir, "directory 0 without .debug_info is unknown");
	}
}

static void dwarf2_unit(unsigned char *unit)
{
	memcpy(unit, dwarf2_line_unit, sizeof dwarf2_line_unit);
	uint32_t length = sizeof dwarf2_line_unit - 4;
	memcpy(unit, &length, 4);
}

Test(dwarf_line, version_2_sequences)
{
	unsigned char unit[sizeof dwarf2_line_unit];
	dwarf2_unit(unit);
	struct section_spec spec = { ".debug_line", SHT_PROGBITS, 0, unit, sizeof unit };
	size_t size;
	unsigned char *bytes = build_elf(&spec, 1, &size);
	struct elf_image image;
	cr_assert(elf_image_from_memory(&image, bytes, size));
	struct tracer_arena arena = TRACER_ARENA_INIT;
	struct dwarf_source source = { &image, &arena, &tables };
	struct line_table table;
	bool built = line_table_build(&table, &source, 0x1000, 0x3000);
	cr_expect(built, "the DWARF 2 unit was not decoded");
	if (built)
		check_lines(&table);
	tracer_arena_release(&arena);
	free(bytes);
}

/* ---- corrupt input, in guarded memory ------------------------------------------ */

/* Room right before an inaccessible page: data copied in ends at the guard
 * (8-aligned, as an ELF image must be: at most 7 bytes lie between its end
 * and the guard). Mapped once per test: fresh pages are slow in this VM. */
struct guarded {
	unsigned char *mapping;
	size_t mapping_size, room;
};

static void guard_init(struct guarded *g, size_t room)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	g->room = (room + 8 + page - 1) / page * page;
	g->mapping_size = g->room + page;
	g->mapping = mmap(NULL, g->mapping_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(g->mapping != MAP_FAILED);
	cr_assert(mprotect(g->mapping + g->room, page, PROT_NONE) == 0);
}

static unsigned char *guard_place(struct guarded *g, const unsigned char *data, size_t size)
{
	cr_assert(size <= g->room - 8);
	unsigned char *at = g->mapping + ((g->room - size) & ~(size_t)7);
	memcpy(at, data, size);
	return at;
}

static void guard_free(struct guarded *g)
{
	munmap(g->mapping, g->mapping_size);
}

enum reading { SYMBOLS_AND_LINES, LINES_ONLY };

/* What the symbolizer does with an image (symbols, lines, lookups, notes),
 * on a copy of data ending at the guard page. */
static void read_image(struct guarded *g, const unsigned char *data, size_t size,
		       enum reading what)
{
	struct elf_image image;
	if (!elf_image_from_memory(&image, guard_place(g, data, size), size))
		return;
	struct tracer_arena arena = TRACER_ARENA_INIT;
	struct symbol_table symbols;
	uint32_t types[] = { SHT_SYMTAB, SHT_DYNSYM };
	for (size_t t = 0; t < 2 && what == SYMBOLS_AND_LINES; t++)
		if (symbol_table_read(&symbols, &image, elf_section_of_type(&image, types[t]), &arena,
				      &tables))
			for (uint64_t a = 0; a < 0x6000; a += 0x61)
				symbol_table_find(&symbols, a);
	struct dwarf_source source = { &image, &arena, &tables };
	struct line_table lines;
	if (line_table_build(&lines, &source, 0, 0x100000)) {
		struct line_location where;
		for (uint64_t a = 0; a < 0x6000; a += 0x17)
			if (line_table_find(&lines, a, &where))
				cr_assert(where.file->name != NULL);
	}
	unsigned char id[BUILD_ID_MAX];
	const char *link;
	uint32_t crc;
	elf_build_id(&image, id);
	elf_debuglink(&image, &link, &crc);
	tracer_arena_release(&arena);
}

static unsigned char *read_file(const char *path, size_t *size)
{
	FILE *file = fopen(path, "rb");
	cr_assert_not_null(file, "%s is missing: build it with make", path);
	fseek(file, 0, SEEK_END);
	*size = (size_t)ftell(file);
	rewind(file);
	unsigned char *bytes = malloc(*size);
	cr_assert_eq(fread(bytes, 1, *size, file), *size);
	fclose(file);
	return bytes;
}

static const char *test_file(const char *variable, const char *fallback)
{
	const char *path = getenv(variable);
	return path && *path ? path : fallback;
}

static const Elf64_Shdr *section_of(const unsigned char *bytes, size_t size, const char *name)
{
	struct elf_image image;
	cr_assert(elf_image_from_memory(&image, bytes, size));
	return elf_section_named(&image, name);
}

/* Truncated in its ELF header, at every 1/128 of the file and all through
 * its section header table, then bytes changed all over it and in its symbol
 * and line tables: never a read outside the image, never a crash. */
Test(corrupt_input, truncated_and_corrupted_elf, .timeout = 30)
{
	size_t size;
	unsigned char *original = read_file(test_file("SYMBOLIZE_TARGET_PIE",
						       "build/tests/symbolize_target_pie"), &size);
	struct guarded g;
	guard_init(&g, size);
	read_image(&g, original, size, SYMBOLS_AND_LINES);
	const Elf64_Ehdr *ehdr = (const Elf64_Ehdr *)original;
	for (size_t cut = 0; cut < size;
	     cut += cut < sizeof *ehdr ? 1 : cut >= ehdr->e_shoff ? 13 : size / 128)
		read_image(&g, original, cut, SYMBOLS_AND_LINES);

	unsigned char *copy = malloc(size);
	unsigned long seed = 99;
	const char *targets[] = { NULL, ".symtab", ".strtab", ".debug_line", ".debug_line_str" };
	for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
		const Elf64_Shdr *section = targets[t] ? section_of(original, size, targets[t]) : NULL;
		uint64_t from = section ? section->sh_offset : 0;
		uint64_t span = section ? section->sh_size : size;
		if (targets[t] != NULL && (section == NULL || span == 0))
			continue;
		for (int round = 0; round < 80; round++) {
			memcpy(copy, original, size);
			for (int change = 0; change < 1 + round % 4; change++) {
				seed = seed * 6364136223846793005ul + 1442695040888963407ul;
				size_t at = (size_t)(from + (seed >> 33) % span);
				copy[at] = (unsigned char)(seed >> 24);
			}
			read_image(&g, copy, size, SYMBOLS_AND_LINES);
		}
	}
	/* the section header table itself */
	for (size_t at = ehdr->e_shoff; at < size; at += 17) {
		memcpy(copy, original, size);
		copy[at] ^= 0xff;
		read_image(&g, copy, size, SYMBOLS_AND_LINES);
	}
	guard_free(&g);
	free(copy);
	free(original);
}

/* The zlib-compressed .debug_line of the debuglink file: bytes of the stream
 * changed (all of its first 256 bytes, where the zlib header and the first
 * block's code tables are, then every 29th), lying header sizes, truncated
 * streams. */
Test(corrupt_input, corrupted_compressed_section, .timeout = 30)
{
	size_t size;
	unsigned char *original = read_file(test_file("SYMBOLIZE_DEBUG_FILE",
						       "build/tests/symbolize_target_debuglink.debug"),
					    &size);
	const Elf64_Shdr *line = section_of(original, size, ".debug_line");
	cr_assert(line != NULL && (line->sh_flags & SHF_COMPRESSED),
		  ".debug_line of the debug file should be compressed");
	size_t header_at = (size_t)((const unsigned char *)line - original);
	uint64_t offset = line->sh_offset, stored = line->sh_size;

	/* intact, it decodes */
	struct elf_image image;
	struct tracer_arena arena = TRACER_ARENA_INIT;
	cr_assert(elf_image_from_memory(&image, original, size));
	struct dwarf_source source = { &image, &arena, &tables };
	struct line_table lines;
	cr_expect(line_table_build(&lines, &source, 0, 0x100000));
	tracer_arena_release(&arena);

	struct guarded g;
	guard_init(&g, size);
	unsigned char *copy = malloc(size);
	for (uint64_t at = offset; at < offset + stored; at += at < offset + 256 ? 1 : 29) {
		memcpy(copy, original, size);
		copy[at] ^= 0x5a;
		read_image(&g, copy, size, LINES_ONLY);
	}
	const uint64_t lies[] = { 0, 1, 100, 0xfffffffful, 1ul << 40, UINT64_MAX };
	for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
		memcpy(copy, original, size);
		memcpy(copy + offset + offsetof(Elf64_Chdr, ch_size), &lies[i], sizeof lies[i]);
		read_image(&g, copy, size, LINES_ONLY);
	}
	for (uint64_t cut = 0; cut < stored; cut += 1 + stored / 64) {
		memcpy(copy, original, size);
		Elf64_Shdr shorter = *line;
		shorter.sh_size = cut;
		memcpy(copy + header_at, &shorter, sizeof shorter);
		read_image(&g, copy, size, LINES_ONLY);
	}
	guard_free(&g);
	free(copy);
	free(original);
}

/* The hand-made DWARF 2 unit with every byte changed and cut everywhere. */
Test(corrupt_input, corrupted_line_program)
{
	unsigned char unit[sizeof dwarf2_line_unit];
	struct guarded g;
	guard_init(&g, 4096);
	for (size_t at = 0; at <= sizeof unit; at++) {
		for (int pass = 0; pass < 3; pass++) {
			dwarf2_unit(unit);
			size_t len = sizeof unit;
			if (pass == 2)
				len = at;
			else if (at < sizeof unit)
				unit[at] = pass ? 0xff : (unsigned char)(unit[at] + 1);
			struct section_spec spec = { ".debug_line", SHT_PROGBITS, 0, unit, len };
			size_t size;
			unsigned char *bytes = build_elf(&spec, 1, &size);
			read_image(&g, bytes, size, LINES_ONLY);
			free(bytes);
		}
	}
	guard_free(&g);
}

/* ---- this binary, under the sanitizers ------------------------------------ */

static int open_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	cr_assert_not_null(dir);
	int count = 0;
	for (struct dirent *entry; (entry = readdir(dir)) != NULL;)
		count += entry->d_name[0] != '.';
	closedir(dir);
	return count - 1;
}

__attribute__((noipa)) static void report_own_frame(char *buf, size_t size, int *call_line)
{
	*call_line = __LINE__ + 1;
	symbolize_code((uintptr_t)__builtin_return_address(0), buf, size);
}

__attribute__((noipa)) static void caller_of_report(char *buf, size_t size, int *call_line)
{
	report_own_frame(buf, size, call_line);
	*call_line = *call_line; /* keeps the call above from being a tail call */
	buf[size - 1] = '\0';
}

Test(symbolize_in_process, own_frames_libc_and_descriptors)
{
	int fds = open_fds();
	char buf[1024], path[1024], self[PATH_MAX];
	int call_line;
	caller_of_report(buf, sizeof buf, &call_line);
	cr_expect(strncmp(buf, "caller_of_report+0x", 19) == 0 && strstr(buf, " [unit] ") != NULL &&
			  strstr(buf, "tests/unit/symbolize_reader_test.c:") != NULL,
		  "own frame: \"%s\"", buf);

	uintptr_t offset;
	cr_assert(symbolize_module((uintptr_t)caller_of_report, path, sizeof path, &offset));
	cr_assert_not_null(realpath("/proc/self/exe", self));
	cr_expect_str_eq(path, self);
	cr_expect_eq(symbolize_function_start((uintptr_t)caller_of_report + 5),
		     (uintptr_t)caller_of_report);

	/* under ASan, memcpy is its interceptor in libasan.so */
	symbolize_code_exact((uintptr_t)&memcpy, buf, sizeof buf);
	cr_expect(strstr(buf, "memcpy+0x0/0x") != NULL && strstr(buf, ".so") != NULL,
		  "memcpy: \"%s\"", buf);
	symbolize_code_exact((uintptr_t)&getpid, buf, sizeof buf);
	cr_expect(strstr(buf, "getpid+0x0/0x") != NULL && strstr(buf, " [libc.so.6]") != NULL,
		  "getpid: \"%s\"", buf);
	symbolize_data((uintptr_t)&tables, buf, sizeof buf);
	cr_expect_str_eq(buf, "tables");
	symbolize_code(UINTPTR_MAX, buf, sizeof buf);
	cr_expect_str_eq(buf, "0xffffffffffffffff");
	cr_expect_eq(open_fds(), fds, "the symbolizer left a descriptor open");
}
