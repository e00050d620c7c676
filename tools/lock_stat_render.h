/* The report's "lock statistics" section, text and JSON: the classes most
 * contended over all processes of the input, in the columns of the
 * kernel's /proc/lock_stat, each with the call site that waited most. */
#ifndef LOCKDEP_RCU_LOCK_STAT_RENDER_H
#define LOCKDEP_RCU_LOCK_STAT_RENDER_H

#include "json.h"
#include "lock_stat.h"

void render_lock_stats_text(const struct lock_stats *t, struct strbuf *out);
/* A "lock_statistics" member of the object being written. */
void render_lock_stats_json(const struct lock_stats *t, struct json *j);

#endif
