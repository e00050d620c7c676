/* demangle.c - demangle.h by libiberty's cplus_demangle_v3_callback(), the
 * demangler of GCC and binutils (c++filt, addr2line -C), linked in statically
 * (Makefile: SYMBOLIZE_LIBS). Called without DMGL_PARAMS: the name as
 * `c++filt --no-params` prints it. The callback form allocates nothing: its
 * parse tree and substitution table are arrays on the stack, sized by the
 * name's length (see MANGLED_MAX); only its malloc'ing wrappers
 * (cplus_demangle_v3, __cxa_demangle) allocate. */
#include <string.h>
#include <libiberty/demangle.h>

#include "symbolize/demangle.h"

/* Longer names stay mangled. The demangler puts ~72 bytes a mangled character
 * on the stack (two parse tree nodes of 32 bytes, one substitution pointer)
 * and recurses ~1 KiB a level of template nesting: measured, at most 50 KiB
 * over libLLVM's 39k names (the longest 604 characters), 195 KiB for a
 * contrived 765-character nest of templates, within the tracer's 1 MiB stack
 * (tracer_stack.h). A name this long does not fit the 512 bytes reports give
 * it demangled anyway. */
enum { MANGLED_MAX = 1024 };

struct out {
	char *buf;
	size_t size, len;
};

/* The demangler's output callback, and the clone suffix: a piece of the name
 * appended, what does not fit counted but dropped. */
static void put(const char *s, size_t n, void *opaque)
{
	struct out *o = opaque;
	for (size_t i = 0; i < n; i++) {
		if (o->len + 1 < o->size)
			o->buf[o->len] = s[i];
		o->len++;
	}
}

size_t demangle_name(const char *mangled, size_t len, char *buf, size_t size)
{
	if (size == 0 || len < 3 || mangled[0] != '_' || mangled[1] != 'Z')
		return 0;
	/* A GCC clone, "_ZN1a1bEv.isra.0", keeps its suffix as it is rather
	 * than libiberty's " [clone .isra.0]": " [" would end a report frame's
	 * name (tools/splat.c). The name proper is demangled NUL-terminated. */
	const char *dot = memchr(mangled, '.', len);
	size_t name_len = dot ? (size_t)(dot - mangled) : len;
	if (name_len > MANGLED_MAX)
		return 0;
	char name[MANGLED_MAX + 1];
	memcpy(name, mangled, name_len);
	name[name_len] = '\0';
	struct out o = { buf, size, 0 };
	if (!cplus_demangle_v3_callback(name, DMGL_NO_OPTS, put, &o) || o.len == 0)
		return 0;
	if (dot)
		put(dot, (size_t)(mangled + len - dot), &o);
	if (o.len + 1 > size)
		o.len = size - 1;
	buf[o.len] = '\0';
	return o.len;
}
