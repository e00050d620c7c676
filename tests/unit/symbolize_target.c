/* symbolize_target.c - a small program, built -pie and -no-pie with -g and without
 * -rdynamic, that symbolizes its own static function, static and global data and a
 * heap block, printing "key: value" lines that symbolize_test.c checks. */
#include "../../preload/symbolize.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Static, so only .symtab names it (no -rdynamic, not in .dynsym). */
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;

/* A lock inside a global: named "global_stats+0x8". */
struct stats {
	long hits;
	pthread_mutex_t lock;
};
struct stats global_stats = { 0, PTHREAD_MUTEX_INITIALIZER };

static void print_line(const char *key, const char *text)
{
	printf("%s: %s\n", key, text);
}

/* noipa on both functions: no inlining, and no clone renamed to
 * "take_stats_lock.constprop.0"; the unlock after the call keeps it from being
 * a tail call, so __builtin_return_address(0) lies in take_stats_lock. */
__attribute__((noipa)) static void splat_from_caller(int call_line)
{
	uintptr_t ret = (uintptr_t)__builtin_return_address(0);
	char buf[512];
	symbolize_code(ret, buf, sizeof buf);
	print_line("code", buf);
	symbolize_function(ret, buf, sizeof buf);
	print_line("function", buf);
	printf("call_line: %d\n", call_line);
}

__attribute__((noipa)) static void take_stats_lock(void)
{
	pthread_mutex_lock(&stats_lock);
	splat_from_caller(__LINE__);
	global_stats.hits++;
	pthread_mutex_unlock(&stats_lock);
}

int main(void)
{
	char buf[512];

	take_stats_lock();

	symbolize_code_exact((uintptr_t)take_stats_lock, buf, sizeof buf);
	print_line("exact", buf);

	symbolize_data((uintptr_t)&stats_lock, buf, sizeof buf);
	print_line("static_data", buf);
	symbolize_data((uintptr_t)&global_stats.lock, buf, sizeof buf);
	print_line("inner_data", buf);

	void *heap = malloc(64);
	size_t len = symbolize_data((uintptr_t)heap, buf, sizeof buf);
	print_line("heap", buf);
	printf("heap_len: %zu\n", len);
	free(heap);

	int on_stack = 0;
	len = symbolize_data((uintptr_t)&on_stack, buf, sizeof buf);
	printf("stack_len: %zu\n", len);

	/* Odd input must not crash and names only the address. */
	const uintptr_t odd[] = { 0, 1, 0xdead0000, UINTPTR_MAX };
	for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
		symbolize_code(odd[i], buf, sizeof buf);
		print_line("odd", buf);
		symbolize_data(odd[i], buf, sizeof buf);
		print_line("odd_data", buf);
	}

	/* Truncation: always NUL-terminated, length is what was stored. */
	len = symbolize_code_exact((uintptr_t)take_stats_lock, buf, 8);
	printf("truncated: %s len=%zu\n", buf, len);

	/* A library loaded after the first lookup must be found. */
	void *libm = dlopen("libm.so.6", RTLD_NOW);
	void *fn = libm ? dlsym(libm, "frexp") : NULL;
	symbolize_code_exact((uintptr_t)fn, buf, sizeof buf);
	print_line("dlopened", buf);

	/* ...and forgotten once unloaded: its address is unmapped again. */
	if (libm)
		dlclose(libm);
	symbolize_code_exact((uintptr_t)fn, buf, sizeof buf);
	print_line("dlclosed", buf);
	return 0;
}
