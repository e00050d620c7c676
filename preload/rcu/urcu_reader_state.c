/* Finding liburcu's reader TLS: dlsym() of a TLS symbol gives the calling
 * thread's instance; minus the thread pointer, its offset, valid in every
 * thread when the module's TLS is in the static block (below the thread
 * pointer on x86-64, within the static TLS size). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <urcu/static/urcu-common.h>
#include "rcu/urcu_reader_state.h"
#include "base/options.h"
#include "runtime/thread_state.h"

unsigned urcu_readable_flavors;
__thread uintptr_t registered_ip[NR_URCU_FLAVORS] __attribute__((tls_model("initial-exec")));
struct urcu_gp *urcu_inline_gp[NR_URCU_FLAVORS];
int *urcu_inline_memb_membarrier;
int urcu_inline_qsbr;
intptr_t urcu_reader_tp_offset[NR_URCU_FLAVORS];

/* The static TLS block is small: modules loaded at start plus glibc's
 * surplus. A dynamic TLS block is malloc()ed, anywhere. */
#define STATIC_TLS_REACH (1 << 20)

void urcu_reader_state_init(void)
{
	static const char *const names[NR_URCU_FLAVORS] = {
#define READER_NAME(name, reg) [FLAVOR_##name] = "urcu_" #name "_reader",
		URCU_FLAVORS(READER_NAME)
#undef READER_NAME
	};
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	char *tp = (char *)__builtin_thread_pointer();
	for (int f = 0; f < NR_URCU_FLAVORS; f++) {
		char *addr = dlsym(RTLD_DEFAULT, names[f]);
		if (!addr)
			continue;
		intptr_t offset = addr - tp;
		if (offset >= 0 || -offset > STATIC_TLS_REACH)
			continue;
		urcu_reader_tp_offset[f] = offset;
		urcu_readable_flavors |= 1u << f;
		acquire_unusual_globals_set(UNUSUAL_URCU_READERS, 1);
	}
	/* urcu_inline_read.h: the read side done by the wrappers */
	if (tracer_options.inline_read_side) {
		static const char *const gp_names[NR_URCU_FLAVORS] = {
			[FLAVOR_memb] = "urcu_memb_gp", [FLAVOR_mb] = "urcu_mb_gp", [FLAVOR_signal] = "urcu_signal_gp",
		};
		urcu_inline_memb_membarrier = dlsym(RTLD_DEFAULT, "urcu_memb_has_sys_membarrier");
		__atomic_store_n(&urcu_inline_qsbr, 1, __ATOMIC_RELAXED);
		for (int f = 0; f < NR_URCU_FLAVORS; f++) {
			if (!gp_names[f] || !(urcu_readable_flavors & (1u << f)))
				continue;
			if (f == FLAVOR_memb && !urcu_inline_memb_membarrier)
				continue;
			struct urcu_gp *gp = dlsym(RTLD_DEFAULT, gp_names[f]);
			if (gp)
				__atomic_store_n(&urcu_inline_gp[f], gp, __ATOMIC_RELEASE);
		}
	}
	dlerror();
	tracer_leave(ts);
}

/* The layouts of the installed headers: registered is a bitfield after the
 * registry fields, in struct urcu_reader (memb, mb, signal) and struct
 * urcu_qsbr_reader; bp registers by itself. */
struct qsbr_reader_layout {
	unsigned long ctr;
	struct cds_list_head node __attribute__((aligned(CAA_CACHE_LINE_SIZE)));
	int waiting;
	pthread_t tid;
	unsigned int registered:1;
};

int urcu_registered_state(enum rcu_flavor f)
{
	if (!(urcu_readable_flavors & (1u << f)) || f == FLAVOR_bp)
		return -1;
	char *reader = (char *)__builtin_thread_pointer() + urcu_reader_tp_offset[f];
	if (f == FLAVOR_qsbr)
		return ((struct qsbr_reader_layout *)reader)->registered;
	return ((struct urcu_reader *)reader)->registered;
}

/* Another thread's TLS is at the same offsets from its thread pointer;
 * its thread_state tells where that is. */
static char *thread_pointer_of(const struct thread_state *other)
{
	char *self_tp = (char *)__builtin_thread_pointer();
	return (char *)other - ((char *)thread_state() - self_tp);
}

unsigned long urcu_reader_ctr_of(const struct thread_state *other, enum rcu_flavor f)
{
	if (!(urcu_readable_flavors & (1u << f)))
		return 0;
	char *tp = thread_pointer_of(other);
	if (f == FLAVOR_bp) {
		const unsigned long *reader = __atomic_load_n((const unsigned long *const *)(tp + urcu_reader_tp_offset[f]),
							      __ATOMIC_RELAXED);
		return reader ? __atomic_load_n(reader, __ATOMIC_RELAXED) : 0;
	}
	return __atomic_load_n((const unsigned long *)(tp + urcu_reader_tp_offset[f]), __ATOMIC_RELAXED);
}

unsigned long urcu_gp_ctr(enum rcu_flavor f)
{
	static const char *const names[NR_URCU_FLAVORS] = {
#define GP_NAME(name, reg) [FLAVOR_##name] = "urcu_" #name "_gp",
		URCU_FLAVORS(GP_NAME)
#undef GP_NAME
	};
	static const unsigned long *gp[NR_URCU_FLAVORS];
	static int looked_up[NR_URCU_FLAVORS];
	if (f >= NR_URCU_FLAVORS)
		return 0;
	if (!__atomic_load_n(&looked_up[f], __ATOMIC_ACQUIRE)) {
		/* struct urcu_gp and struct urcu_bp_gp both begin with ctr */
		__atomic_store_n(&gp[f], dlsym(RTLD_DEFAULT, names[f]), __ATOMIC_RELAXED);
		dlerror();
		__atomic_store_n(&looked_up[f], 1, __ATOMIC_RELEASE);
	}
	const unsigned long *ctr = __atomic_load_n(&gp[f], __ATOMIC_RELAXED);
	return ctr ? __atomic_load_n(ctr, __ATOMIC_RELAXED) : 0;
}

int urcu_reader_blocks_grace_period(unsigned long ctr, unsigned long gp, enum rcu_flavor f)
{
	if (f == FLAVOR_qsbr)   /* online, and not through the current period */
		return ctr != 0 && ctr != gp;
	/* URCU_GP_CTR_PHASE: the low half is the nesting */
	unsigned long phase = 1ul << (sizeof(unsigned long) * 4);
	return (ctr & (phase - 1)) && ((ctr ^ gp) & phase);
}
