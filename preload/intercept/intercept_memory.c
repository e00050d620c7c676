/* Memory that goes away takes its lock instances with it: free(),
 * realloc(), munmap(), mremap() and dlclose() forget the locks that lived
 * there (lock_instances.h), so the next object at that address inherits no
 * class. mmap(), mremap(), munmap(), shmat() and shmdt() also keep the list
 * of the program's shared memory, which the tracer never writes into
 * (shared_mappings.h). free() pays one load and a branch when its block's 2 MiB region
 * holds no lock; otherwise it asks the allocator for the block's size.
 * free(), realloc() and munmap() also check that no reader holds the memory
 * (check_rcu_free.h): one more load and a branch while no thread may be in
 * a read-side section with dereferences. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include "classes/lock_classes.h"
#include "classes/lock_instances.h"
#include "checks/lock_tracking.h"
#include "intercept/memory_calls.h"
#include "runtime/real_functions.h"
#include "report/report.h"
#include "symbolize/symbolize.h"
#include "base/next_symbol.h"
#include "unwind/cfi_unwind.h"
#include "checks/check_rcu_free.h"
#include "checks/checks.h"
#include "classes/shared_mappings.h"
#include "symbolize/symbolizer_lock.h"

/* The loader calls free(), realloc() and munmap() itself, also from inside
 * a failing dlsym(): resolved without dlsym(). */
INTERPOSE_LOADER_SAFE(free);
INTERPOSE_LOADER_SAFE(realloc);
INTERPOSE_LOADER_SAFE(munmap);
INTERPOSE_LOADER_SAFE(mremap);
INTERPOSE(dlclose);
INTERPOSE_LOADER_SAFE(mmap);
INTERPOSE_LOADER_SAFE(mmap64);
INTERPOSE(shmat);
INTERPOSE(shmdt);

/* The block size function of the allocator that free() really calls
 * (glibc's, jemalloc's...): the one defined by the same object, or none.
 * Looked up once, where looking up cannot recurse into free(). */
typedef size_t (*usable_size_fn)(void *);
static usable_size_fn allocator_usable_size;
static int usable_size_state;   /* 0 not looked up, 1 looking, 2 done */

static void find_usable_size(void)
{
	int expected = 0;
	if (!__atomic_compare_exchange_n(&usable_size_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	Dl_info free_info, size_info;
	void *fn = next_symbol("malloc_usable_size");
	if (fn && dladdr((void *)REAL(free), &free_info) && dladdr(fn, &size_info) &&
	    free_info.dli_fbase == size_info.dli_fbase)
		allocator_usable_size = (usable_size_fn)fn;
	tracer_leave(ts);
	__atomic_store_n(&usable_size_state, 2, __ATOMIC_RELEASE);
}

/* The size of a heap block, 0 when the allocator cannot tell. */
static size_t block_size(void *p)
{
	if (__atomic_load_n(&usable_size_state, __ATOMIC_ACQUIRE) != 2) {
		find_usable_size();
		if (__atomic_load_n(&usable_size_state, __ATOMIC_ACQUIRE) != 2)
			return 0;
	}
	return allocator_usable_size ? allocator_usable_size(p) : 0;
}

/* Memory [lo, hi) this thread is giving back, with a lock it holds there:
 * the kernel's debug_check_no_locks_freed(), reported before the memory
 * goes (the report names the lock from it), and the entry dropped, since
 * nothing may read that memory again (the next acquisition did: SIGSEGV). */
static __attribute__((noinline)) void held_locks_freed(struct thread_state *ts, uintptr_t lo, uintptr_t hi,
							uintptr_t ip)
{
	if (ts->in_tracer | ts->in_urcu)
		return;
	for (int i = (int)ts->depth - 1; i >= 0; i--) {
		struct held_lock *h = &ts->held[i];
		uintptr_t at = (uintptr_t)h->lock;
		if (h->kind == HELD_NONE || h->kind == HELD_RCU_READ || at < lo || at >= hi)
			continue;
		int saved = errno;
		print_held_lock_freed(ts, ip, (const void *)lo, hi - lo, i);
		held_lock_remove(ts, i);
		errno = saved;
	}
}

/* The locks in a block that is being freed. */
static void forget_block(void *p, uintptr_t ip)
{
	size_t size = block_size(p);
	if (!size)
		return;
	struct thread_state *ts = thread_state();
	if (ts->nr_locks)
		held_locks_freed(ts, (uintptr_t)p, (uintptr_t)p + size, ip);
	lock_instances_forget_range((uintptr_t)p, (uintptr_t)p + size);
}

/* Reported before the real free(): the reader may crash on the memory
 * right after. Out of line: some thread may be a reader holding something. */
static __attribute__((noinline)) void check_free(void *p, uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	struct rcu_free_check c;
	if (rcu_free_check_wanted(ts) && check_rcu_free(ts, "free", p, block_size(p), &c))
		print_rcu_object_freed(ts, ip, &c);
}

void free(void *p)
{
	if (__builtin_expect(p != NULL && lock_instances_region_marked(p), 0))
		forget_block(p, CALLER_IP());
	if (__builtin_expect(rcu_deref_sets_may_be_open(), 0) && p)
		check_free(p, CALLER_IP());
	REAL(free)(p);
}

/* realloc() frees the block when it moves it (or when n is 0): who holds
 * it is found before, and reported once the block is known to be gone. */
static __attribute__((noinline)) void *realloc_tracked(void *p, size_t n, int locks, uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	size_t old = block_size(p);
	struct rcu_free_check c;
	int held = rcu_free_check_wanted(ts) && check_rcu_free(ts, "realloc", p, old, &c);
	void *q = REAL(realloc)(p, n);
	int freed = q != p && (q || !n);
	if (locks && freed)
		lock_instances_forget_range((uintptr_t)p, (uintptr_t)p + old);
	else if (locks && q == p && n < old)
		lock_instances_forget_range((uintptr_t)p + n, (uintptr_t)p + old);
	if (held && freed) {
		int saved = errno;
		print_rcu_object_freed(ts, ip, &c);
		errno = saved;
	}
	return q;
}

void *realloc(void *p, size_t n)
{
	if (!p)
		return REAL(realloc)(p, n);
	int locks = lock_instances_region_marked(p);
	if (__builtin_expect(!locks && !rcu_deref_sets_may_be_open(), 1))
		return REAL(realloc)(p, n);
	return realloc_tracked(p, n, locks, CALLER_IP());
}

int munmap(void *addr, size_t len)
{
	struct thread_state *ts = thread_state();
	struct rcu_free_check c;
	int held = __builtin_expect(rcu_free_check_wanted(ts), 0) && len &&
		   check_rcu_free(ts, "munmap", addr, len, &c);
	if (ts->nr_locks && len)
		held_locks_freed(ts, (uintptr_t)addr, (uintptr_t)addr + len, CALLER_IP());
	int ret = REAL(munmap)(addr, len);
	if (ret == 0) {
		lock_instances_forget_range((uintptr_t)addr, (uintptr_t)addr + len);
		shared_mappings_remove((uintptr_t)addr, (uintptr_t)addr + len);
		if (held) {
			int saved = errno;
			print_rcu_object_freed(ts, CALLER_IP(), &c);
			errno = saved;
		}
	}
	return ret;
}

void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
	void *new_address = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		new_address = va_arg(ap, void *);
		va_end(ap);
	}
	void *p = REAL(mremap)(old, old_size, new_size, flags, new_address);
	if (p != MAP_FAILED && p != old)
		lock_instances_forget_range((uintptr_t)old, (uintptr_t)old + old_size);
	else if (p == old && new_size < old_size)
		lock_instances_forget_range((uintptr_t)old + new_size, (uintptr_t)old + old_size);
	/* A shared mapping moved or grown is shared where it is now. */
	if (p != MAP_FAILED && shared_mappings_overlap((uintptr_t)old, (uintptr_t)old + old_size)) {
		if (p != old)
			shared_mappings_remove((uintptr_t)old, (uintptr_t)old + old_size);
		shared_mappings_add((uintptr_t)p, (uintptr_t)p + new_size);
	}
	return p;
}

/* A mapping made: MAP_FIXED replaced what was there (its locks end as with
 * munmap()); MAP_SHARED and MAP_SHARED_VALIDATE: what is written there is
 * seen by the file or by other processes. */
static void note_mapping(void *p, size_t len, int flags)
{
	if (p == MAP_FAILED)
		return;
	if (flags & MAP_FIXED) {
		int saved = errno;
		lock_instances_forget_range((uintptr_t)p, (uintptr_t)p + len);
		errno = saved;
	}
	if ((flags & MAP_TYPE) != MAP_PRIVATE)
		shared_mappings_add((uintptr_t)p, (uintptr_t)p + len);
}

void memory_mapped_by_syscall(long result, size_t len, int flags)
{
	if ((unsigned long)result <= -4096UL)
		note_mapping((void *)result, len, flags);
}

void memory_unmapped_by_syscall(long result, void *addr, size_t len)
{
	if (result == 0) {
		lock_instances_forget_range((uintptr_t)addr, (uintptr_t)addr + len);
		shared_mappings_remove((uintptr_t)addr, (uintptr_t)addr + len);
	}
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
	void *p = REAL(mmap)(addr, len, prot, flags, fd, offset);
	note_mapping(p, len, flags);
	return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t offset)
{
	void *p = REAL(mmap64)(addr, len, prot, flags, fd, offset);
	note_mapping(p, len, flags);
	return p;
}

void *shmat(int id, const void *addr, int flags)
{
	void *p = REAL(shmat)(id, addr, flags);
	if (p != (void *)-1) {
		int saved = errno;
		struct shmid_ds ds;
		/* Its size, or all of the address space when it cannot be had. */
		if (shmctl(id, IPC_STAT, &ds) == 0)
			shared_mappings_add((uintptr_t)p, (uintptr_t)p + ds.shm_segsz);
		else
			shared_mappings_add(1, UINTPTR_MAX);
		errno = saved;
	}
	return p;
}

int shmdt(const void *addr)
{
	int ret = REAL(shmdt)(addr);
	if (ret == 0)
		shared_mappings_remove_at((uintptr_t)addr);
	return ret;
}

/* ---- dlclose: the object's segments, before and after --------------------- */

#define MAX_SEGMENTS 16

struct object_span {
	uintptr_t base;
	const char *name;
	int nr;
	uintptr_t lo[MAX_SEGMENTS], hi[MAX_SEGMENTS];
	int found;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct object_span *o = arg;
	if (info->dlpi_addr != o->base || !info->dlpi_name || !o->name ||
	    __builtin_strcmp(info->dlpi_name, o->name))
		return 0;
	o->found = 1;
	for (size_t i = 0; i < info->dlpi_phnum && o->nr < MAX_SEGMENTS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		o->lo[o->nr] = info->dlpi_addr + ph->p_vaddr;
		o->hi[o->nr] = o->lo[o->nr] + ph->p_memsz;
		o->nr++;
	}
	return 1;
}

struct range_arg {
	uintptr_t lo, hi;
};

static void forget_symbols(void *arg)
{
	struct range_arg *r = arg;
	symbolize_forget_range(r->lo, r->hi);
}

int dlclose(void *handle)
{
	struct thread_state *ts = thread_state();
	struct link_map *map = NULL;
	struct object_span span = { 0 };
	void *h = handle;
	__asm__("" : "+r"(h));   /* the program may pass NULL, declared nonnull */
	if (!ts->in_tracer && h && dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map) {
		span.base = map->l_addr;
		span.name = map->l_name;
		tracer_enter(ts);
		dl_iterate_phdr(find_object, &span);
		tracer_leave(ts);
	}
	int ret = REAL(dlclose)(handle);
	if (ret != 0 || !span.found)
		return ret;
	/* Still mapped (another reference holds it)? Then nothing went. */
	struct object_span still = { .base = span.base, .name = span.name };
	tracer_enter(ts);
	dl_iterate_phdr(find_object, &still);
	tracer_leave(ts);
	if (still.found)
		return ret;
	for (int i = 0; i < span.nr; i++) {
		lock_instances_forget_range(span.lo[i], span.hi[i]);
		lock_classes_forget_range(span.lo[i], span.hi[i]);
		cfi_unwind_forget_range(span.lo[i], span.hi[i]);
		struct range_arg r = { span.lo[i], span.hi[i] };
		symbolizer_run(ts, forget_symbols, &r);
	}
	lock_classes_objects_changed();
	return ret;
}

/* Looked up at startup, where it cannot recurse into free(). */
__attribute__((constructor)) static void memory_hooks_init(void)
{
	find_usable_size();
}
