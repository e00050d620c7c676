/* Before the calls the kernel refuses in a process of more than one thread
 * (intercept_namespaces.c): the tracer's own thread stopped. For the
 * syscall() wrapper, which sees the same calls made raw. */
#ifndef LOCKDEP_RCU_NAMESPACES_H
#define LOCKDEP_RCU_NAMESPACES_H

void namespaces_before_unshare(long flags);
void namespaces_before_setns(long nstype);

#endif
