/* What identifies the class of a lock made (or, never initialized by a
 * call, first taken) at a call site: the source location of the call, so
 * that two inlined copies of one constructor are one class, and the
 * functions that called it, so that a generic constructor (unbound's
 * lruhash_create(), APR's apr_thread_mutex_create()) makes one class per
 * user instead of merging the locks of unrelated objects. Functions, not
 * call lines: a constructor called from two lines of one function makes
 * one class. How many callers count is the class_depth option, overridden
 * per function by the class rules; without debug information the source
 * location is the call's address. */
#ifndef LOCKDEP_RCU_LOCK_CLASS_KEYS_H
#define LOCKDEP_RCU_LOCK_CLASS_KEYS_H

#include <stddef.h>
#include <stdint.h>

#define CLASS_KEY_MAX_CALLERS 8
#define CLASS_KEY_CACHE_SIZE (1u << 14)   /* call chains remembered (power of 2) */

struct thread_state;

struct site_key {
	uint64_t key;                 /* 0: none */
	uintptr_t site;               /* the return address of the call */
	int nr_callers;
	uintptr_t callers[CLASS_KEY_MAX_CALLERS];   /* their functions' starts */
};

/* How many frames a key needs: the site and its callers. */
size_t site_key_frames_wanted(void);

/* The key of a call chain: frames[0] is the call site (the return address
 * of the wrapper), the rest its callers. Returns 0 when the chain is
 * unusable (empty, or not starting at `ip`); the caller then keys by `ip`
 * alone. */
int site_key_of(struct thread_state *ts, uintptr_t ip, const uintptr_t *frames, size_t n,
		struct site_key *out);

/* The same, unwinding here (a few tracer frames more to step through). */
int site_key_here(struct thread_state *ts, uintptr_t ip, struct site_key *out);

/* Reads the class rules file of the options (at startup, once); a bad one
 * is named and ignored. */
void lock_class_keys_load_rules(void);

#endif
