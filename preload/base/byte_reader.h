/* byte_reader.h - bounds-checked little-endian reading of ELF and DWARF data
 * that may be truncated or corrupt. A read past the end returns 0, marks the
 * reader failed and leaves it at the end, so every parsing loop that stops at
 * the end also stops on bad data; callers check `failed` where a value matters. */
#ifndef LOCKDEP_RCU_BYTE_READER_H
#define LOCKDEP_RCU_BYTE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct byte_reader {
	const unsigned char *at;
	const unsigned char *end;
	bool failed;
};

static inline struct byte_reader byte_reader_init(const void *start, size_t size)
{
	const unsigned char *at = start;
	return (struct byte_reader){ at, at + size, start == NULL };
}

static inline size_t byte_reader_left(const struct byte_reader *r)
{
	return (size_t)(r->end - r->at);
}

static inline void byte_reader_fail(struct byte_reader *r)
{
	r->failed = true;
	r->at = r->end;
}

/* Pointer to the next n bytes, consumed; NULL (and failed) if fewer remain. */
static inline const unsigned char *read_bytes(struct byte_reader *r, size_t n)
{
	if (byte_reader_left(r) < n) {
		byte_reader_fail(r);
		return NULL;
	}
	const unsigned char *at = r->at;
	r->at += n;
	return at;
}

static inline void skip_bytes(struct byte_reader *r, uint64_t n)
{
	if (byte_reader_left(r) < n)
		byte_reader_fail(r);
	else
		r->at += n;
}

/* n (at most 8) bytes as a little-endian number: x86-64's byte order. */
static inline uint64_t read_unsigned(struct byte_reader *r, size_t n)
{
	const unsigned char *p = read_bytes(r, n);
	uint64_t value = 0;
	if (p != NULL && n <= 8)
		memcpy(&value, p, n);
	return value;
}

static inline uint8_t read_u8(struct byte_reader *r)
{
	return (uint8_t)read_unsigned(r, 1);
}

static inline uint16_t read_u16(struct byte_reader *r)
{
	return (uint16_t)read_unsigned(r, 2);
}

static inline uint32_t read_u32(struct byte_reader *r)
{
	return (uint32_t)read_unsigned(r, 4);
}

static inline uint64_t read_u64(struct byte_reader *r)
{
	return read_unsigned(r, 8);
}

/* LEB128; bits beyond 64 are dropped (no undefined shifts), and a number
 * running off the end fails the reader. */
static inline uint64_t read_uleb128(struct byte_reader *r)
{
	uint64_t value = 0;
	unsigned shift = 0;
	while (r->at < r->end) {
		unsigned char byte = *r->at++;
		if (shift < 64)
			value |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
		if (!(byte & 0x80))
			return value;
	}
	byte_reader_fail(r);
	return 0;
}

static inline int64_t read_sleb128(struct byte_reader *r)
{
	uint64_t value = 0;
	unsigned shift = 0;
	while (r->at < r->end) {
		unsigned char byte = *r->at++;
		if (shift < 64)
			value |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
		if (!(byte & 0x80)) {
			if (shift < 64 && (byte & 0x40))
				value |= ~(uint64_t)0 << shift; /* sign-extend */
			return (int64_t)value;
		}
	}
	byte_reader_fail(r);
	return 0;
}

/* A NUL-terminated string inside the data, consumed with its NUL. */
static inline const char *read_cstring(struct byte_reader *r)
{
	const unsigned char *nul = r->at < r->end ? memchr(r->at, '\0', byte_reader_left(r)) : NULL;
	if (nul == NULL) {
		byte_reader_fail(r);
		return NULL;
	}
	const char *string = (const char *)r->at;
	r->at = nul + 1;
	return string;
}

/* The string at offset in a string section (.strtab, .debug_str...), NULL
 * unless it is NUL-terminated inside the section. */
static inline const char *string_at(const unsigned char *section, size_t size, uint64_t offset)
{
	if (section == NULL || offset >= size)
		return NULL;
	if (memchr(section + offset, '\0', size - offset) == NULL)
		return NULL;
	return (const char *)section + offset;
}

#endif
