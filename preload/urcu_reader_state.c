/* Finding liburcu's reader TLS: dlsym() of a TLS symbol gives the calling
 * thread's instance; minus the thread pointer, its offset, valid in every
 * thread when the module's TLS is in the static block (below the thread
 * pointer on x86-64, within the static TLS size). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <urcu/static/urcu-common.h>
#include "urcu_reader_state.h"
#include "thread_state.h"

unsigned urcu_readable_flavors;
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
