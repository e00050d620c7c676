/* demangle.h - the qualified name of a C++ function or variable from its
 * Itanium-ABI symbol, for reports and graphs: "_ZN5tpool19thread_pool_
 * genericC1Eii" -> "tpool::thread_pool_generic::thread_pool_generic",
 * "_ZNSt6vectorIiSaIiEE9push_backERKi" -> "std::vector<int, std::allocator
 * <int> >::push_back". By libiberty's demangler (demangle.c), as `c++filt
 * --no-params --no-verbose` prints it.
 *
 * Only the name: no parameter types (a frame stays short, and overloads are
 * told apart by their offsets and lines); template arguments, operators,
 * local and anonymous-namespace names are demangled. A GCC clone suffix
 * (".isra.0") is kept as it is. No allocation, no locale: the tracer calls it
 * inside reports, the tools on addr2line's output. Pure logic. */
#ifndef LOCKDEP_RCU_DEMANGLE_H
#define LOCKDEP_RCU_DEMANGLE_H

#include <stddef.h>

/* Writes the demangled name of mangled[0..len) into out (NUL-terminated,
 * truncated to size) and returns its length; 0 when the name is not
 * mangled ("_Z..."), not valid, or longer than 1 KiB (out is then
 * unspecified). */
size_t demangle_name(const char *mangled, size_t len, char *out, size_t size);

#endif
