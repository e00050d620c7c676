/* The real functions behind each interposed symbol, found lazily: wrappers
 * are called before our constructor runs, and a program may dlopen liburcu
 * late, so nothing can be resolved up front. */
#ifndef LOCKDEP_RCU_REAL_FUNCTIONS_H
#define LOCKDEP_RCU_REAL_FUNCTIONS_H

/* Looks name up after this object (dlsym(RTLD_NEXT)); failing that, in the
 * scope of the object that called the wrapper (`caller` is a return address
 * into it: a plugin dlopen()ed RTLD_LOCAL brings its own liburcu, which the
 * global scope does not have), then in every loaded object. Never aborts:
 * when nothing defines it, prints one line and returns a stub that does
 * nothing and returns 0. */
void *resolve_real(const char *name, const void *caller);
/* Same, for a symbol version (pthread_cond_* of old binaries). */
void *resolve_real_version(const char *name, const char *version);

/* The loader's dlopen()/dlclose() for the tracer's own lookups (RTLD_NOLOAD
 * handles of objects already loaded), never the tracer's wrappers. */
void *loader_dlopen(const char *path, int flags);
int loader_dlclose(void *handle);

/* Declares the pointer to the real `name`, typed like our own definition. */
#define DEFINE_REAL(name) static __typeof__(&name) real_##name

/* The real function: a relaxed load on the fast path (a plain mov on x86);
 * racing first calls store the same value, so no lock is needed. Expanded
 * in a wrapper, so the return address is the program's call. */
#define REAL(name) ({                                                           \
	__typeof__(real_##name) real_ = __atomic_load_n(&real_##name, __ATOMIC_RELAXED); \
	__builtin_expect(real_ != 0, 1) ? real_ : real_##name##_slow(__builtin_return_address(0)); })

/* The out-of-line resolver that REAL() calls the first time. */
#define DEFINE_REAL_RESOLVER(name)                                              \
	static __attribute__((noinline, cold)) __typeof__(&name) real_##name##_slow(const void *caller) \
	{                                                                          \
		__typeof__(&name) fn = (__typeof__(&name))resolve_real(#name, caller); \
		__atomic_store_n(&real_##name, fn, __ATOMIC_RELAXED);              \
		return fn;                                                         \
	}

#define INTERPOSE(name) DEFINE_REAL(name); DEFINE_REAL_RESOLVER(name)

/* For functions the dynamic loader calls itself (free, munmap): resolved
 * by reading the next objects' symbol tables, never with dlsym(), which
 * would clobber the loader's pending error state (next_symbol.h). */
void *resolve_real_in_loader(const char *name);
#define DEFINE_LOADER_SAFE_RESOLVER(name)                                       \
	static __attribute__((noinline, cold)) __typeof__(&name) real_##name##_slow(const void *caller) \
	{                                                                          \
		(void)caller;                                                      \
		__typeof__(&name) fn = (__typeof__(&name))resolve_real_in_loader(#name); \
		__atomic_store_n(&real_##name, fn, __ATOMIC_RELAXED);              \
		return fn;                                                         \
	}
#define INTERPOSE_LOADER_SAFE(name) DEFINE_REAL(name); DEFINE_LOADER_SAFE_RESOLVER(name)

#endif
