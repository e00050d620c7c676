/* Site keys: a call chain is unwound (a few frames, about a microsecond),
 * looked up in a cache of chains seen before, and only for a new chain
 * named with the symbolizer (which needs its lock and the tracer's stack). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "classes/lock_class_keys.h"
#include "unwind/backtrace.h"
#include "base/class_rules.h"
#include "runtime/log_output.h"
#include "base/options.h"
#include "symbolize/symbolize.h"
#include "runtime/thread_state.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9E3779B97F4A7C15ull;
	return h ^ (h >> 31);
}

/* ---- the cache: raw chain -> site key ------------------------------------ */

struct chain_entry {
	uint64_t chain;     /* hash of the raw return addresses; 0: free */
	struct site_key value;
	int ready;          /* value written (release) */
};
static struct chain_entry *chain_cache;

#include "runtime/tracer_arena.h"
#include "symbolize/symbolizer_lock.h"

static struct chain_entry *chain_slot(uint64_t chain, int claim)
{
	struct chain_entry *cache = __atomic_load_n(&chain_cache, __ATOMIC_ACQUIRE);
	if (!cache) {
		if (!claim)
			return NULL;
		struct chain_entry *fresh = tracer_pages_map(CLASS_KEY_CACHE_SIZE * sizeof(*fresh));
		struct chain_entry *expected = NULL;
		if (!fresh)
			return NULL;
		if (!__atomic_compare_exchange_n(&chain_cache, &expected, fresh, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			tracer_pages_unmap(fresh, CLASS_KEY_CACHE_SIZE * sizeof(*fresh));
			fresh = expected;
		}
		cache = fresh;
	}
	for (size_t i = (size_t)(chain >> 40), n = 0; n < 64; i++, n++) {
		struct chain_entry *e = &cache[i & (CLASS_KEY_CACHE_SIZE - 1)];
		uint64_t cur = __atomic_load_n(&e->chain, __ATOMIC_ACQUIRE);
		if (cur == chain)
			return e;
		if (!cur) {
			if (!claim)
				return NULL;
			uint64_t expected = 0;
			if (__atomic_compare_exchange_n(&e->chain, &expected, chain, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE) || expected == chain)
				return e;
		}
	}
	return NULL;   /* full around here: named again each time */
}

/* ---- naming a new chain (on the tracer's stack, symbolizer to ourselves) --- */

struct naming {
	const uintptr_t *frames;
	size_t nr_frames;
	struct site_key *out;
};

static void name_chain(void *arg)
{
	struct naming *n = arg;
	struct site_key *k = n->out;
	uintptr_t site = n->frames[0];
	char function[256] = "";
	symbolize_function(site, function, sizeof(function));
	int depth = class_rules_depth(function);
	if (depth < 0)
		depth = tracer_options.class_depth;
	char file[512];
	int line = 0;
	uint64_t key = 0x5eed;
	if (site && symbolize_source(site - 1, file, sizeof(file), &line)) {
		for (const char *c = file; *c; c++)
			key = mix(key, (unsigned char)*c);
		key = mix(key, (uint64_t)line);
	} else {
		key = mix(key, site);
	}
	k->site = site;
	k->nr_callers = 0;
	for (int j = 1; j <= depth && (size_t)j < n->nr_frames; j++) {
		uintptr_t start = symbolize_function_start(n->frames[j]);
		uintptr_t f = start ? start : n->frames[j];
		key = mix(key, f);
		k->callers[k->nr_callers++] = f;
	}
	k->key = key | 1;
}

size_t site_key_frames_wanted(void)
{
	return class_rules_count() ? CLASS_KEY_MAX_CALLERS + 1 : (size_t)tracer_options.class_depth + 1;
}

int site_key_here(struct thread_state *ts, uintptr_t ip, struct site_key *out)
{
	uintptr_t frames[CLASS_KEY_MAX_CALLERS + 1];
	size_t n = backtrace_capture(frames, site_key_frames_wanted());
	return site_key_of(ts, ip, frames, n, out);
}

int site_key_of(struct thread_state *ts, uintptr_t ip, const uintptr_t *frames, size_t n,
		struct site_key *out)
{
	if (!n || frames[0] != ip)
		return 0;   /* no unwinder yet, or not where the wrapper was called */
	uint64_t chain = 0x7a11;
	for (size_t i = 0; i < n; i++)
		chain = mix(chain, frames[i]);
	chain |= 1;
	struct chain_entry *e = chain_slot(chain, 1);
	if (e && __atomic_load_n(&e->ready, __ATOMIC_ACQUIRE)) {
		*out = e->value;
		return 1;
	}
	struct naming naming = { frames, n, out };
	if (!symbolizer_run(ts, name_chain, &naming)) {
		/* no symbolizer now (a signal handler): the raw chain */
		out->key = chain;
		out->site = ip;
		out->nr_callers = 0;
		return 1;
	}
	if (e && !__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE)) {
		e->value = *out;
		__atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
	}
	return 1;
}

void lock_class_keys_load_rules(void)
{
	if (!tracer_options.class_rules[0])
		return;
	char err[512];
	int ret = class_rules_load(tracer_options.class_rules, err, sizeof(err));
	if (ret == -2)
		log_output_die_unreadable("class rules", err);
	if (ret < 0) {
		char line[700];
		int n = snprintf(line, sizeof(line),
				 "lockdep-rcu: ignoring option 'class_rules' in LOCKDEP_RCU_OPTIONS: %s\n", err);
		log_output_write(line, n < 0 ? 0 : (size_t)n >= sizeof(line) ? sizeof(line) - 1 : (size_t)n);
	}
}
