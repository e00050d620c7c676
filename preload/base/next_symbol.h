/* The next definition of a function after this object, without dlsym():
 * for the wrappers the dynamic loader itself calls (see next_symbol.c). */
#ifndef LOCKDEP_RCU_NEXT_SYMBOL_H
#define LOCKDEP_RCU_NEXT_SYMBOL_H

void *next_symbol(const char *name);

#endif
