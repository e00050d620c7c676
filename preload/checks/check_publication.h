/* Checked publication (the article's third future direction): two threads
 * that publish to one RCU-protected pointer with rcu_assign_pointer() (or
 * rcu_set_pointer()) while holding no lock in common can publish at once,
 * and one update is lost: its new object leaks, or the old one is freed
 * twice. The check keeps, for each pointer published to, the set of locks
 * every updater held (Eraser's lockset algorithm, Savage et al. 1997):
 *
 *  - one updater, from its first publication on, owns the pointer: its
 *    publications are not checked (a single updater needs no lock);
 *  - another thread publishing takes the pointer over when the owner's last
 *    publication happened before that thread was created, or the owner has
 *    ended (start-up publications, work handed to a new thread);
 *  - otherwise the pointer is shared: its lockset starts as the locks both
 *    held (for writing), and every later publication keeps only the locks
 *    its updater holds. An empty lockset is the report, once per site:
 *    "WARNING: suspicious RCU usage", with this updater's locks and stack
 *    and the other updater's.
 *  - a pointer whose value is not what its last publication stored was
 *    written by other means (a new object at a freed one's address, a
 *    plain store, rcu_xchg_pointer() or rcu_cmpxchg_pointer(), atomic by
 *    design): its history is forgotten.
 *
 * Pointers are kept in a bounded table (MAX_PUBLISHED_POINTERS); when it is
 * full, publications to new pointers are not checked and a line says so. */
#ifndef LOCKDEP_RCU_CHECK_PUBLICATION_H
#define LOCKDEP_RCU_CHECK_PUBLICATION_H

#include <stdint.h>
#include "runtime/thread_state.h"

#define MAX_PUBLISHED_POINTERS 4096

/* The program publishes value to *addr, from ip (before the store). */
void check_publication(struct thread_state *ts, void *const *addr, const void *value, uintptr_t ip);

#endif
