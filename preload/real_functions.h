/* The real functions behind each interposed symbol, found lazily with
 * dlsym(RTLD_NEXT): wrappers are called before our constructor runs, and a
 * program may dlopen liburcu late, so nothing can be resolved up front. */
#ifndef LOCKDEP_RCU_REAL_FUNCTIONS_H
#define LOCKDEP_RCU_REAL_FUNCTIONS_H

/* Looks name up after this object; on failure prints one line and aborts:
 * a wrapper without its real function cannot keep the program's semantics. */
void *resolve_real(const char *name);
/* Same, for a symbol version (pthread_cond_* of old binaries). */
void *resolve_real_version(const char *name, const char *version);

/* Declares the pointer to the real `name`, typed like our own definition. */
#define DEFINE_REAL(name) static __typeof__(&name) real_##name

/* The real function: a relaxed load on the fast path (a plain mov on x86);
 * racing first calls store the same value, so no lock is needed. */
#define REAL(name) \
	(__builtin_expect(__atomic_load_n(&real_##name, __ATOMIC_RELAXED) != 0, 1) \
	 ? real_##name : real_##name##_slow())

/* The out-of-line resolver that REAL() calls the first time. */
#define DEFINE_REAL_RESOLVER(name)                                              \
	static __attribute__((noinline, cold)) __typeof__(&name) real_##name##_slow(void) \
	{                                                                          \
		__typeof__(&name) fn = (__typeof__(&name))resolve_real(#name);     \
		__atomic_store_n(&real_##name, fn, __ATOMIC_RELAXED);              \
		return fn;                                                         \
	}

#define INTERPOSE(name) DEFINE_REAL(name); DEFINE_REAL_RESOLVER(name)

#endif
