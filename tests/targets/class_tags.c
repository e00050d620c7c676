/* Mutexes that carry their class (the tracer's class cache in the bytes of
 * pthread_mutex_t that only robust mutexes use): a mutex moved to another
 * address, or given another class by an annotation, after its class was
 * cached in it, is judged by what it is now; and the mutexes glibc links
 * into lists (robust, process-shared) are never written. Every scenario
 * nests two mutexes at a time, one held: the path that reads the cache. */
#include "target.h"
#include <fcntl.h>
#include <lockdep-rcu.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

struct table {
	pthread_mutex_t lock;
	long rows;
};

struct bucket {
	pthread_mutex_t lock;
	long items;
};

__attribute__((noinline)) static struct table *table_new(void)
{
	struct table *t = calloc(1, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	return t;
}

__attribute__((noinline)) static struct bucket *buckets_new(size_t n)
{
	struct bucket *b = calloc(n, sizeof(*b));
	for (size_t i = 0; i < n; i++)
		pthread_mutex_init(&b[i].lock, NULL);
	return b;
}

static void nest(pthread_mutex_t *outer, pthread_mutex_t *inner)
{
	pthread_mutex_lock(outer);
	pthread_mutex_lock(inner);
	pthread_mutex_unlock(inner);
	pthread_mutex_unlock(outer);
}

/* table -> bucket, many times (the classes are cached in both); then the
 * bucket array grows by copying (a program's own realloc: the old array is
 * freed, its mutexes move unlocked), and a moved bucket is taken before
 * the table. The moved mutex is a new instance, classed by its first use,
 * not the bucket class its copied bytes remember: no cycle. The bug: the
 * table taken under an old bucket. */
static void grow_then_take_table_under(int moved)
{
	struct table *t = table_new();
	struct bucket *b = buckets_new(4);
	for (int i = 0; i < 1000; i++)
		nest(&t->lock, &b[i % 4].lock);
	struct bucket *grown = malloc(8 * sizeof(*grown));
	memcpy(grown, b, 4 * sizeof(*b));
	free(b);
	for (int i = 4; i < 8; i++)
		pthread_mutex_init(&grown[i].lock, NULL);
	if (moved) {
		nest(&grown[0].lock, &t->lock);
	} else {
		struct bucket *old = buckets_new(1);
		nest(&t->lock, &old->lock);
		nest(&old->lock, &t->lock);
	}
	printf("done\n");
}

SCENARIO ok_moved_mutex(void) { grow_then_take_table_under(1); }
SCENARIO bug_bucket_then_table(void) { grow_then_take_table_under(0); }

/* table -> bucket many times, then the bucket is named a class of its own
 * (lockdep_set_class_and_name) and taken before the table: an order of
 * the new class, no cycle with the old one. The bug: the renamed bucket
 * also taken after the table. */
static const char journal_key;

static void rename_then_take_table_under(int inverted)
{
	struct table *t = table_new();
	struct bucket *b = buckets_new(1);
	for (int i = 0; i < 1000; i++)
		nest(&t->lock, &b->lock);
	lockdep_set_class_and_name(&b->lock, &journal_key, "journal_lock");
	nest(&b->lock, &t->lock);
	if (inverted)
		nest(&t->lock, &b->lock);
	printf("done\n");
}

SCENARIO ok_renamed_mutex(void) { rename_then_take_table_under(0); }
SCENARIO bug_renamed_mutex_inverted(void) { rename_then_take_table_under(1); }

/* Which mutexes had their robust-list bytes written, after each was taken
 * under another of its kind 1,000 times. */
static int list_bytes_written(const pthread_mutex_t *m)
{
	static const char zero[sizeof(m->__data.__list)];
	return memcmp(&m->__data.__list, zero, sizeof(zero)) != 0;
}

SCENARIO list_bytes(void)
{
	struct table *t = table_new();
	struct bucket *b = buckets_new(1);
	pthread_mutexattr_t shared_attr, robust_attr;
	pthread_mutexattr_init(&shared_attr);
	pthread_mutexattr_setpshared(&shared_attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_init(&robust_attr);
	pthread_mutexattr_setrobust(&robust_attr, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_t *shared = calloc(2, sizeof(*shared)), *robust = calloc(2, sizeof(*robust));
	for (int i = 0; i < 2; i++) {
		pthread_mutex_init(&shared[i], &shared_attr);
		pthread_mutex_init(&robust[i], &robust_attr);
	}
	for (int i = 0; i < 1000; i++) {
		nest(&t->lock, &b->lock);
		nest(&shared[0], &shared[1]);
		nest(&robust[0], &robust[1]);
	}
	printf("default: %s\n", list_bytes_written(&t->lock) && list_bytes_written(&b->lock) ? "written" : "zero");
	printf("process-shared: %s\n", list_bytes_written(&shared[0]) || list_bytes_written(&shared[1]) ? "written" : "zero");
	printf("robust: %s\n", list_bytes_written(&robust[0]) || list_bytes_written(&robust[1]) ? "written" : "zero");
}

/* A page holding a table's mutex (taken before a bucket's many times) is
 * replaced by a fresh one with mmap(MAP_FIXED); the zero mutex at the
 * same address is a new lock, whose first use is under the bucket: no
 * cycle. The bug: the page kept, and the same table taken under the
 * bucket. */
static void table_page_then_under_bucket(int replaced)
{
	pthread_mutex_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct bucket *b = buckets_new(1);
	if (page == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	pthread_mutex_init(page, NULL);
	for (int i = 0; i < 1000; i++)
		nest(page, &b->lock);
	if (replaced && mmap(page, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
			        page) {
		perror("mmap");
		exit(1);
	}
	nest(&b->lock, page);
	printf("done\n");
}

SCENARIO ok_page_replaced(void) { table_page_then_under_bucket(1); }
SCENARIO bug_page_kept(void) { table_page_then_under_bucket(0); }

/* An object pool of the program's own (never freed, never destroyed):
 * each object's mutex is made anew when the object is handed out, by
 * zeroing it (memset, or PTHREAD_MUTEX_INITIALIZER assigned), as an
 * allocator of the program's own does with calloc(). In its first life
 * object 0 is the parent of object 1 (parent locked, then child); in its
 * second the roles are swapped. The lives never overlap: correct. The
 * bug: the roles swapped with the same mutexes, never made anew (the
 * same two locks, taken in both orders). */
struct pool_obj {
	pthread_mutex_t lock;
	struct pool_obj *child;
};

static void pool_obj_get(struct pool_obj *o, int how)
{
	if (how == 1)
		memset(&o->lock, 0, sizeof(o->lock));
	else if (how == 2)
		o->lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

__attribute__((noinline)) static void pool_visit(struct pool_obj *parent)
{
	pthread_mutex_lock(&parent->lock);
	pthread_mutex_lock(&parent->child->lock);
	pthread_mutex_unlock(&parent->child->lock);
	pthread_mutex_unlock(&parent->lock);
}

static void pool_roles_swapped(int how)
{
	struct pool_obj *objs = calloc(2, sizeof(*objs));
	for (int life = 0; life < 2; life++) {
		struct pool_obj *parent = &objs[life], *child = &objs[1 - life];
		pool_obj_get(parent, how);
		pool_obj_get(child, how);
		parent->child = child;
		for (int i = 0; i < 100; i++)
			pool_visit(parent);
	}
	printf("done\n");
}

SCENARIO ok_pool_made_anew_by_memset(void) { pool_roles_swapped(1); }
SCENARIO ok_pool_made_anew_by_initializer(void) { pool_roles_swapped(2); }
SCENARIO bug_pool_roles_swapped_same_locks(void) { pool_roles_swapped(0); }

/* Mutexes the program keeps in memory that others see: a file mapped
 * shared (a persistent store) and a System V shared memory segment, not
 * marked process-shared (one process uses them). Whatever the tracer
 * wrote there would reach the file or the segment: nothing may be. */
static void nest_pair_in(void *mem, const char *what)
{
	pthread_mutex_t *m = mem;
	pthread_mutex_init(&m[0], NULL);
	pthread_mutex_init(&m[1], NULL);
	for (int i = 0; i < 1000; i++)
		nest(&m[0], &m[1]);
	printf("%s: %s\n", what, list_bytes_written(&m[0]) || list_bytes_written(&m[1]) ? "written" : "zero");
}

SCENARIO shared_memory_bytes(void)
{
	char path[] = "/tmp/lockdep-rcu-class-tags.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, 4096) != 0) {
		perror("mkstemp");
		exit(1);
	}
	void *file = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (file == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	nest_pair_in(file, "file");
	munmap(file, 4096);
	close(fd);
	unlink(path);

	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	void *seg = id < 0 ? (void *)-1 : shmat(id, NULL, 0);
	if (seg == (void *)-1) {
		perror("shmget/shmat");
		exit(1);
	}
	nest_pair_in(seg, "shm");
	shmdt(seg);
	shmctl(id, IPC_RMID, NULL);
}

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "ok-moved-mutex", ok_moved_mutex },
		{ "bug-bucket-then-table", bug_bucket_then_table },
		{ "ok-renamed-mutex", ok_renamed_mutex },
		{ "bug-renamed-mutex-inverted", bug_renamed_mutex_inverted },
		{ "list-bytes", list_bytes },
		{ "shared-memory-bytes", shared_memory_bytes },
		{ "ok-page-replaced", ok_page_replaced },
		{ "bug-page-kept", bug_page_kept },
		{ "ok-pool-made-anew-by-memset", ok_pool_made_anew_by_memset },
		{ "ok-pool-made-anew-by-initializer", ok_pool_made_anew_by_initializer },
		{ "bug-pool-roles-swapped-same-locks", bug_pool_roles_swapped_same_locks },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
