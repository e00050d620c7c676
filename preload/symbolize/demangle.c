/* The subset of the Itanium C++ ABI mangling demangle.h describes:
 *
 *   _Z [L] <name> <anything: the parameter types, ignored> [.suffix]
 *   <name> ::= N [r][V][K][R|O] <component>+ E | St <source-name> | <source-name>
 *   <component> ::= <source-name> | St (first only) | C1..C5 | D0..D5
 *   <source-name> ::= <decimal length> <identifier>
 */
#include <string.h>
#include "symbolize/demangle.h"

struct out {
	char *buf;
	size_t size, len;
};

static void put(struct out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (o->len + 1 < o->size)
			o->buf[o->len] = s[i];
		o->len++;
	}
}

/* A <source-name> at *p: its identifier in *id, *id_len; 0 when none. */
static int source_name(const char **p, const char *end, const char **id, size_t *id_len)
{
	const char *q = *p;
	size_t n = 0;
	if (q >= end || *q < '1' || *q > '9')
		return 0;
	while (q < end && *q >= '0' && *q <= '9') {
		n = n * 10 + (size_t)(*q - '0');
		if (n > 4096)
			return 0;
		q++;
	}
	if ((size_t)(end - q) < n)
		return 0;
	*id = q;
	*id_len = n;
	*p = q + n;
	return 1;
}

size_t demangle_name(const char *mangled, size_t len, char *buf, size_t size)
{
	struct out o = { buf, size, 0 };
	if (size == 0 || len < 3 || mangled[0] != '_' || mangled[1] != 'Z')
		return 0;
	/* a GCC clone: "_ZN1a1bEv.isra.0", the suffix kept as it is */
	const char *dot = memchr(mangled, '.', len);
	const char *end = dot ? dot : mangled + len;
	const char *p = mangled + 2;
	if (p < end && *p == 'L')   /* internal linkage */
		p++;
	const char *id = NULL, *last = NULL;
	size_t id_len = 0, last_len = 0;
	if (p < end && *p == 'N') {
		p++;
		while (p < end && (*p == 'r' || *p == 'V' || *p == 'K'))
			p++;
		if (p < end && (*p == 'R' || *p == 'O'))
			p++;
		int components = 0;
		while (p < end && *p != 'E') {
			if (components)
				put(&o, "::", 2);
			if (!components && end - p >= 2 && p[0] == 'S' && p[1] == 't') {
				put(&o, "std", 3);
				p += 2;
			} else if (source_name(&p, end, &id, &id_len)) {
				put(&o, id, id_len);
				last = id;
				last_len = id_len;
			} else if (end - p >= 2 && p[0] == 'C' && p[1] >= '1' && p[1] <= '5' && last) {
				put(&o, last, last_len);   /* a constructor: its class's name */
				p += 2;
			} else if (end - p >= 2 && p[0] == 'D' && p[1] >= '0' && p[1] <= '5' && last) {
				put(&o, "~", 1);
				put(&o, last, last_len);
				p += 2;
			} else {
				return 0;   /* a template, an operator, a substitution... */
			}
			components++;
		}
		if (p >= end || components < 2)
			return 0;
	} else if (end - p >= 2 && p[0] == 'S' && p[1] == 't') {
		p += 2;
		if (!source_name(&p, end, &id, &id_len))
			return 0;
		put(&o, "std::", 5);
		put(&o, id, id_len);
	} else if (source_name(&p, end, &id, &id_len)) {
		put(&o, id, id_len);
	} else {
		return 0;
	}
	if (dot)
		put(&o, dot, (size_t)(mangled + len - dot));
	if (o.len + 1 > size)
		o.len = size - 1;
	buf[o.len] = 0;
	return o.len;
}
