/* inflate.h - decompression of the zlib streams in SHF_COMPRESSED ELF sections
 * (ELFCOMPRESS_ZLIB, what Debian's -dbg/-dbgsym files use), by zlib's
 * inflate() (linked in statically, its symbols kept local: exports.map).
 * No malloc: the caller provides the output buffer (the section header tells
 * its size) and the decoder's memory, which zlib's allocation hooks take
 * from the tracer's scratch pages (tracer_arena.h). */
#ifndef LOCKDEP_RCU_INFLATE_H
#define LOCKDEP_RCU_INFLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* zlib's inflate state (7 KiB) and, should a stream need one, its 32 KiB
 * window: one stream at a time in here. */
enum { INFLATE_WORKSPACE_SIZE = 64 * 1024 };

/* The decoder's memory: mapped at the first stream (MAP_NORESERVE, only the
 * pages zlib touches cost) and reused by every later one, never unmapped.
 * Zero-initialize it (static); one user at a time. */
struct inflate_tables {
	unsigned char *workspace; /* INFLATE_WORKSPACE_SIZE bytes; NULL until the first stream */
	size_t used;              /* by the stream being inflated */
};

/* Decompresses the zlib stream in[0, in_size) into out[0, out_size). True only
 * for a valid stream (header, blocks, final block, matching Adler-32) that
 * produces exactly out_size bytes; any other input returns false without
 * reading or writing outside the two buffers. */
bool inflate_zlib(const unsigned char *in, size_t in_size, unsigned char *out, size_t out_size,
		  struct inflate_tables *tables);

#endif
