/* The RCU flavors the tracer tracks: liburcu's five libraries, then the flavors
 * userspace lacks and the header provides (bh, sched, SRCU domains).
 * One X-macro table drives the liburcu interposition, the names in reports and
 * the per-thread nesting counters, so adding a flavor is one line. */
#ifndef LOCKDEP_RCU_FLAVORS_H
#define LOCKDEP_RCU_FLAVORS_H

/* X(name, needs_registration): liburcu flavors, in the order of enum rcu_flavor.
 * bp registers threads by itself, every other flavor needs rcu_register_thread(). */
#define URCU_FLAVORS(X) \
	X(memb, 1)      \
	X(mb, 1)        \
	X(signal, 1)    \
	X(qsbr, 1)      \
	X(bp, 0)

enum rcu_flavor {
#define FLAVOR_ENUM(name, reg) FLAVOR_##name,
	URCU_FLAVORS(FLAVOR_ENUM)
#undef FLAVOR_ENUM
	NR_URCU_FLAVORS,
	/* Flavors of the header, built on the program's liburcu flavor. The
	 * values match LOCKDEP_RCU_FLAVOR_* in include/lockdep-rcu.h. */
	FLAVOR_bh = NR_URCU_FLAVORS,
	FLAVOR_sched,
	FLAVOR_srcu,
	NR_FLAVORS,
	FLAVOR_NONE = 0xff,
};

extern const char *const flavor_name[NR_FLAVORS];      /* "memb", ..., "srcu" */
extern const char *const flavor_lock_name[NR_FLAVORS]; /* "rcu_read_lock_memb", ... */
extern const unsigned char flavor_needs_registration[NR_URCU_FLAVORS];

#endif
