/* demangle.h - the qualified name of a C++ function or variable from its
 * Itanium-ABI symbol, for reports and graphs: "_ZN5tpool19thread_pool_
 * genericC1Eii" -> "tpool::thread_pool_generic::thread_pool_generic".
 *
 * Only the name: no parameter types (a name without spaces keeps a frame
 * one token, and overloads are told apart by their offsets and lines), and
 * only the common shapes: nested names of identifiers, constructors,
 * destructors, std::, internal linkage, a GCC clone suffix (".isra.0").
 * Anything else (templates, operators, substitutions, local names) is left
 * mangled: a name is never guessed. No allocation, no locale: the tracer
 * calls it inside reports, the tools on addr2line's output. Pure logic. */
#ifndef LOCKDEP_RCU_DEMANGLE_H
#define LOCKDEP_RCU_DEMANGLE_H

#include <stddef.h>

/* Writes the demangled name of mangled[0..len) into out (NUL-terminated,
 * truncated to size) and returns its length; 0 when the name is not
 * mangled or not of a shape handled (out is then unspecified). */
size_t demangle_name(const char *mangled, size_t len, char *out, size_t size);

#endif
