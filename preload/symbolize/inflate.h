/* inflate.h - decompression of the zlib streams in SHF_COMPRESSED ELF sections
 * (ELFCOMPRESS_ZLIB, what Debian's -dbg/-dbgsym files use): the RFC 1950
 * wrapper around RFC 1951 DEFLATE (stored, fixed and dynamic Huffman blocks).
 * No allocation and no zlib: the caller provides the output buffer (the
 * section header tells its size) and the decoder's tables. */
#ifndef LOCKDEP_RCU_INFLATE_H
#define LOCKDEP_RCU_INFLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
	INFLATE_MAX_CODE_BITS = 15,  /* longest Huffman code DEFLATE allows */
	INFLATE_FAST_BITS = 9,       /* codes up to this long decode by one table lookup */
	INFLATE_MAX_SYMBOLS = 288,   /* literal/length alphabet, the largest */
	INFLATE_MAX_LENGTHS = 286 + 30, /* code lengths one dynamic block sends */
};

/* A canonical Huffman code, ready to decode. */
struct inflate_huffman {
	/* by the next FAST_BITS input bits: symbol << 4 | code length;
	 * 0 when the code there is longer (or unassigned) */
	uint16_t fast[1u << INFLATE_FAST_BITS];
	uint16_t count[INFLATE_MAX_CODE_BITS + 1]; /* codes of each length */
	uint16_t symbols[INFLATE_MAX_SYMBOLS];     /* in canonical code order */
};

/* About 5 KiB: keep it off the stack (static or arena memory). */
struct inflate_tables {
	struct inflate_huffman literal_length;
	struct inflate_huffman distance;
	struct inflate_huffman code_length;
	uint8_t lengths[INFLATE_MAX_LENGTHS];
};

/* Decompresses the zlib stream in[0, in_size) into out[0, out_size). True only
 * for a valid stream (header, blocks, final block, matching Adler-32) that
 * produces exactly out_size bytes; any other input returns false without
 * reading or writing outside the two buffers. */
bool inflate_zlib(const unsigned char *in, size_t in_size, unsigned char *out, size_t out_size,
		  struct inflate_tables *tables);

#endif
