/* Lock-order scenarios for the validator: each inversion beside its
 * correct twin. Scenarios run their orders one after the other (no real
 * deadlock), except "real-deadlock", which hangs on purpose. */
#include "target.h"
#include <unistd.h>

static pthread_mutex_t A = PTHREAD_MUTEX_INITIALIZER, B = PTHREAD_MUTEX_INITIALIZER,
		       C = PTHREAD_MUTEX_INITIALIZER, D = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t X = PTHREAD_RWLOCK_INITIALIZER, Y = PTHREAD_RWLOCK_INITIALIZER;

#define L(m) pthread_mutex_lock(&m)
#define U(m) pthread_mutex_unlock(&m)

/* Takes the locks in order and releases them in reverse. */
static void nest(pthread_mutex_t **locks, int n)
{
	for (int i = 0; i < n; i++)
		pthread_mutex_lock(locks[i]);
	for (int i = n - 1; i >= 0; i--)
		pthread_mutex_unlock(locks[i]);
}
#define NEST(...) do { pthread_mutex_t *l_[] = { __VA_ARGS__ }; nest(l_, sizeof(l_) / sizeof(l_[0])); } while (0)

SCENARIO abba(void) { NEST(&A, &B); NEST(&B, &A); }
/* The first order taken many times before the other (a loop, then an error
 * path): the thread's cache of validated acquisitions knows A -> B, and
 * must not answer for B -> A. The twin only repeats A -> B. */
static void ab_many_then(int ba)
{
	for (int i = 0; i < 100; i++)
		NEST(&A, &B);
	if (ba)
		NEST(&B, &A);
	printf("done\n");
}
SCENARIO abba_after_many_ab(void) { ab_many_then(1); }
SCENARIO ab_many(void) { ab_many_then(0); }
static void *ab_thread(void *arg) { (void)arg; NEST(&A, &B); return NULL; }
SCENARIO abba_two_threads(void) { in_thread(ab_thread); NEST(&B, &A); }
SCENARIO abbcca(void) { NEST(&A, &B); NEST(&B, &C); NEST(&C, &A); }
SCENARIO abcabc(void) { NEST(&A, &B, &C); NEST(&A, &B, &C); NEST(&B, &C); NEST(&A, &C); }
SCENARIO abbccdda(void) { NEST(&A, &B); NEST(&B, &C); NEST(&C, &D); NEST(&D, &A); }
SCENARIO abcdbcda(void) { NEST(&A, &B, &C, &D); NEST(&B, &C, &D, &A); }
SCENARIO abcdbdda(void) { NEST(&A, &B, &C, &D); NEST(&B, &D); NEST(&D, &A); }
/* A taken behind B and C, where A->B and A->C were seen elsewhere: two
 * independent deadlocks in one acquisition, two reports. */
static void *ac_thread(void *arg) { (void)arg; NEST(&A, &C); return NULL; }
SCENARIO two_independent_cycles(void) { in_thread(ab_thread); in_thread(ac_thread); NEST(&B, &C, &A); }
/* A taken behind B and C after A->B->C: A->B->A is the bug; the longer
 * A->B->C->A only goes through it, one report. */
SCENARIO overlapping_cycles(void) { NEST(&A, &B); NEST(&B, &C); NEST(&B, &C, &A); }

/* Write then read inversion: a read waits for a writer. */
SCENARIO rw_write_read_inversion(void)
{
	pthread_rwlock_wrlock(&X); pthread_rwlock_rdlock(&Y); pthread_rwlock_unlock(&Y); pthread_rwlock_unlock(&X);
	pthread_rwlock_wrlock(&Y); pthread_rwlock_rdlock(&X); pthread_rwlock_unlock(&X); pthread_rwlock_unlock(&Y);
}

/* Recursive reads in both orders never wait for each other. */
SCENARIO rw_recursive_reads(void)
{
	pthread_rwlock_rdlock(&X); pthread_rwlock_rdlock(&Y); pthread_rwlock_unlock(&Y); pthread_rwlock_unlock(&X);
	pthread_rwlock_rdlock(&Y); pthread_rwlock_rdlock(&X); pthread_rwlock_unlock(&X); pthread_rwlock_unlock(&Y);
}

/* WW on two rwlocks: an ordinary ABBA. */
SCENARIO rw_write_write(void)
{
	pthread_rwlock_wrlock(&X); pthread_rwlock_wrlock(&Y); pthread_rwlock_unlock(&Y); pthread_rwlock_unlock(&X);
	pthread_rwlock_wrlock(&Y); pthread_rwlock_wrlock(&X); pthread_rwlock_unlock(&X); pthread_rwlock_unlock(&Y);
}

/* A trylock never blocks: B then trylock(A) is no inversion of A then B. */
SCENARIO trylock_reversal(void)
{
	NEST(&A, &B);
	L(B);
	if (pthread_mutex_trylock(&A) == 0)
		U(A);
	U(B);
}

/* Condition wait re-takes its mutex behind the locks still held. */
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
SCENARIO condvar_inversion(void)
{
	NEST(&B, &A);             /* B then A */
	L(A);
	L(B);
	struct timespec t = { 0, 0 };
	pthread_cond_timedwait(&cond, &A, &t);   /* A is taken again behind B */
	U(B);
	U(A);
}

/* Address-ordered locking of many same-class locks, allocated and freed. */
struct account {
	pthread_mutex_t lock;
	long balance;
};

static void transfer(struct account *x, struct account *y)
{
	struct account *first = x < y ? x : y, *second = x < y ? y : x;
	pthread_mutex_lock(&first->lock);
	pthread_mutex_lock(&second->lock);
	x->balance--;
	y->balance++;
	pthread_mutex_unlock(&second->lock);
	pthread_mutex_unlock(&first->lock);
}

static struct account *account_new(void)
{
	struct account *a = calloc(1, sizeof(*a));
	pthread_mutex_init(&a->lock, NULL);
	return a;
}

SCENARIO address_ordered_same_class(void)
{
	enum { N = 64 };
	for (int round = 0; round < 50; round++) {
		struct account *acc[N];
		for (int i = 0; i < N; i++)
			acc[i] = account_new();
		for (int i = 0; i < 4 * N; i++) {
			int from = rand() % N, to = (i * 7 + 3) % N;
			if (from != to)
				transfer(acc[from], acc[to]);
		}
		for (int i = 0; i < N; i++) {
			pthread_mutex_destroy(&acc[i]->lock);
			free(acc[i]);
		}
	}
	printf("done\n");
}

/* A program's own lock function (tor_mutex_acquire(), say): the caller of
 * pthread_mutex_lock() is always this one. */
static __attribute__((noinline)) void account_lock(struct account *a)
{
	pthread_mutex_lock(&a->lock);
	__asm__ volatile("" ::: "memory");   /* not a tail call */
}

/* The first order, in a function of its own, through the program's lock
 * function: the report names this one. */
static __attribute__((noinline)) void lock_x_then_y(struct account *x, struct account *y)
{
	account_lock(x); account_lock(y);
	pthread_mutex_unlock(&y->lock); pthread_mutex_unlock(&x->lock);
}

/* The same two instances in both orders. */
SCENARIO same_class_inversion(void)
{
	struct account *x = account_new(), *y = account_new();
	lock_x_then_y(x, y);
	pthread_mutex_lock(&y->lock); pthread_mutex_lock(&x->lock);
	pthread_mutex_unlock(&x->lock); pthread_mutex_unlock(&y->lock);
}

/* Two instances of one class taken in both orders, each time under one
 * global lock taken first (QEMU's AioContext locks, each order by a thread
 * holding the Big QEMU Lock): the outer lock keeps the two orders from
 * ever overlapping, so no deadlock. The twin: the second order without the
 * global lock, a real inversion. */
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static struct account *gated_x, *gated_y;
static int gated_second_without_gate;

static void *gated_other_order(void *arg)
{
	(void)arg;
	if (!gated_second_without_gate)
		pthread_mutex_lock(&big_lock);
	pthread_mutex_lock(&gated_y->lock);
	pthread_mutex_lock(&gated_x->lock);
	pthread_mutex_unlock(&gated_x->lock);
	pthread_mutex_unlock(&gated_y->lock);
	if (!gated_second_without_gate)
		pthread_mutex_unlock(&big_lock);
	return NULL;
}

static void gated_inversion(int without_gate)
{
	gated_x = account_new();
	gated_y = account_new();
	gated_second_without_gate = without_gate;
	pthread_mutex_lock(&big_lock);
	lock_x_then_y(gated_x, gated_y);
	pthread_mutex_unlock(&big_lock);
	pthread_t t;
	pthread_create(&t, NULL, gated_other_order, NULL);
	pthread_join(t, NULL);
}

/* The same with two locks of two classes (QEMU: the main loop's and an
 * iothread's AioContext, made for two callers, under the Big QEMU Lock):
 * a class cycle whose every edge was only taken under one gate. */
static pthread_mutex_t main_context_lock = PTHREAD_MUTEX_INITIALIZER, io_context_lock = PTHREAD_MUTEX_INITIALIZER;

static void *classes_other_order(void *arg)
{
	(void)arg;
	if (!gated_second_without_gate)
		pthread_mutex_lock(&big_lock);
	pthread_mutex_lock(&io_context_lock);
	pthread_mutex_lock(&main_context_lock);
	pthread_mutex_unlock(&main_context_lock);
	pthread_mutex_unlock(&io_context_lock);
	if (!gated_second_without_gate)
		pthread_mutex_unlock(&big_lock);
	return NULL;
}

static void gated_class_cycle(int without_gate)
{
	gated_second_without_gate = without_gate;
	pthread_mutex_lock(&big_lock);
	pthread_mutex_lock(&main_context_lock);
	pthread_mutex_lock(&io_context_lock);
	pthread_mutex_unlock(&io_context_lock);
	pthread_mutex_unlock(&main_context_lock);
	pthread_mutex_unlock(&big_lock);
	pthread_t t;
	pthread_create(&t, NULL, classes_other_order, NULL);
	pthread_join(t, NULL);
}

SCENARIO class_orders_under_one_gate(void) { gated_class_cycle(0); }
SCENARIO class_orders_one_without_the_gate(void) { gated_class_cycle(1); }

SCENARIO same_class_orders_under_one_gate(void) { gated_inversion(0); }
SCENARIO same_class_orders_one_without_the_gate(void) { gated_inversion(1); }

/* OpenSSL 3's provider stores: every library context's store lock is made
 * at one site (one class); a parent context's store is held while a child
 * context registers: the child's gbl lock (another class), then the child's
 * store. Always parent -> child: an instance hierarchy of one class with
 * another class between, no deadlock possible. */
struct context {
	pthread_rwlock_t store, gbl;
};

static struct context *context_new(void)
{
	struct context *c = calloc(1, sizeof(*c));
	pthread_rwlock_init(&c->store, NULL);   /* one site for every context */
	pthread_rwlock_init(&c->gbl, NULL);
	return c;
}

static void child_register(struct context *child)
{
	pthread_rwlock_wrlock(&child->gbl);
	pthread_rwlock_wrlock(&child->store);
	pthread_rwlock_unlock(&child->store);
	pthread_rwlock_unlock(&child->gbl);
}

SCENARIO nested_contexts(void)
{
	struct context *parent = context_new(), *child = context_new(), *other = context_new();
	for (int i = 0; i < 3; i++) {
		pthread_rwlock_wrlock(&parent->store);
		child_register(child);
		pthread_rwlock_unlock(&parent->store);
		pthread_rwlock_wrlock(&other->store);   /* a store alone, then another's gbl */
		pthread_rwlock_wrlock(&parent->gbl);
		pthread_rwlock_unlock(&parent->gbl);
		pthread_rwlock_unlock(&other->store);
	}
	printf("registered\n");
}

/* The same hierarchy, then a real inversion of the child's own two locks:
 * its store held while its gbl is taken, after gbl -> store above (the
 * class order store -> gbl was the parent's first). */
SCENARIO nested_contexts_then_inversion(void)
{
	struct context *parent = context_new(), *child = context_new();
	pthread_rwlock_wrlock(&parent->store);
	child_register(child);
	pthread_rwlock_unlock(&parent->store);
	pthread_rwlock_wrlock(&child->store);
	pthread_rwlock_wrlock(&child->gbl);
	pthread_rwlock_unlock(&child->gbl);
	pthread_rwlock_unlock(&child->store);
	printf("registered\n");
}

/* GStreamer's streaming thread along a pipeline (src ! enc ! dec ! sink):
 * every pad's stream lock is made by one constructor (one class), the
 * encoder's and the decoder's stream locks are two other classes, and each
 * buffer takes them upstream to downstream: enc pad, enc, dec pad, dec,
 * sink pad. The pad class is nested in itself through another class twice
 * per buffer; the order never changes. Many buffers: the nesting must be
 * decided the same way every time (from the third on, a cached chain gave
 * the sink pad the decoder pad's subclass: a false cycle). */
struct pipeline_pad {
	pthread_mutex_t stream_lock;
};

__attribute__((noinline)) static struct pipeline_pad *pipeline_pad_new(void)
{
	struct pipeline_pad *p = calloc(1, sizeof(*p));
	pthread_mutex_init(&p->stream_lock, NULL);
	return p;
}

static pthread_mutex_t encoder_stream_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t decoder_stream_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void push_buffer(struct pipeline_pad **pads)
{
	pthread_mutex_lock(&pads[0]->stream_lock);
	pthread_mutex_lock(&encoder_stream_lock);
	pthread_mutex_lock(&pads[1]->stream_lock);
	pthread_mutex_lock(&decoder_stream_lock);
	pthread_mutex_lock(&pads[2]->stream_lock);
	pthread_mutex_unlock(&pads[2]->stream_lock);
	pthread_mutex_unlock(&decoder_stream_lock);
	pthread_mutex_unlock(&pads[1]->stream_lock);
	pthread_mutex_unlock(&encoder_stream_lock);
	pthread_mutex_unlock(&pads[0]->stream_lock);
}

SCENARIO pipeline_buffers(void)
{
	struct pipeline_pad *pads[3] = { pipeline_pad_new(), pipeline_pad_new(), pipeline_pad_new() };
	for (int i = 0; i < 10; i++)
		push_buffer(pads);
	printf("10 buffers\n");
}

/* The same, then the decoder's stream lock taken under the sink pad (a
 * real inversion of two instances: dec -> sink pad above). */
SCENARIO pipeline_buffers_then_inversion(void)
{
	struct pipeline_pad *pads[3] = { pipeline_pad_new(), pipeline_pad_new(), pipeline_pad_new() };
	for (int i = 0; i < 10; i++)
		push_buffer(pads);
	pthread_mutex_lock(&pads[2]->stream_lock);
	pthread_mutex_lock(&decoder_stream_lock);
	pthread_mutex_unlock(&decoder_stream_lock);
	pthread_mutex_unlock(&pads[2]->stream_lock);
	printf("10 buffers\n");
}

/* The same pads along a pipeline with a muxer (src ! queue ! enc ! mux !
 * sink): buffers go through the encoder's stream lock, events pass it by,
 * so the muxer's pad is nested through another class on one path and
 * directly on the other, and so is the sink pad after the muxer's collect
 * lock. Every path takes the instances upstream to downstream (GStreamer,
 * jpegenc ! avimux ! filesink: a false cycle pad/1 -> collect -> pad/1
 * from the subclass each path gave). The twin: the collect lock held while
 * the muxer's pad is taken, the inverse of both paths' order. */
static pthread_mutex_t muxer_collect_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void push_through_muxer(struct pipeline_pad **pads, int through_encoder)
{
	pthread_mutex_lock(&pads[0]->stream_lock);
	pthread_mutex_lock(&pads[1]->stream_lock);
	if (through_encoder)
		pthread_mutex_lock(&encoder_stream_lock);
	pthread_mutex_lock(&pads[2]->stream_lock);
	pthread_mutex_lock(&muxer_collect_lock);
	pthread_mutex_lock(&pads[3]->stream_lock);
	pthread_mutex_unlock(&pads[3]->stream_lock);
	pthread_mutex_unlock(&muxer_collect_lock);
	pthread_mutex_unlock(&pads[2]->stream_lock);
	if (through_encoder)
		pthread_mutex_unlock(&encoder_stream_lock);
	pthread_mutex_unlock(&pads[1]->stream_lock);
	pthread_mutex_unlock(&pads[0]->stream_lock);
}

static void muxer_pipeline(int inverted)
{
	struct pipeline_pad *pads[4];
	for (int i = 0; i < 4; i++)
		pads[i] = pipeline_pad_new();
	for (int i = 0; i < 5; i++) {
		push_through_muxer(pads, 1);   /* a buffer */
		push_through_muxer(pads, 0);   /* an event */
	}
	if (inverted) {
		pthread_mutex_lock(&muxer_collect_lock);
		pthread_mutex_lock(&pads[2]->stream_lock);
		pthread_mutex_unlock(&pads[2]->stream_lock);
		pthread_mutex_unlock(&muxer_collect_lock);
	}
	printf("buffers and events\n");
}

SCENARIO muxer_buffers_and_events(void) { muxer_pipeline(0); }
SCENARIO muxer_collect_then_pad(void) { muxer_pipeline(1); }

/* synchronize_rcu() under a mutex that readers take inside their read side. */
static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static void *rcu_reader_takes_lock(void *arg)
{
	(void)arg;
	rcu_register_thread();
#ifdef TARGET_QSBR
	L(config_lock);     /* an online QSBR thread is a reader all the time */
	U(config_lock);
#else
	rcu_read_lock();
	L(config_lock);
	U(config_lock);
	rcu_read_unlock();
#endif
	rcu_unregister_thread();
	return NULL;
}

SCENARIO rcu_grace_period_deadlock(void)
{
	in_thread(rcu_reader_takes_lock);
	L(config_lock);
	synchronize_rcu();
	U(config_lock);
	printf("done\n");
}

/* Correct twin: wait for readers after dropping the lock. */
SCENARIO rcu_grace_period_ok(void)
{
	in_thread(rcu_reader_takes_lock);
	L(config_lock);
	U(config_lock);
	synchronize_rcu();
	printf("done\n");
}

/* Two threads that really deadlock: the report must precede the hang. */
static void *ba_slow(void *arg)
{
	(void)arg;
	L(B);
	usleep(200000);
	L(A);
	U(A);
	U(B);
	return NULL;
}

SCENARIO real_deadlock(void)
{
	NEST(&A, &B);   /* teach the order A -> B */
	pthread_t t;
	pthread_create(&t, NULL, ba_slow, NULL);
	L(A);
	usleep(100000);
	L(B);          /* the other thread holds B and waits for A */
	U(B);
	U(A);
	pthread_join(t, NULL);
	printf("not reached\n");
}

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "abba", abba },
		{ "abba-after-many-ab", abba_after_many_ab },
		{ "ab-many", ab_many },
		{ "abba-two-threads", abba_two_threads },
		{ "abbcca", abbcca },
		{ "abcabc", abcabc },
		{ "abbccdda", abbccdda },
		{ "abcdbcda", abcdbcda },
		{ "two-independent-cycles", two_independent_cycles },
		{ "overlapping-cycles", overlapping_cycles },
		{ "abcdbdda", abcdbdda },
		{ "rw-write-read-inversion", rw_write_read_inversion },
		{ "rw-recursive-reads", rw_recursive_reads },
		{ "rw-write-write", rw_write_write },
		{ "trylock-reversal", trylock_reversal },
		{ "condvar-inversion", condvar_inversion },
		{ "address-ordered-same-class", address_ordered_same_class },
		{ "same-class-inversion", same_class_inversion },
		{ "same-class-orders-under-one-gate", same_class_orders_under_one_gate },
		{ "same-class-orders-one-without-the-gate", same_class_orders_one_without_the_gate },
		{ "class-orders-under-one-gate", class_orders_under_one_gate },
		{ "class-orders-one-without-the-gate", class_orders_one_without_the_gate },
		{ "nested-contexts", nested_contexts },
		{ "nested-contexts-then-inversion", nested_contexts_then_inversion },
		{ "pipeline-buffers", pipeline_buffers },
		{ "pipeline-buffers-then-inversion", pipeline_buffers_then_inversion },
		{ "muxer-buffers-and-events", muxer_buffers_and_events },
		{ "muxer-collect-then-pad", muxer_collect_then_pad },
		{ "rcu-grace-period-deadlock", rcu_grace_period_deadlock },
		{ "rcu-grace-period-ok", rcu_grace_period_ok },
		{ "real-deadlock", real_deadlock },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
