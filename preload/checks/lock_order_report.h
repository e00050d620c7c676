/* The printers of what the lock-order validator finds: the sink the checks
 * hand to every graph call (lock_graph.h). */
#ifndef LOCKDEP_RCU_LOCK_ORDER_REPORT_H
#define LOCKDEP_RCU_LOCK_ORDER_REPORT_H

#include "graph/lock_graph.h"

extern const struct lock_graph_sink lock_order_reports;

#endif
