/* Names of the flavors, for reports. */
#include "base/flavors.h"

const char *const flavor_name[NR_FLAVORS] = {
#define FLAVOR_NAME(name, reg) [FLAVOR_##name] = #name,
	URCU_FLAVORS(FLAVOR_NAME)
#undef FLAVOR_NAME
	[FLAVOR_bh] = "bh",
	[FLAVOR_sched] = "sched",
	[FLAVOR_srcu] = "srcu",
};

const char *const flavor_lock_name[NR_FLAVORS] = {
#define FLAVOR_LOCK_NAME(name, reg) [FLAVOR_##name] = "rcu_read_lock_" #name,
	URCU_FLAVORS(FLAVOR_LOCK_NAME)
#undef FLAVOR_LOCK_NAME
	[FLAVOR_bh] = "rcu_read_lock_bh",
	[FLAVOR_sched] = "rcu_read_lock_sched",
	[FLAVOR_srcu] = "srcu_read_lock",
};

const unsigned char flavor_needs_registration[NR_URCU_FLAVORS] = {
#define FLAVOR_REG(name, reg) [FLAVOR_##name] = reg,
	URCU_FLAVORS(FLAVOR_REG)
#undef FLAVOR_REG
};
