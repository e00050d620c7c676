/* inflate.c - RFC 1951 DEFLATE decoder with the RFC 1950 zlib wrapper, written
 * for untrusted input: every code, length and distance is checked before use,
 * and input read past the end comes back as zero bits that fail the stream. */
#include "symbolize/inflate.h"

#include <string.h>

/* ---- bit input ----------------------------------------------------------- */

/* DEFLATE packs bits starting from the least significant bit of each byte. */
struct bit_input {
	const unsigned char *start, *next, *end;
	uint64_t bits;   /* buffered input, the next bit in bit 0 */
	unsigned count;  /* how many bits `bits` holds */
	size_t padding;  /* zero bytes buffered past the end of the input */
};

/* Tops the buffer up to at least 57 bits. The fast path may leave bits of
 * a partly loaded byte above `count`: they are the same bits the next refill
 * ORs in at the same place, so they do no harm. */
static void refill(struct bit_input *in)
{
	if (in->count > 56)
		return;
	if (in->end - in->next >= 8) {
		uint64_t word;
		memcpy(&word, in->next, 8); /* little-endian: bytes in stream order */
		in->bits |= word << in->count;
		unsigned bytes = (63 - in->count) / 8;
		in->next += bytes;
		in->count += bytes * 8;
		return;
	}
	while (in->count <= 56) {
		uint64_t byte = 0;
		if (in->next < in->end)
			byte = *in->next++;
		else
			in->padding++;
		in->bits |= byte << in->count;
		in->count += 8;
	}
}

/* Whether the decoder has consumed bits that are not in the input. */
static bool overran(const struct bit_input *in)
{
	return in->padding * 8 > in->count;
}

static void drop_bits(struct bit_input *in, unsigned n)
{
	in->bits >>= n;
	in->count -= n;
}

/* The next n (at most 32) bits as a number, first bit lowest. */
static uint32_t take_bits(struct bit_input *in, unsigned n)
{
	if (in->count < n)
		refill(in);
	uint32_t value = (uint32_t)(in->bits & ((UINT64_C(1) << n) - 1));
	drop_bits(in, n);
	return value;
}

/* ---- Huffman codes ------------------------------------------------------- */

static unsigned reverse_bits(unsigned code, unsigned length)
{
	unsigned reversed = 0;
	for (unsigned i = 0; i < length; i++, code >>= 1)
		reversed = (reversed << 1) | (code & 1);
	return reversed;
}

/* Builds the canonical code (RFC 1951 3.2.2) of symbols 0..n-1 with these
 * code lengths (0: unused). False when the lengths over-subscribe the code
 * space; an incomplete code is accepted, its unassigned codes fail to decode. */
static bool build_huffman(struct inflate_huffman *h, const uint8_t *lengths, unsigned n)
{
	memset(h->count, 0, sizeof h->count);
	for (unsigned sym = 0; sym < n; sym++)
		h->count[lengths[sym]]++;
	h->count[0] = 0;

	int unassigned = 1;
	for (unsigned len = 1; len <= INFLATE_MAX_CODE_BITS; len++) {
		unassigned = unassigned * 2 - h->count[len];
		if (unassigned < 0)
			return false;
	}

	/* where each length's symbols start in canonical order, and the first
	 * code of each length */
	uint16_t position[INFLATE_MAX_CODE_BITS + 1];
	uint16_t next_code[INFLATE_MAX_CODE_BITS + 1];
	position[0] = next_code[0] = 0;
	for (unsigned len = 1; len <= INFLATE_MAX_CODE_BITS; len++) {
		position[len] = position[len - 1] + h->count[len - 1];
		next_code[len] = (uint16_t)((next_code[len - 1] + h->count[len - 1]) << 1);
	}

	memset(h->fast, 0, sizeof h->fast);
	for (unsigned sym = 0; sym < n; sym++) {
		unsigned len = lengths[sym];
		if (len == 0)
			continue;
		h->symbols[position[len]++] = (uint16_t)sym;
		unsigned code = next_code[len]++;
		if (len > INFLATE_FAST_BITS)
			continue;
		/* the stream sends the code's top bit first, i.e. in bit 0 of
		 * what we peek: every index ending in the reversed code maps here */
		for (unsigned i = reverse_bits(code, len); i < (1u << INFLATE_FAST_BITS);
		     i += 1u << len)
			h->fast[i] = (uint16_t)(sym << 4 | len);
	}
	return true;
}

/* A code longer than FAST_BITS (or an invalid one): extend the code bit by
 * bit; among the codes of one length, the canonical code of the symbol of
 * rank r is the first code of that length plus r. -1: no such code. */
static int decode_long_symbol(struct bit_input *in, const struct inflate_huffman *h)
{
	unsigned code = 0, first = 0, rank_base = 0;
	for (unsigned len = 1; len <= INFLATE_MAX_CODE_BITS; len++) {
		code |= (unsigned)(in->bits >> (len - 1)) & 1;
		unsigned count = h->count[len];
		if (code - first < count) {
			drop_bits(in, len);
			return h->symbols[rank_base + code - first];
		}
		rank_base += count;
		first = (first + count) << 1;
		code <<= 1;
	}
	return -1;
}

/* The next symbol, -1 for a code that is not in h. */
static inline int decode_symbol(struct bit_input *in, const struct inflate_huffman *h)
{
	if (in->count < INFLATE_MAX_CODE_BITS)
		refill(in);
	unsigned entry = h->fast[in->bits & ((1u << INFLATE_FAST_BITS) - 1)];
	if (entry == 0)
		return decode_long_symbol(in, h);
	drop_bits(in, entry & 15);
	return (int)(entry >> 4);
}

/* ---- blocks -------------------------------------------------------------- */

struct output {
	unsigned char *bytes;
	size_t size;
	size_t produced;
};

/* Length symbols 257..285 and distance symbols 0..29 (RFC 1951 3.2.5). */
static const uint16_t length_base[29] = {
	3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
	35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
};
static const uint8_t length_extra[29] = {
	0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
	3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
};
static const uint16_t distance_base[30] = {
	1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
	257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
};
static const uint8_t distance_extra[30] = {
	0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
	7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
};

enum { END_OF_BLOCK = 256, FIRST_LENGTH_SYMBOL = 257 };

/* Literals and matches up to the end-of-block symbol. */
static bool inflate_codes(struct bit_input *in, struct output *out, const struct inflate_tables *t)
{
	for (;;) {
		if (overran(in))
			return false;
		int sym = decode_symbol(in, &t->literal_length);
		if (sym < 0)
			return false;
		if (sym < END_OF_BLOCK) {
			if (out->produced == out->size)
				return false;
			out->bytes[out->produced++] = (unsigned char)sym;
			continue;
		}
		if (sym == END_OF_BLOCK)
			return true;
		unsigned length_sym = (unsigned)sym - FIRST_LENGTH_SYMBOL;
		if (length_sym >= sizeof length_base / sizeof length_base[0])
			return false;
		size_t length = length_base[length_sym] + take_bits(in, length_extra[length_sym]);
		int dist_sym = decode_symbol(in, &t->distance);
		if (dist_sym < 0 || (unsigned)dist_sym >= sizeof distance_base / sizeof distance_base[0])
			return false;
		size_t distance = distance_base[dist_sym] + take_bits(in, distance_extra[dist_sym]);
		if (distance > out->produced || length > out->size - out->produced)
			return false;
		unsigned char *to = out->bytes + out->produced;
		const unsigned char *from = to - distance;
		if (distance >= length) {
			memcpy(to, from, length);
		} else {
			/* overlapping: the match repeats bytes it produces itself */
			for (size_t i = 0; i < length; i++)
				to[i] = from[i];
		}
		out->produced += length;
	}
}

static bool inflate_stored(struct bit_input *in, struct output *out)
{
	drop_bits(in, in->count % 8); /* stored data starts on a byte boundary */
	uint32_t length = take_bits(in, 16);
	uint32_t complement = take_bits(in, 16);
	if (overran(in) || length != (~complement & 0xffff) || length > out->size - out->produced)
		return false;
	/* first the whole bytes still buffered, then straight from the input */
	while (length > 0 && in->count >= 8) {
		out->bytes[out->produced++] = (unsigned char)take_bits(in, 8);
		length--;
	}
	if (overran(in) || length > (size_t)(in->end - in->next))
		return false;
	if (length > 0)
		in->bits = 0; /* empty, but may hold bits of bytes copied now */
	memcpy(out->bytes + out->produced, in->next, length);
	in->next += length;
	out->produced += length;
	return true;
}

static bool build_fixed_codes(struct inflate_tables *t)
{
	uint8_t *lengths = t->lengths;
	unsigned sym = 0;
	while (sym < 144)
		lengths[sym++] = 8;
	while (sym < 256)
		lengths[sym++] = 9;
	while (sym < 280)
		lengths[sym++] = 7;
	while (sym < INFLATE_MAX_SYMBOLS)
		lengths[sym++] = 8;
	if (!build_huffman(&t->literal_length, lengths, INFLATE_MAX_SYMBOLS))
		return false;
	memset(lengths, 5, 30);
	return build_huffman(&t->distance, lengths, 30);
}

/* The code lengths of a dynamic block, themselves Huffman coded (3.2.7). */
static bool build_dynamic_codes(struct bit_input *in, struct inflate_tables *t)
{
	static const uint8_t code_length_order[19] = {
		16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
	};
	unsigned literal_codes = take_bits(in, 5) + 257;
	unsigned distance_codes = take_bits(in, 5) + 1;
	unsigned code_length_codes = take_bits(in, 4) + 4;
	if (literal_codes > 286 || distance_codes > 30)
		return false;

	uint8_t *lengths = t->lengths;
	memset(lengths, 0, 19);
	for (unsigned i = 0; i < code_length_codes; i++)
		lengths[code_length_order[i]] = (uint8_t)take_bits(in, 3);
	if (overran(in) || !build_huffman(&t->code_length, lengths, 19))
		return false;

	unsigned total = literal_codes + distance_codes;
	for (unsigned i = 0; i < total;) {
		int sym = decode_symbol(in, &t->code_length);
		if (sym < 0 || overran(in))
			return false;
		if (sym < 16) {
			lengths[i++] = (uint8_t)sym;
			continue;
		}
		uint8_t repeated = 0;
		unsigned times;
		if (sym == 16) {
			if (i == 0)
				return false;
			repeated = lengths[i - 1];
			times = 3 + take_bits(in, 2);
		} else if (sym == 17) {
			times = 3 + take_bits(in, 3);
		} else {
			times = 11 + take_bits(in, 7);
		}
		if (times > total - i)
			return false;
		memset(lengths + i, repeated, times);
		i += times;
	}
	if (lengths[END_OF_BLOCK] == 0)
		return false; /* a block that cannot end */
	return build_huffman(&t->literal_length, lengths, literal_codes) &&
	       build_huffman(&t->distance, lengths + literal_codes, distance_codes);
}

/* Raw DEFLATE; on success *consumed is the input up to the end of the final
 * block, rounded up to a whole byte. */
static bool inflate_raw(const unsigned char *data, size_t size, struct output *out,
			struct inflate_tables *t, size_t *consumed)
{
	struct bit_input in = { data, data, data + size, 0, 0, 0 };
	bool final = false;
	while (!final) {
		if (overran(&in))
			return false;
		final = take_bits(&in, 1);
		bool ok;
		switch (take_bits(&in, 2)) {
		case 0:
			ok = inflate_stored(&in, out);
			break;
		case 1:
			ok = build_fixed_codes(t) && inflate_codes(&in, out, t);
			break;
		case 2:
			ok = build_dynamic_codes(&in, t) && inflate_codes(&in, out, t);
			break;
		default:
			ok = false;
			break;
		}
		if (!ok || overran(&in))
			return false;
	}
	drop_bits(&in, in.count % 8);
	size_t buffered = in.count / 8 - in.padding; /* read ahead, not consumed */
	*consumed = (size_t)(in.next - in.start) - buffered;
	return true;
}

/* ---- zlib wrapper -------------------------------------------------------- */

static uint32_t adler32(const unsigned char *bytes, size_t size)
{
	enum { MODULUS = 65521, RUN = 5552 }; /* longest run before b can overflow */
	uint32_t a = 1, b = 0;
	while (size > 0) {
		size_t run = size < RUN ? size : RUN;
		for (size_t i = 0; i < run; i++) {
			a += bytes[i];
			b += a;
		}
		a %= MODULUS;
		b %= MODULUS;
		bytes += run;
		size -= run;
	}
	return b << 16 | a;
}

bool inflate_zlib(const unsigned char *in, size_t in_size, unsigned char *out, size_t out_size,
		  struct inflate_tables *tables)
{
	enum { HEADER = 2, TRAILER = 4, DEFLATE = 8, PRESET_DICTIONARY = 0x20 };
	if (in == NULL || (out == NULL && out_size != 0) || in_size < HEADER + TRAILER)
		return false;
	unsigned method = in[0], flags = in[1];
	if ((method & 15) != DEFLATE || (method >> 4) > 7 || (method << 8 | flags) % 31 != 0 ||
	    (flags & PRESET_DICTIONARY))
		return false;
	struct output output = { out, out_size, 0 };
	size_t consumed = 0;
	if (!inflate_raw(in + HEADER, in_size - HEADER - TRAILER, &output, tables, &consumed))
		return false;
	if (output.produced != out_size || consumed > in_size - HEADER - TRAILER)
		return false;
	const unsigned char *trailer = in + HEADER + consumed;
	uint32_t expected = (uint32_t)trailer[0] << 24 | (uint32_t)trailer[1] << 16 |
			    (uint32_t)trailer[2] << 8 | trailer[3];
	return adler32(out, out_size) == expected;
}
