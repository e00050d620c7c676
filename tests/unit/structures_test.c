/* The tracer's data structures on their own, under ASan/UBSan: the key
 * sets (set, cache, bounded), the same-class instance-pair cache, the
 * lock instance map (growth, churn, range
 * forgetting), the stack depot and the class-rules parser. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "base/class_rules.h"
#include "graph/instance_pairs.h"
#include "base/key_set.h"
#include "classes/lock_instances.h"
#include "classes/orphaned_locks.h"
#include "unwind/stack_depot.h"
#include "runtime/self_check.h"

/* The limit messages the structures print (report.c in the tracer). */
static int limits_hit;
void log_output_limit_once(const char *title, const char *detail)
{
	(void)title, (void)detail;
	limits_hit++;
}

/* What a failed self-check writes (log_output.c in the tracer). */
static char written[1024];
static int writes;
void log_output_write(const char *buf, size_t len)
{
	writes++;
	if (len >= sizeof(written))
		len = sizeof(written) - 1;
	memcpy(written, buf, len);
	written[len] = 0;
}

/* ---- key sets ---------------------------------------------------------------- */

static uint64_t key_of(uint64_t i)
{
	uint64_t k = (i + 1) * 0x9E3779B97F4A7C15ull;
	return k | 1;
}

Test(key_set, inserts_and_finds_until_full_then_says_so)
{
	enum { SIZE = 1024 };
	static uint64_t set[SIZE];
	int full_at = -1;
	for (int i = 0; i < SIZE; i++) {
		int r = key_set_insert(set, SIZE, key_of((uint64_t)i));
		if (!r) {
			full_at = i;
			break;
		}
		cr_expect_eq(r, 2, "new key %d", i);
		cr_expect_eq(key_set_insert(set, SIZE, key_of((uint64_t)i)), 1, "present");
	}
	for (int i = 0; i < (full_at < 0 ? SIZE : full_at); i++)
		cr_expect(key_set_contains(set, SIZE, key_of((uint64_t)i)), "key %d", i);
	cr_expect_not(key_set_contains(set, SIZE, key_of(100000)));
	cr_expect(full_at < 0 || full_at > SIZE / 2, "gave up at %d of %d", full_at, SIZE);
}

Test(key_set, cache_never_fails_and_keeps_the_newest)
{
	enum { SIZE = 256 };
	static uint64_t set[SIZE];
	for (uint64_t i = 0; i < 10 * SIZE; i++) {
		key_cache_insert(set, SIZE, key_of(i));
		cr_assert(key_set_contains(set, SIZE, key_of(i)), "just inserted %lu", (unsigned long)i);
	}
}

Test(key_set, bounded_set_forgets_but_never_invents)
{
	enum { SIZE = 256, PROBES = 8 };
	static uint64_t set[SIZE];
	uint64_t kept = 0, refused = 0;
	for (uint64_t i = 0; i < 10 * SIZE; i++) {
		int r = key_set_insert_within(set, SIZE, key_of(i), PROBES);
		if (r == 2)
			kept++;
		else
			refused += r == 0;
		cr_assert(!r || key_set_contains_within(set, SIZE, key_of(i), PROBES), "kept: %lu", (unsigned long)i);
	}
	cr_expect_eq(kept, SIZE, "the set fills up");
	cr_expect_eq(refused, 10 * SIZE - SIZE, "then refuses, and overwrites nothing");
	for (uint64_t i = 20 * SIZE; i < 30 * SIZE; i++)
		cr_expect_not(key_set_contains_within(set, SIZE, key_of(i), PROBES), "never inserted: %lu",
			      (unsigned long)i);
}

/* ---- lock instances ------------------------------------------------------------- */

Test(lock_instances, grows_past_any_fixed_size_and_forgets_on_destroy)
{
	enum { N = 300000 };
	char *locks = malloc(N * 16);
	for (int i = 0; i < N; i++)
		cr_assert(lock_instance_set(locks + i * 16, (uint32_t)(i % 1000) + 1), "set %d", i);
	cr_expect_eq(lock_instances_live(), N);
	cr_expect_geq(lock_instances_capacity(), 2 * (size_t)N, "half full at most");
	uint32_t c, g1, g2;
	for (int i = 0; i < N; i += 997) {
		cr_assert(lock_instance_get(locks + i * 16, &c, &g1), "get %d", i);
		cr_expect_eq(c, (uint32_t)(i % 1000) + 1);
	}
	/* churn: destroy and re-make the first 250,000 several times */
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 250000; i++) {
			lock_instance_forget(locks + i * 16);
			cr_assert(lock_instance_set(locks + i * 16, 7));
		}
	cr_expect_eq(lock_instances_live(), N);
	cr_expect_leq(lock_instances_capacity(), 8 * (size_t)N, "tombstones are reclaimed, not piled up");
	/* a new instance at the same address is a new generation */
	lock_instance_get(locks, &c, &g1);
	lock_instance_set(locks, 7);
	lock_instance_get(locks, &c, &g2);
	cr_expect_neq(g1, g2);
	/* forgetting a range takes exactly the instances inside it */
	size_t gone = lock_instances_forget_range((uintptr_t)locks + 16 * 1000, (uintptr_t)locks + 16 * 2000);
	cr_expect_eq(gone, 1000);
	cr_expect_not(lock_instance_get(locks + 16 * 1500, &c, NULL));
	cr_expect(lock_instance_get(locks + 16 * 999, &c, NULL));
	cr_expect(lock_instance_get(locks + 16 * 2000, &c, NULL));
	cr_expect_eq(lock_instances_live(), N - 1000);
	free(locks);
}

Test(lock_instances, region_test_says_no_only_where_there_is_no_lock)
{
	static char area[1 << 16] __attribute__((aligned(4096)));
	cr_expect_not(lock_instances_maybe_in((uintptr_t)area, (uintptr_t)area + sizeof(area)));
	lock_instance_set(area + 4000, 3);
	cr_expect(lock_instances_region_marked(area));
	cr_expect(lock_instances_maybe_in((uintptr_t)area + 3990, (uintptr_t)area + 4010));
	cr_expect_not(lock_instances_maybe_in((uintptr_t)area + 4100, (uintptr_t)area + 8000),
		      "another granule of the same region");
	/* a block sharing the lock's granule but not the lock keeps it */
	cr_expect_eq(lock_instances_forget_range((uintptr_t)area + 4004, (uintptr_t)area + 4016), 0);
	uint32_t c;
	cr_expect(lock_instance_get(area + 4000, &c, NULL));
	cr_expect_eq(lock_instances_forget_range((uintptr_t)area + 4000, (uintptr_t)area + 4040), 1);
	cr_expect_not(lock_instances_maybe_in((uintptr_t)area + 3990, (uintptr_t)area + 4010));
}

Test(lock_instances, set_if_new_keeps_the_first_class)
{
	static char lock[40];
	cr_expect_eq(lock_instance_set_if_new(lock, 11), 11);
	cr_expect_eq(lock_instance_set_if_new(lock, 12), 11);
	lock_instance_forget(lock);
	cr_expect_eq(lock_instance_set_if_new(lock, 12), 12);
}

/* ---- stack depot ------------------------------------------------------------------- */

Test(stack_depot, stores_each_stack_once)
{
	uintptr_t a[5] = { 1, 2, 3, 4, 5 }, b[5] = { 1, 2, 3, 4, 6 };
	uint32_t ida = stack_depot_save(a, 5), idb = stack_depot_save(b, 5);
	cr_expect_neq(ida, 0u);
	cr_expect_neq(ida, idb);
	cr_expect_eq(stack_depot_save(a, 5), ida, "the same stack, the same id");
	const uintptr_t *frames;
	cr_expect_eq(stack_depot_fetch(idb, &frames), 5u);
	cr_expect_eq(frames[4], 6u);
	cr_expect_eq(stack_depot_save(a, 0), 0u, "an empty stack has no id");
	/* many distinct stacks */
	for (uintptr_t i = 0; i < 100000; i++) {
		uintptr_t s[3] = { i, i * 7, 42 };
		uint32_t id = stack_depot_save(s, 3);
		cr_assert_neq(id, 0u);
		cr_assert_eq(stack_depot_fetch(id, &frames), 3u);
		cr_assert_eq(frames[0], i);
	}
}

/* A stack id the depot never handed out is the tracer's own bug: the
 * self-check says so once, turns the checks off and answers no frames. */
Test(stack_depot, an_id_never_handed_out_fails_the_self_check_once)
{
	uintptr_t a[2] = { 1, 2 };
	uint32_t id = stack_depot_save(a, 2);
	const uintptr_t *frames;
	cr_assert_eq(stack_depot_fetch(id, &frames), 2u);
	cr_expect(tracer_checking());
	cr_expect_eq(writes, 0);

	cr_expect_eq(stack_depot_fetch(id + 8, &frames), 0u, "a misaligned id");
	cr_expect_null(frames);
	cr_expect_not(tracer_checking(), "the checks are off");
	cr_expect_eq(writes, 1);
	cr_expect(strstr(written, "lockdep-rcu: BUG: self-check failed: ") && strstr(written, "stack_depot.c:"),
		  "%s", written);

	cr_expect_eq(stack_depot_fetch(1u << 30, &frames), 0u, "an id beyond the records");
	cr_expect_eq(writes, 1, "printed once");
	cr_expect_eq(stack_depot_fetch(id, &frames), 2u, "good ids still answer");
}

/* ---- class rules -------------------------------------------------------------------- */

Test(class_rules, parses_split_and_merge_and_names_bad_lines)
{
	char err[256];
	const char *good = "# comment\n\nsplit:lruhash_create:4\nmerge:conn_*\nsplit:ns::make:2\n";
	cr_assert_eq(class_rules_parse(good, strlen(good), "rules", err, sizeof(err)), 3, "%s", err);
	cr_expect_eq(class_rules_depth("lruhash_create"), 4);
	cr_expect_eq(class_rules_depth("conn_new"), 0);
	cr_expect_eq(class_rules_depth("ns::make"), 2);
	cr_expect_eq(class_rules_depth("other"), -1);
	const char *bad[][2] = {
		{ "split:f\n", "rules:1: split needs a depth" },
		{ "merge:a\nsplit:f:x\n", "rules:2: bad depth in" },
		{ "split:f:9\n", "rules:1: depth above 8 in" },
		{ "join:f\n", "rules:1: unknown rule" },
		{ "merge\n", "rules:1: expected split:FUNCTION:DEPTH" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(class_rules_parse(bad[i][0], strlen(bad[i][0]), "rules", err, sizeof(err)), -1, "%s",
			     bad[i][0]);
		cr_expect(strstr(err, bad[i][1]), "'%s' in '%s'", bad[i][1], err);
		cr_expect_eq(class_rules_count(), 0, "no rule stays active after an error");
	}
}

/* ---- the same-class instance-pair cache ------------------------------------------ */

static const void *fake_lock(uintptr_t i)
{
	return (const void *)(0x7f0000000000ul + i * 64);
}

/* A pair taken with a stack id made of its two locks (first, second), so
 * the stack an inversion gives tells which record answered. */
static uint64_t fake_site(const void *first, const void *second)
{
	return (uint64_t)(((uintptr_t)first & 0xffffff) * 2 + ((uintptr_t)second & 0xffff)) << 4;
}

static uint64_t last_other_site;

/* What the wrappers do: 1 for an inversion. */
static int record(const void *held, uint32_t gen_held, const void *lock, uint32_t gen_lock)
{
	struct instance_pair_probe probe;
	last_other_site = 0;
	enum instance_pair_seen seen = instance_pairs_probe(held, gen_held, lock, gen_lock, &probe, &last_other_site);
	if (seen != PAIR_SEEN)
		instance_pairs_insert(&probe, seen, fake_site(held, lock));
	return seen == PAIR_INVERTED;
}

Test(instance_pairs, an_order_then_its_inverse_is_an_inversion_once_per_direction)
{
	instance_pairs_clear();
	const void *a = fake_lock(1), *b = fake_lock(2);
	cr_expect_eq(record(a, 1, b, 1), 0, "first order: nothing to invert");
	cr_expect_eq(record(a, 1, b, 1), 0, "same order again");
	cr_expect_eq(record(b, 1, a, 1), 1, "the other order: an inversion");
	cr_expect_eq(last_other_site, fake_site(a, b), "where the other order took its second lock");
	cr_expect_eq(record(b, 1, a, 1), 0, "recorded: not again");
	cr_expect_eq(record(a, 1, b, 1), 0, "both orders kept");
}

/* A slot's where is folded with its key: read back with another key (a
 * slot torn between two writers) it is nothing, never another place. */
Test(instance_pairs, a_where_read_with_another_key_is_nothing)
{
	uint64_t key = instance_pair_order_key(fake_lock(1), 1, fake_lock(2), 1);
	uint64_t other = instance_pair_order_key(fake_lock(3), 1, fake_lock(4), 1);
	uint64_t ip = 0x7f1234567890ull | PAIR_WHERE_IP, stack = 0x1230;
	cr_expect_eq(instance_pair_where(key, ip ^ key), ip, "a caller's address");
	cr_expect_eq(instance_pair_where(key, stack ^ key), stack, "a stack");
	cr_expect_eq(instance_pair_where(other, ip ^ key), 0);
	cr_expect_eq(instance_pair_where(other, stack ^ key), 0);
}

Test(instance_pairs, new_generations_at_old_addresses_are_new_instances)
{
	instance_pairs_clear();
	const void *a = fake_lock(1), *b = fake_lock(2);
	cr_expect_eq(record(a, 1, b, 1), 0);
	/* both freed and their memory reused for new locks */
	cr_expect_eq(record(b, 2, a, 2), 0, "not the old pair's inverse");
	cr_expect_eq(record(b, 1, a, 2), 0, "one instance new: another pair");
}

/* Far more pairs than slots: the cache keeps recording (the newest pair is
 * always found) and never invents an inversion of pairs taken one way. */
Test(instance_pairs, churn_keeps_the_newest_and_never_invents)
{
	instance_pairs_clear();
	enum { LOCKS = 3000 };
	unsigned long recorded = 0;
	for (uintptr_t i = 0; i < LOCKS; i++)
		for (uintptr_t j = i + 1; j < LOCKS; j += 3) {
			cr_assert_eq(record(fake_lock(i), 1, fake_lock(j), 1), 0,
				     "pair %lu,%lu taken one way only", (unsigned long)i, (unsigned long)j);
			recorded++;
		}
	cr_assert_gt(recorded, (unsigned long)INSTANCE_PAIR_BUCKETS * INSTANCE_PAIR_SLOTS_PER_BUCKET,
		     "the test overfills the cache");
	/* the latest pairs are there: their inverses are inversions */
	cr_expect_eq(record(fake_lock(LOCKS - 1), 1, fake_lock(LOCKS - 2), 1), 1,
		     "the last pair recorded is kept");
	cr_expect_eq(last_other_site, fake_site(fake_lock(LOCKS - 2), fake_lock(LOCKS - 1)), "with its site");
	const void *p = fake_lock(LOCKS + 1), *q = fake_lock(LOCKS + 2);
	cr_expect_eq(record(p, 1, q, 1), 0);
	cr_expect_eq(record(q, 1, p, 1), 1, "a new inversion after the churn is found");
}

/* ---- the program's shared memory ranges ------------------------------------------ */

#include "classes/shared_mappings.h"

/* Each test runs in a process of its own (Criterion's default): a fresh
 * table each. */
Test(shared_mappings, ranges_are_found_until_unmapped)
{
	uintptr_t base = 0x7e0000000000ul;
	shared_mappings_add(base, base + 0x4000);
	shared_mappings_add(base + 0x10000, base + 0x11000);
	cr_expect(shared_mappings_overlap(base + 0x18, base + 0x40), "inside the first");
	cr_expect(shared_mappings_overlap(base + 0x3ff0, base + 0x4010), "straddling its end");
	cr_expect_not(shared_mappings_overlap(base + 0x4000, base + 0x4028), "just past it");
	cr_expect(shared_mappings_overlap(base + 0x10000, base + 0x10028), "the second");
	/* a part unmapped: the range stays (only conservative) */
	shared_mappings_remove(base, base + 0x1000);
	cr_expect(shared_mappings_overlap(base + 0x2000, base + 0x2028));
	shared_mappings_remove(base, base + 0x4000);
	cr_expect_not(shared_mappings_overlap(base + 0x2000, base + 0x2028), "unmapped whole: gone");
	shared_mappings_remove_at(base + 0x10000);   /* shmdt */
	cr_expect_not(shared_mappings_overlap(base + 0x10000, base + 0x10028));
}

Test(shared_mappings, a_full_table_makes_everything_shared)
{
	uintptr_t base = 0x7d0000000000ul;
	for (unsigned i = 0; i <= MAX_SHARED_MAPPINGS; i++)
		shared_mappings_add(base + i * 0x2000ul, base + i * 0x2000ul + 0x1000);
	cr_expect(shared_mappings_overlap(0x1000, 0x1028), "no room: nothing may be written anywhere");
}

/* ---- orphaned_locks: locks left by a thread that ended holding them ------- */

Test(orphaned_locks, taken_once_by_its_own_generation_only)
{
	static int a, b;
	cr_assert(orphaned_lock_add(&a, 3));
	cr_expect_not(orphaned_lock_take(&b, 3), "another lock");
	cr_expect(orphaned_lock_take(&a, 3));
	cr_expect_not(orphaned_lock_take(&a, 3), "taken already");
	/* an older instance at the address is stale: not this one's, and gone */
	cr_assert(orphaned_lock_add(&a, 3));
	cr_expect_not(orphaned_lock_take(&a, 4));
	cr_expect_not(orphaned_lock_take(&a, 3));
}

Test(orphaned_locks, a_full_table_refuses_and_forgetting_makes_room)
{
	static int locks[MAX_ORPHANED_LOCKS + 1];
	for (int i = 0; i < MAX_ORPHANED_LOCKS; i++)
		cr_assert(orphaned_lock_add(&locks[i], 1), "slot %d", i);
	cr_expect_not(orphaned_lock_add(&locks[MAX_ORPHANED_LOCKS], 1), "full");
	orphaned_lock_forget(&locks[7]);
	cr_expect_not(orphaned_lock_take(&locks[7], 1), "forgotten");
	cr_expect(orphaned_lock_add(&locks[MAX_ORPHANED_LOCKS], 1), "room again");
	for (int i = 0; i <= MAX_ORPHANED_LOCKS; i++)
		orphaned_lock_forget(&locks[i]);
	cr_expect(orphaned_lock_add(&locks[0], 1), "empty again");
	orphaned_lock_forget(&locks[0]);
}
