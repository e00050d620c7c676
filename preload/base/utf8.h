/* UTF-8, as the tracer's records and the command's JSON write it: one
 * definition of a valid sequence for both. */
#ifndef LOCKDEP_RCU_UTF8_H
#define LOCKDEP_RCU_UTF8_H

#include <stddef.h>

/* The length of the UTF-8 sequence that starts s (at most n bytes), or 0
 * when the bytes there are not one whole, shortest-form sequence of a code
 * point (surrogates and values above U+10FFFF are not). */
static inline size_t utf8_sequence(const unsigned char *s, size_t n)
{
	unsigned c = s[0], len, cp, min;
	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0)
		len = 2, cp = c & 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		len = 3, cp = c & 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		len = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (unsigned i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

#endif
