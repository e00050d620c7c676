/* The tracer's options as `run --option` and `stress --option` pass them on,
 * checked against the tracer's own table (preload/base/options.h, included, not
 * copied): the command and the tracer cannot disagree on which options
 * exist and what type their values have. */
#ifndef LOCKDEP_RCU_TRACER_OPTIONS_H
#define LOCKDEP_RCU_TRACER_OPTIONS_H

#include "util.h"

/* Checks "KEY=VALUE" (or several, split by ':' as in LOCKDEP_RCU_OPTIONS):
 * each KEY must be a tracer option, an integer option's VALUE an integer
 * as the tracer parses it, a string option's VALUE short enough for its
 * buffer. 0, or -1 with one line (no newline) in err. Ranges (max_frames
 * 1-128, ...) are left to the tracer, which names a bad value and keeps
 * the default. */
int tracer_options_check(const char *options, struct strbuf *err);

#endif
