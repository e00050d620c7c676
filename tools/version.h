/* The version the command prints. It must equal LOCKDEP_RCU_VERSION of
 * preload/report/report.h, which the tracer prints in every splat; test_cli checks
 * that they agree (this file does not include the tracer's headers, which
 * pull in its internals). */
#ifndef LOCKDEP_RCU_TOOL_VERSION_H
#define LOCKDEP_RCU_TOOL_VERSION_H
#define LOCKDEP_RCU_TOOL_VERSION "0.1"
#endif
