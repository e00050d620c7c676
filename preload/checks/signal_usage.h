/* The usage states of a lock class with respect to a signal: kernel
 * lockdep's IRQ usage states (USED_IN_HARDIRQ, ENABLED_HARDIRQ and their
 * _READ twins), with a signal handler for the interrupt handler and "the
 * signal not blocked" for "interrupts enabled". Pure logic: the rules of
 * mark_lock_irq() and the names the reports print, no state.
 *
 * Encoded as the kernel encodes lock_usage_bit: bit 0 is read (1) or write
 * (0), bit 1 the direction, in the handler (0) or with the signal
 * deliverable (1). */
#ifndef LOCKDEP_RCU_SIGNAL_USAGE_H
#define LOCKDEP_RCU_SIGNAL_USAGE_H

#include <signal.h>
#include <stdio.h>
#include <string.h>

enum signal_usage_bit {
	USED_IN_SIGNAL_W,   /* taken (for write) in the handler of the signal */
	USED_IN_SIGNAL_R,   /* taken for a recursive read in the handler */
	SIGNAL_ON_W,        /* taken (for write) with the signal not blocked */
	SIGNAL_ON_R,        /* taken for a recursive read with it not blocked */
	NR_SIGNAL_USAGE,
};

#define USAGE_BIT(u) (1u << (u))
#define SIGNAL_USAGE_READ 1u
#define SIGNAL_USAGE_DIR 2u

static inline const char *signal_usage_name(enum signal_usage_bit u)
{
	static const char *const names[NR_SIGNAL_USAGE] = {
		[USED_IN_SIGNAL_W] = "IN-SIGNAL-W",
		[USED_IN_SIGNAL_R] = "IN-SIGNAL-R",
		[SIGNAL_ON_W] = "SIGNAL-ON-W",
		[SIGNAL_ON_R] = "SIGNAL-ON-R",
	};
	return (unsigned)u < NR_SIGNAL_USAGE ? names[u] : "?";
}

/* The kernel's exclusive_bit(): the opposite direction, write. */
static inline enum signal_usage_bit signal_usage_exclusive(enum signal_usage_bit u)
{
	return (enum signal_usage_bit)((u & SIGNAL_USAGE_DIR) ^ SIGNAL_USAGE_DIR);
}

/* The usages a new usage cannot live with (mark_lock_irq()'s valid_state()
 * checks): the opposite direction's write usage always, and its read usage
 * too when the new usage is a write. Two recursive reads never wait for
 * each other, so a read in the handler and a read with the signal
 * deliverable are fine. */
static inline unsigned signal_usage_conflicts(enum signal_usage_bit u)
{
	enum signal_usage_bit excl = signal_usage_exclusive(u);
	unsigned mask = USAGE_BIT(excl);
	if (!(u & SIGNAL_USAGE_READ))
		mask |= USAGE_BIT(excl | SIGNAL_USAGE_READ);
	return mask;
}

/* The existing usage to report a new one against, in the kernel's order
 * (the write usage first, then its read variant); -1 when none conflicts. */
static inline int signal_usage_first_conflict(enum signal_usage_bit u, unsigned existing)
{
	unsigned bad = signal_usage_conflicts(u) & existing;
	enum signal_usage_bit excl = signal_usage_exclusive(u);
	if (bad & USAGE_BIT(excl))
		return excl;
	if (bad)
		return excl | SIGNAL_USAGE_READ;
	return -1;
}

/* "SIGALRM", "SIGRTMIN+3": async-signal-safe (sigabbrev_np() reads a
 * table; the tracer prints it from its report bodies only). */
static inline const char *signal_name(int signo, char *buf, size_t size)
{
	const char *abbrev = signo > 0 ? sigabbrev_np(signo) : NULL;
	if (abbrev)
		snprintf(buf, size, "SIG%s", abbrev);
	else if (signo == SIGRTMAX)
		snprintf(buf, size, "SIGRTMAX");
	else if (signo >= SIGRTMIN && signo < SIGRTMAX)
		snprintf(buf, size, "SIGRTMIN+%d", signo - SIGRTMIN);
	else
		snprintf(buf, size, "signal %d", signo);
	return buf;
}

#endif
