/* Pseudo-random sequences of nested mutex acquisitions, the same on every
 * run of a scenario: for the differential test that runs them with the
 * tracer's fast paths (the acquisition cache, a mutex taken on one other)
 * and with fast_paths=0 (every acquisition the general way), which must
 * report the same bugs. Three classes of one lock each (A, B, C) and one
 * class of four instances (pool, made at one init site): nestings of two
 * (the one-held path) and of three (the general path), inversions of
 * classes and of instances among orders taken many times.
 *
 * Each lock is taken from a line of its own (lock_at()), so that the
 * once-per-site reports name which lock closed which inversion. */
#include "target.h"

enum { POOL = 4, LOCKS = 3 + POOL };

static pthread_mutex_t A = PTHREAD_MUTEX_INITIALIZER, B = PTHREAD_MUTEX_INITIALIZER,
		       C = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pool[POOL];

static void pool_init(void)
{
	for (int i = 0; i < POOL; i++)
		pthread_mutex_init(&pool[i], NULL);
}

static __attribute__((noinline)) void lock_at(int i)
{
	switch (i) {
	case 0: pthread_mutex_lock(&A); break;
	case 1: pthread_mutex_lock(&B); break;
	case 2: pthread_mutex_lock(&C); break;
	case 3: pthread_mutex_lock(&pool[0]); break;
	case 4: pthread_mutex_lock(&pool[1]); break;
	case 5: pthread_mutex_lock(&pool[2]); break;
	default: pthread_mutex_lock(&pool[3]); break;
	}
	__asm__ volatile("" ::: "memory");   /* not a tail call */
}

static void unlock_at(int i)
{
	pthread_mutex_unlock(i < 3 ? (i == 0 ? &A : i == 1 ? &B : &C) : &pool[i - 3]);
}

static unsigned long long rng_state;

static unsigned next_random(unsigned bound)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % bound);
}

/* `steps` nestings of two or three distinct locks. `ordered`: the locks
 * of each nesting in index order, a consistent order with nothing to
 * report (the correct twin); else in the order drawn, and every tenth
 * nesting repeats the previous one, so that most orders are seen again
 * (and answered by the cache when it may). */
static void run_sequence(unsigned long long seed, int steps, int ordered)
{
	rng_state = seed;
	int last[3] = { 0, 1, -1 }, n = 2;
	for (int s = 0; s < steps; s++) {
		int locks[3];
		if (s % 10 == 9 && !ordered) {
			for (int i = 0; i < 3; i++)
				locks[i] = last[i];
		} else {
			n = 2 + (next_random(4) == 0);
			for (int i = 0; i < n; i++) {
				int pick;
				int taken;
				do {
					pick = (int)next_random(LOCKS);
					taken = 0;
					for (int k = 0; k < i; k++)
						taken |= locks[k] == pick;
				} while (taken);
				locks[i] = pick;
			}
			if (ordered)
				for (int i = 0; i < n; i++)
					for (int k = i + 1; k < n; k++)
						if (locks[k] < locks[i]) {
							int t = locks[i];
							locks[i] = locks[k];
							locks[k] = t;
						}
			for (int i = 0; i < 3; i++)
				last[i] = i < n ? locks[i] : -1;
		}
		for (int i = 0; i < n; i++)
			lock_at(locks[i]);
		for (int i = n - 1; i >= 0; i--)
			unlock_at(locks[i]);
	}
	printf("done\n");
}

static void nest2(int outer, int inner)
{
	lock_at(outer);
	lock_at(inner);
	unlock_at(inner);
	unlock_at(outer);
}

/* An order cached before its class pair is watched instance by instance,
 * taken again after, then its inverse. pool[2] -> C twice (the second from
 * the acquisition cache); pool[0] -> C -> pool[1]: pool nested in itself
 * through C, which starts the watching of (pool, C) by instances;
 * pool[2] -> C again, which must now be recorded as an order of two
 * instances, not answered by the cache entry from before; C -> pool[2],
 * its inverse: reported as these two instances taken both ways. */
SCENARIO cached_then_watched(void)
{
	pool_init();
	nest2(5, 2);
	nest2(5, 2);
	lock_at(3);
	lock_at(2);
	lock_at(4);
	unlock_at(4);
	unlock_at(2);
	unlock_at(3);
	nest2(5, 2);
	nest2(2, 5);
	printf("done\n");
}

SCENARIO seed_1(void) { pool_init(); run_sequence(0x9E3779B97F4A7C15ull, 400, 0); }
SCENARIO seed_2(void) { pool_init(); run_sequence(0xD1B54A32D192ED03ull, 400, 0); }
SCENARIO seed_3(void) { pool_init(); run_sequence(0x8CB92BA72F3D8DD7ull, 400, 0); }
SCENARIO ordered(void) { pool_init(); run_sequence(0x9E3779B97F4A7C15ull, 400, 1); }

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "seed-1", seed_1 },
		{ "seed-2", seed_2 },
		{ "seed-3", seed_3 },
		{ "ordered", ordered },
		{ "cached-then-watched", cached_then_watched },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
