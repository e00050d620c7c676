/* symbolize_target.c - a small program, built -pie and -no-pie, with DWARF 5, 4
 * and 3, stripped, and with a separate compressed debug file, without
 * -rdynamic (except the stripped one): it symbolizes its own static function,
 * static and global data, a heap block, libc and vDSO frames and dlopen()ed
 * libraries, printing "key: value" lines that symbolize_test.c checks. It
 * interposes malloc to count allocations made inside the symbolizer, and
 * counts its open descriptors before and after. */
#define _GNU_SOURCE
#include "../../preload/symbolize/module_list.h"
#include "../../preload/symbolize/symbolize.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- allocations made while the symbolizer runs --------------------------- */

/* The symbolizer must never allocate: hosts call it from inside their own
 * allocator. Every allocation entry point is counted while `counting`. */
static volatile int counting;
static volatile unsigned long allocations;

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static void count_allocation(void)
{
	if (counting)
		allocations++;
}

void *malloc(size_t size)
{
	count_allocation();
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	count_allocation();
	return __libc_calloc(n, size);
}

void *realloc(void *old, size_t size)
{
	count_allocation();
	return __libc_realloc(old, size);
}

void free(void *block)
{
	count_allocation();
	__libc_free(block);
}

void *memalign(size_t align, size_t size)
{
	count_allocation();
	return __libc_memalign(align, size);
}

void *aligned_alloc(size_t align, size_t size)
{
	count_allocation();
	return __libc_memalign(align, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	count_allocation();
	*out = __libc_memalign(align, size);
	return *out ? 0 : 12 /* ENOMEM */;
}

/* Runs a symbolizer call with allocation counting on. */
#define COUNTED(call) ({ counting = 1; __typeof__(call) result_ = (call); counting = 0; result_; })

/* Open descriptors, the one used to count them excluded. */
static int open_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	if (dir == NULL)
		return -1;
	int count = 0;
	for (struct dirent *entry; (entry = readdir(dir)) != NULL;)
		count += entry->d_name[0] != '.';
	closedir(dir);
	return count - 1;
}

/* ---- code and data to name ------------------------------------------------ */

/* Static, so only .symtab names it (no -rdynamic, not in .dynsym). */
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;

/* A lock inside a global: named "global_stats+0x8". */
struct stats {
	long hits;
	pthread_mutex_t lock;
};
struct stats global_stats = { 0, PTHREAD_MUTEX_INITIALIZER };

/* A 1-byte function followed by 8 bytes no symbol covers, and a label
 * without a size: an address past a symbol's size must stay raw, and a
 * sizeless symbol names only its own address. */
__asm__(".text\n"
	".type sized_stub, @function\n"
	"sized_stub:\n"
	"\tret\n"
	".size sized_stub, 1\n"
	"\t.byte 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90\n"
	".type sizeless_label, @function\n"
	"sizeless_label:\n"
	"\tret\n"
	"\t.byte 0x90, 0x90, 0x90, 0x90\n");
extern char sized_stub[], sizeless_label[];

static void print_line(const char *key, const char *text)
{
	printf("%s: %s\n", key, text);
}

__attribute__((noipa)) static void take_stats_lock(void);

/* noipa on both functions: no inlining, and no clone renamed to
 * "take_stats_lock.constprop.0"; the unlock after the call keeps it from being
 * a tail call, so __builtin_return_address(0) lies in take_stats_lock. */
__attribute__((noipa)) static void splat_from_caller(int call_line)
{
	uintptr_t ret = (uintptr_t)__builtin_return_address(0);
	char buf[512];
	COUNTED(symbolize_code(ret, buf, sizeof buf));
	print_line("code", buf);
	COUNTED(symbolize_function(ret, buf, sizeof buf));
	print_line("function", buf);
	printf("call_line: %d\n", call_line);

	/* what addr2line -e takes for the call instruction */
	uintptr_t offset = 0;
	int found = COUNTED(symbolize_module(ret - 1, buf, sizeof buf, &offset));
	printf("call_site_module: %d %s 0x%lx\n", found, buf, (unsigned long)offset);
	int line = 0;
	found = COUNTED(symbolize_source(ret - 1, buf, sizeof buf, &line));
	printf("call_site_source: %d %s:%d\n", found, buf, line);
	uintptr_t start = COUNTED(symbolize_function_start(ret));
	printf("function_start_matches: %d\n", start == (uintptr_t)take_stats_lock);
}

__attribute__((noipa)) static void take_stats_lock(void)
{
	pthread_mutex_lock(&stats_lock);
	splat_from_caller(__LINE__);
	global_stats.hits++;
	pthread_mutex_unlock(&stats_lock);
}

/* ---- libc on a small stack ------------------------------------------------- */

static uintptr_t main_return_address;
static char small_stack_frame[512];

/* The first file:line lookup in libc (its line tables are decoded here), on
 * the smallest stack a thread may have: libdw needed ~150 KiB. */
static void *symbolize_on_small_stack(void *arg)
{
	(void)arg;
	COUNTED(symbolize_code(main_return_address, small_stack_frame, sizeof small_stack_frame));
	return NULL;
}

static void run_on_small_stack(void)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	long min = sysconf(_SC_THREAD_STACK_MIN);
	size_t size = min > 16384 ? (size_t)min : 16384;
	pthread_attr_setstacksize(&attr, size);
	pthread_t thread;
	if (pthread_create(&thread, &attr, symbolize_on_small_stack, NULL) == 0)
		pthread_join(thread, NULL);
	pthread_attr_destroy(&attr);
	printf("small_stack: %zu\n", size);
	print_line("libc_frame", small_stack_frame);
}

/* ---- dlopen()ed libraries ------------------------------------------------- */

struct object_range {
	uintptr_t address, lo, hi;
};

static int find_range(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct object_range *range = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && range->address >= start &&
		    range->address < start + ph->p_memsz) {
			range->lo = info->dlpi_addr;
			range->hi = UINTPTR_MAX;
			for (int j = 0; j < info->dlpi_phnum; j++)
				if (info->dlpi_phdr[j].p_type == PT_LOAD)
					range->hi = info->dlpi_addr + info->dlpi_phdr[j].p_vaddr +
						    info->dlpi_phdr[j].p_memsz;
			return 1;
		}
	}
	return 0;
}

static char own_dir[PATH_MAX];

/* dlopen()s build/tests/libsymbolize_plugin_<which>.so, returns its helper. */
static uintptr_t open_plugin(const char *path, void **handle)
{
	*handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	void *(*helper)(void) = *handle ? (void *(*)(void))dlsym(*handle, "plugin_helper") : NULL;
	return helper ? (uintptr_t)helper() : 0;
}

static void dlopen_dlclose(void)
{
	char path[PATH_MAX + 64], buf[512];
	void *handle;
	snprintf(path, sizeof path, "%s/libsymbolize_plugin_a.so", own_dir);
	uintptr_t helper = open_plugin(path, &handle);
	COUNTED(symbolize_code_exact(helper, buf, sizeof buf));
	print_line("plugin_loaded", buf);

	/* forgotten while still loaded: re-listed, read afresh, named again */
	struct object_range range = { helper, 0, 0 };
	dl_iterate_phdr(find_range, &range);
	COUNTED(({ symbolize_forget_range(range.lo, range.hi); 0; }));
	struct module *module = COUNTED(module_containing(helper));
	printf("plugin_forgotten_fresh: %d\n", module != NULL && !module->symbols_tried);
	COUNTED(symbolize_code_exact(helper, buf, sizeof buf));
	print_line("plugin_relisted", buf);

	/* forgotten and unloaded: a bare address */
	COUNTED(({ symbolize_forget_range(range.lo, range.hi); 0; }));
	if (handle)
		dlclose(handle);
	COUNTED(symbolize_code_exact(helper, buf, sizeof buf));
	print_line("plugin_unloaded", buf);

	snprintf(path, sizeof path, "%s/libsymbolize_plugin_b.so", own_dir);
	uintptr_t helper_b = open_plugin(path, &handle);
	COUNTED(symbolize_code_exact(helper_b, buf, sizeof buf));
	print_line("plugin_b", buf);
	if (handle)
		dlclose(handle);
}

/* A library whose file is replaced (upgraded) after it was loaded: the new
 * file's symbols do not describe the loaded code, so it prints raw. Hard
 * links in a directory next to this program stand for the two versions. */
static void replaced_library(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], upgrade[PATH_MAX + 64], buf[512];
	char plugin_a[PATH_MAX + 64], plugin_b[PATH_MAX + 64];
	snprintf(dir, sizeof dir, "%.*s/replaced.XXXXXX", PATH_MAX - 32, own_dir);
	if (mkdtemp(dir) == NULL)
		return;
	snprintf(path, sizeof path, "%s/libplugin.so", dir);
	snprintf(upgrade, sizeof upgrade, "%s/libplugin.so.new", dir);
	snprintf(plugin_a, sizeof plugin_a, "%s/libsymbolize_plugin_a.so", own_dir);
	snprintf(plugin_b, sizeof plugin_b, "%s/libsymbolize_plugin_b.so", own_dir);
	void *handle = NULL;
	uintptr_t helper = link(plugin_a, path) == 0 ? open_plugin(path, &handle) : 0;
	if (helper != 0 && link(plugin_b, upgrade) == 0 && rename(upgrade, path) == 0) {
		COUNTED(symbolize_code_exact(helper, buf, sizeof buf));
		print_line("replaced_library", buf);
	}
	if (handle)
		dlclose(handle);
	unlink(path);
	unlink(upgrade);
	rmdir(dir);
}

int main(void)
{
	main_return_address = (uintptr_t)__builtin_return_address(0);
	int fds_before = open_fds();
	char buf[512];
	ssize_t len_exe = readlink("/proc/self/exe", own_dir, sizeof own_dir - 1);
	own_dir[len_exe > 0 ? len_exe : 0] = '\0';
	char *slash = strrchr(own_dir, '/');
	if (slash)
		*slash = '\0';

	run_on_small_stack();
	struct module *libc = module_containing(main_return_address);
	printf("libc_debug_file: %d\n", libc != NULL && libc->debug.bytes != NULL);

	take_stats_lock();

	COUNTED(symbolize_code_exact((uintptr_t)take_stats_lock, buf, sizeof buf));
	print_line("exact", buf);
	int line = 0;
	int found = COUNTED(symbolize_source((uintptr_t)take_stats_lock, buf, sizeof buf, &line));
	printf("exact_source: %d %s:%d\n", found, buf, line);
	printf("function_start_exact: %d\n",
	       COUNTED(symbolize_function_start((uintptr_t)take_stats_lock + 1)) ==
		       (uintptr_t)take_stats_lock);
	printf("function_start_outside: %d\n",
	       COUNTED(symbolize_function_start((uintptr_t)sized_stub + 3)) == 0);

	COUNTED(symbolize_code_exact((uintptr_t)main, buf, sizeof buf));
	print_line("main_exact", buf);

	COUNTED(symbolize_data((uintptr_t)&stats_lock, buf, sizeof buf));
	print_line("static_data", buf);
	COUNTED(symbolize_data((uintptr_t)&global_stats.lock, buf, sizeof buf));
	print_line("inner_data", buf);

	COUNTED(symbolize_code_exact((uintptr_t)sized_stub, buf, sizeof buf));
	print_line("sized_stub", buf);
	COUNTED(symbolize_code_exact((uintptr_t)sized_stub + 3, buf, sizeof buf));
	print_line("past_size", buf);
	COUNTED(symbolize_code_exact((uintptr_t)sizeless_label, buf, sizeof buf));
	print_line("sizeless", buf);
	COUNTED(symbolize_code_exact((uintptr_t)sizeless_label + 2, buf, sizeof buf));
	print_line("past_sizeless", buf);

	void *heap = malloc(64);
	size_t len = COUNTED(symbolize_data((uintptr_t)heap, buf, sizeof buf));
	print_line("heap", buf);
	printf("heap_len: %zu\n", len);
	free(heap);

	int on_stack = 0;
	len = COUNTED(symbolize_data((uintptr_t)&on_stack, buf, sizeof buf));
	printf("stack_len: %zu\n", len);

	/* Odd input must not crash and names only the address. */
	const uintptr_t odd[] = { 0, 1, 0xdead0000, UINTPTR_MAX };
	for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
		COUNTED(symbolize_code(odd[i], buf, sizeof buf));
		print_line("odd", buf);
		COUNTED(symbolize_data(odd[i], buf, sizeof buf));
		print_line("odd_data", buf);
	}
	uintptr_t offset = 1;
	found = COUNTED(symbolize_module(0xdead0000, buf, sizeof buf, &offset));
	printf("odd_module: %d \"%s\"\n", found, buf);
	found = COUNTED(symbolize_source(0xdead0000, buf, sizeof buf, &line));
	printf("odd_source: %d \"%s\" %d\n", found, buf, line);

	/* Truncation: always NUL-terminated, length is what was stored. */
	len = COUNTED(symbolize_code_exact((uintptr_t)take_stats_lock, buf, 8));
	printf("truncated: %s len=%zu\n", buf, len);

	/* The vDSO has no file: named from its image in memory. */
	void *vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *vdso_fn = vdso ? dlsym(vdso, "__vdso_clock_gettime") : NULL;
	if (vdso_fn != NULL) {
		COUNTED(symbolize_code_exact((uintptr_t)vdso_fn, buf, sizeof buf));
		print_line("vdso", buf);
	}

	/* A library loaded after the first lookup must be found. */
	void *libm = dlopen("libm.so.6", RTLD_NOW);
	void *fn = libm ? dlsym(libm, "frexp") : NULL;
	COUNTED(symbolize_code_exact((uintptr_t)fn, buf, sizeof buf));
	print_line("dlopened", buf);

	/* ...and forgotten once unloaded: its address is unmapped again. */
	if (libm)
		dlclose(libm);
	COUNTED(symbolize_code_exact((uintptr_t)fn, buf, sizeof buf));
	print_line("dlclosed", buf);

	dlopen_dlclose();
	replaced_library();

	printf("allocations: %lu\n", allocations);
	printf("fds: %d %d\n", fds_before, open_fds());
	return 0;
}
