/* graph_path=FILE: the lock-class dependency graph as Graphviz DOT at exit
 * (the format is described in graph_dump.c). */
#ifndef LOCKDEP_RCU_GRAPH_DUMP_H
#define LOCKDEP_RCU_GRAPH_DUMP_H

/* At startup: remembers the path (made absolute) and the loading process. */
void graph_dump_setup(void);
/* At exit (once per process). */
void graph_dump_write(void);

#endif
