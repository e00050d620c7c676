/* elf_image.h - read-only view of one ELF object: a file mapped privately (its
 * descriptor closed at once) or an image already in memory (the vDSO).
 * Only what the symbolizer needs: sections by name or type, their contents
 * (inflated when SHF_COMPRESSED), notes, the GNU build-id and .gnu_debuglink.
 * 64-bit little-endian objects only, the format of every x86-64 process.
 * Every offset and size is checked against the image: a truncated or
 * corrupt file yields fewer sections or none, never a read outside it. */
#ifndef LOCKDEP_RCU_ELF_IMAGE_H
#define LOCKDEP_RCU_ELF_IMAGE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/inflate.h"
#include "runtime/tracer_arena.h"

/* GNU build-ids are 20 bytes (SHA-1) in practice; longer ones are ignored. */
enum { BUILD_ID_MAX = 64 };

struct elf_image {
	const unsigned char *bytes; /* NULL: no image */
	size_t size;
	bool mapped;                /* bytes is our mmap() of a file: unmap it */
	const Elf64_Shdr *sections; /* validated table, NULL when there is none */
	size_t section_count;
	const unsigned char *section_names; /* .shstrtab */
	size_t section_names_size;
};

/* Bytes of a section as the reader sees them. */
struct elf_bytes {
	const unsigned char *data;
	size_t size;
};

/* Maps a regular file: opened O_RDONLY | O_CLOEXEC | O_NONBLOCK (a FIFO put
 * in a library's place must not block us), fstat()ed, mmap()ed PROT_READ
 * MAP_PRIVATE, and closed before returning. False (and nothing mapped) for
 * anything that is not a readable ELF file with section headers. */
bool elf_image_map_file(struct elf_image *image, const char *path);

/* An ELF image already in memory, valid for its whole lifetime. */
bool elf_image_from_memory(struct elf_image *image, const void *bytes, size_t size);

/* Unmaps a mapped file; the image is empty afterwards. */
void elf_image_close(struct elf_image *image);

const Elf64_Shdr *elf_section_named(const struct elf_image *image, const char *name);
const Elf64_Shdr *elf_section_of_type(const struct elf_image *image, uint32_t type);
const Elf64_Shdr *elf_section_at(const struct elf_image *image, size_t index);

/* The section's bytes in the image as stored (compressed or not). False for
 * SHT_NOBITS (what separate debug files leave of code and data) and for a
 * section that lies outside the image. */
bool elf_section_stored(const struct elf_image *image, const Elf64_Shdr *section,
			struct elf_bytes *bytes);

/* The section's contents: stored bytes, or for SHF_COMPRESSED an
 * ELFCOMPRESS_ZLIB section inflated into the arena. False when absent,
 * corrupt or compressed otherwise (zstd). */
bool elf_section_contents(const struct elf_image *image, const Elf64_Shdr *section,
			  struct tracer_arena *arena, struct inflate_tables *tables,
			  struct elf_bytes *contents);

/* The NT_GNU_BUILD_ID in a block of notes (an SHT_NOTE section or a PT_NOTE
 * segment) with the given alignment (4 or 8). Returns its length, 0 if none. */
size_t elf_notes_build_id(const unsigned char *notes, size_t size, size_t align,
			  unsigned char id[BUILD_ID_MAX]);

/* The build-id from the image's note sections, 0 if none. */
size_t elf_build_id(const struct elf_image *image, unsigned char id[BUILD_ID_MAX]);

/* .gnu_debuglink: the separate debug file's name and the CRC-32 of its
 * contents. False when absent or malformed. */
bool elf_debuglink(const struct elf_image *image, const char **name, uint32_t *crc);

/* The CRC-32 .gnu_debuglink records (the zlib/IEEE polynomial). */
uint32_t elf_debuglink_crc(const unsigned char *bytes, size_t size);

#endif
