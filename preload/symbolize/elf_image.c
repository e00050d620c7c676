/* elf_image.c - ELF file mapping and section access, validated against the
 * image size before any structure in it is used. */
#define _GNU_SOURCE
#include "symbolize/elf_image.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/byte_reader.h"
#include "base/raw_syscall.h"

/* A section this large is not debug data of a real program: refuse it rather
 * than reserve the memory (also bounds a lying ch_size). */
enum { SECTION_SIZE_MAX = 1u << 30 };

/* DEFLATE cannot expand data by more than this (258-byte matches in ~2 bits). */
enum { DEFLATE_MAX_RATIO = 1032 };

static bool within(const struct elf_image *image, uint64_t offset, uint64_t size)
{
	return offset <= image->size && size <= image->size - offset;
}

/* Validates the ELF header and the section header table and string table. */
static bool parse_image(struct elf_image *image)
{
	if (image->size < sizeof(Elf64_Ehdr))
		return false;
	Elf64_Ehdr ehdr;
	memcpy(&ehdr, image->bytes, sizeof ehdr);
	if (memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0 || ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    ehdr.e_ident[EI_DATA] != ELFDATA2LSB || ehdr.e_ident[EI_VERSION] != EV_CURRENT)
		return false;
	if (ehdr.e_shoff == 0 || ehdr.e_shentsize != sizeof(Elf64_Shdr) ||
	    ehdr.e_shoff % _Alignof(Elf64_Shdr) != 0 || !within(image, ehdr.e_shoff, sizeof(Elf64_Shdr)))
		return false;
	const Elf64_Shdr *sections = (const Elf64_Shdr *)(image->bytes + ehdr.e_shoff);
	/* More than SHN_LORESERVE sections: the real count and string table
	 * index live in section 0 (ELF extended numbering). */
	uint64_t count = ehdr.e_shnum ? ehdr.e_shnum : sections[0].sh_size;
	uint64_t names_index = ehdr.e_shstrndx != SHN_XINDEX ? ehdr.e_shstrndx : sections[0].sh_link;
	if (count == 0 || count > image->size / sizeof(Elf64_Shdr) ||
	    !within(image, ehdr.e_shoff, count * sizeof(Elf64_Shdr)) || names_index >= count)
		return false;
	image->sections = sections;
	image->section_count = count;
	struct elf_bytes names;
	if (elf_section_stored(image, &sections[names_index], &names) && names.size > 0 &&
	    names.data[names.size - 1] == '\0') {
		image->section_names = names.data;
		image->section_names_size = names.size;
	}
	return true;
}

bool elf_image_from_memory(struct elf_image *image, const void *bytes, size_t size)
{
	*image = (struct elf_image){ .bytes = bytes, .size = size };
	if (bytes != NULL && (uintptr_t)bytes % _Alignof(Elf64_Ehdr) == 0 && parse_image(image))
		return true;
	*image = (struct elf_image){ 0 };
	return false;
}

bool elf_image_map_file(struct elf_image *image, const char *path)
{
	*image = (struct elf_image){ 0 };
	/* stat first: opening a device can have effects (a tape rewinds) */
	struct stat st;
	if (path == NULL || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return false;
	bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
	void *bytes = regular ? raw_mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
			      : MAP_FAILED;
	close(fd); /* the mapping keeps the file; no descriptor stays open */
	if (bytes == MAP_FAILED)
		return false;
	image->bytes = bytes;
	image->size = (size_t)st.st_size;
	image->mapped = true;
	if (parse_image(image))
		return true;
	elf_image_close(image);
	return false;
}

void elf_image_close(struct elf_image *image)
{
	if (image->mapped && image->bytes != NULL)
		raw_munmap((void *)image->bytes, image->size);
	*image = (struct elf_image){ 0 };
}

const Elf64_Shdr *elf_section_at(const struct elf_image *image, size_t index)
{
	return index < image->section_count ? &image->sections[index] : NULL;
}

const Elf64_Shdr *elf_section_named(const struct elf_image *image, const char *name)
{
	if (image->section_names == NULL)
		return NULL;
	for (size_t i = 1; i < image->section_count; i++) {
		uint32_t at = image->sections[i].sh_name;
		/* the table ends in NUL (checked), so any offset inside is a string */
		if (at < image->section_names_size &&
		    strcmp((const char *)image->section_names + at, name) == 0)
			return &image->sections[i];
	}
	return NULL;
}

const Elf64_Shdr *elf_section_of_type(const struct elf_image *image, uint32_t type)
{
	for (size_t i = 1; i < image->section_count; i++)
		if (image->sections[i].sh_type == type)
			return &image->sections[i];
	return NULL;
}

bool elf_section_stored(const struct elf_image *image, const Elf64_Shdr *section,
			struct elf_bytes *bytes)
{
	*bytes = (struct elf_bytes){ NULL, 0 };
	if (section == NULL || section->sh_type == SHT_NOBITS || section->sh_type == SHT_NULL ||
	    !within(image, section->sh_offset, section->sh_size))
		return false;
	bytes->data = image->bytes + section->sh_offset;
	bytes->size = section->sh_size;
	return true;
}

bool elf_section_contents(const struct elf_image *image, const Elf64_Shdr *section,
			  struct tracer_arena *arena, struct inflate_tables *tables,
			  struct elf_bytes *contents)
{
	struct elf_bytes stored;
	if (!elf_section_stored(image, section, &stored))
		return false;
	if (!(section->sh_flags & SHF_COMPRESSED)) {
		*contents = stored;
		return true;
	}
	*contents = (struct elf_bytes){ NULL, 0 };
	Elf64_Chdr header;
	if (stored.size < sizeof header)
		return false;
	memcpy(&header, stored.data, sizeof header);
	size_t compressed = stored.size - sizeof header;
	if (header.ch_type != ELFCOMPRESS_ZLIB || header.ch_size == 0 ||
	    header.ch_size > SECTION_SIZE_MAX || header.ch_size / DEFLATE_MAX_RATIO > compressed)
		return false;
	unsigned char *inflated = tracer_arena_alloc(arena, header.ch_size);
	if (inflated == NULL)
		return false;
	if (!inflate_zlib(stored.data + sizeof header, compressed, inflated, header.ch_size, tables)) {
		tracer_arena_shrink(arena, inflated, header.ch_size, 0);
		return false;
	}
	contents->data = inflated;
	contents->size = header.ch_size;
	return true;
}

static size_t align_up(size_t n, size_t align)
{
	return (n + align - 1) & ~(align - 1);
}

size_t elf_notes_build_id(const unsigned char *notes, size_t size, size_t align,
			  unsigned char id[BUILD_ID_MAX])
{
	if (align != 8)
		align = 4;
	struct byte_reader r = byte_reader_init(notes, size);
	/* each note takes at least its 12-byte header: the loop is bounded */
	while (byte_reader_left(&r) >= 12) {
		uint32_t name_size = read_u32(&r);
		uint32_t desc_size = read_u32(&r);
		uint32_t type = read_u32(&r);
		const unsigned char *name = read_bytes(&r, align_up(name_size, align));
		const unsigned char *desc = read_bytes(&r, desc_size);
		if (r.failed)
			break;
		skip_bytes(&r, align_up(desc_size, align) - desc_size);
		if (type == NT_GNU_BUILD_ID && name_size == 4 && memcmp(name, "GNU", 4) == 0 &&
		    desc_size > 0 && desc_size <= BUILD_ID_MAX) {
			memcpy(id, desc, desc_size);
			return desc_size;
		}
	}
	return 0;
}

size_t elf_build_id(const struct elf_image *image, unsigned char id[BUILD_ID_MAX])
{
	for (size_t i = 1; i < image->section_count; i++) {
		const Elf64_Shdr *section = &image->sections[i];
		struct elf_bytes notes;
		if (section->sh_type != SHT_NOTE || !elf_section_stored(image, section, &notes))
			continue;
		size_t len = elf_notes_build_id(notes.data, notes.size, section->sh_addralign, id);
		if (len > 0)
			return len;
	}
	return 0;
}

bool elf_debuglink(const struct elf_image *image, const char **name, uint32_t *crc)
{
	struct elf_bytes link;
	if (!elf_section_stored(image, elf_section_named(image, ".gnu_debuglink"), &link))
		return false;
	/* the file name, NUL-padded to 4 bytes, then the CRC */
	struct byte_reader r = byte_reader_init(link.data, link.size);
	const char *file = read_cstring(&r);
	size_t name_end = (size_t)(r.at - link.data);
	skip_bytes(&r, align_up(name_end, 4) - name_end);
	uint32_t value = read_u32(&r);
	if (r.failed || file == NULL || file[0] == '\0' || strchr(file, '/') != NULL)
		return false;
	*name = file;
	*crc = value;
	return true;
}

uint32_t elf_debuglink_crc(const unsigned char *bytes, size_t size)
{
	/* byte-at-a-time table of the reflected polynomial, built once (the
	 * caller serializes; a repeated build writes the same values) */
	static uint32_t table[256];
	if (table[1] == 0) {
		for (uint32_t n = 0; n < 256; n++) {
			uint32_t c = n;
			for (int k = 0; k < 8; k++)
				c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[n] = c;
		}
	}
	uint32_t crc = 0xffffffffu;
	for (size_t i = 0; i < size; i++)
		crc = table[(crc ^ bytes[i]) & 0xff] ^ (crc >> 8);
	return crc ^ 0xffffffffu;
}
