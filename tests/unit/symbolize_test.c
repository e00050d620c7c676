/* symbolize_test.c - Criterion test of preload/symbolize.c: runs the prebuilt
 * symbolize_target binaries (PIE and -no-pie; paths from SYMBOLIZE_TARGET_PIE /
 * SYMBOLIZE_TARGET_NOPIE) and checks the names, offsets and lines they print. */

/* Build and run from the repository root (the Makefile may wrap these):
 *   mkdir -p build/tests
 *   gcc -std=gnu11 -Wall -Wextra -O2 -g -fPIE -pie tests/unit/symbolize_target.c \
 *       preload/symbolize.c -o build/tests/symbolize_target_pie
 *   gcc -std=gnu11 -Wall -Wextra -O2 -g -fno-pie -no-pie tests/unit/symbolize_target.c \
 *       preload/symbolize.c -o build/tests/symbolize_target_nopie
 *   gcc -std=gnu11 -Wall -Wextra -O2 -g tests/unit/symbolize_test.c \
 *       -o build/tests/symbolize_test -lcriterion
 *   build/tests/symbolize_test
 */
#define _GNU_SOURCE /* strchrnul */
#include <criterion/criterion.h>

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct target_output {
	char text[16384];
	int status;
};

static void run_target(const char *path, struct target_output *run)
{
	cr_assert(access(path, X_OK) == 0,
		  "target %s is missing: build it first (see the top of this file)", path);
	cr_assert(strchr(path, '\'') == NULL, "quote in path %s", path);
	char command[4096];
	snprintf(command, sizeof command, "'%s'", path);
	FILE *pipe = popen(command, "r");
	cr_assert_not_null(pipe, "popen %s", path);
	size_t len = fread(run->text, 1, sizeof run->text - 1, pipe);
	run->text[len] = '\0';
	run->status = pclose(pipe);
}

/* The value after "key: " on the first line starting with it, copied to value;
 * fails the test when the key is absent. */
static const char *value_of(const struct target_output *run, const char *key,
			    char *value, size_t size)
{
	size_t key_len = strlen(key);
	for (const char *line = run->text; *line != '\0';) {
		const char *eol = strchrnul(line, '\n');
		if (strncmp(line, key, key_len) == 0 && strncmp(line + key_len, ": ", 2) == 0) {
			const char *start = line + key_len + 2;
			snprintf(value, size, "%.*s", (int)(eol - start), start);
			return value;
		}
		line = *eol ? eol + 1 : eol;
	}
	cr_assert_fail("no \"%s:\" line in target output:\n%s", key, run->text);
	return NULL;
}

/* ET_DYN for a PIE, ET_EXEC for -no-pie: proves the build gave the kind of
 * executable the test is named after. */
static int elf_type(const char *path)
{
	Elf64_Ehdr ehdr;
	FILE *file = fopen(path, "rb");
	cr_assert_not_null(file, "open %s", path);
	size_t got = fread(&ehdr, sizeof ehdr, 1, file);
	fclose(file);
	cr_assert(got == 1 && memcmp(ehdr.e_ident, ELFMAG, SELFMAG) == 0, "%s is not ELF", path);
	return ehdr.e_type;
}

static const char *path_from_env(const char *variable, const char *fallback)
{
	const char *path = getenv(variable);
	return path && *path ? path : fallback;
}

static void check_target(const char *path, int expected_elf_type)
{
	cr_assert_eq(elf_type(path), expected_elf_type, "%s: wrong kind of executable", path);
	struct target_output run;
	run_target(path, &run);
	cr_assert(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0,
		  "%s did not exit cleanly (status %#x):\n%s", path, run.status, run.text);

	const char *slash = strrchr(path, '/');
	char module[512];
	snprintf(module, sizeof module, "[%s]", slash ? slash + 1 : path);

	char code[1024], line[64], expect[128], value[1024];
	value_of(&run, "code", code, sizeof code);
	value_of(&run, "call_line", line, sizeof line);
	cr_expect(strstr(code, "take_stats_lock+0x") == code,
		  "static caller not named with offset: \"%s\"", code);
	cr_expect(strstr(code, "/0x") != NULL, "no symbol size: \"%s\"", code);
	cr_expect(strstr(code, module) != NULL, "no %s: \"%s\"", module, code);
	snprintf(expect, sizeof expect, "symbolize_target.c:%s", line);
	size_t expect_len = strlen(expect);
	const char *where = strstr(code, expect);
	cr_expect(where != NULL && where[expect_len] == '\0',
		  "expected %s at the end of \"%s\"", expect, code);

	cr_expect_str_eq(value_of(&run, "function", value, sizeof value), "take_stats_lock");
	cr_expect(strstr(value_of(&run, "exact", value, sizeof value),
			 "take_stats_lock+0x0/0x") == value,
		  "exact address of a function should be +0x0: \"%s\"", value);
	cr_expect_str_eq(value_of(&run, "static_data", value, sizeof value), "stats_lock");
	cr_expect_str_eq(value_of(&run, "inner_data", value, sizeof value), "global_stats+0x8");
	cr_expect_str_eq(value_of(&run, "heap", value, sizeof value), "");
	cr_expect_str_eq(value_of(&run, "heap_len", value, sizeof value), "0");
	cr_expect_str_eq(value_of(&run, "stack_len", value, sizeof value), "0");
	cr_expect_str_eq(value_of(&run, "truncated", value, sizeof value), "take_st len=7");
	cr_expect(strstr(value_of(&run, "dlopened", value, sizeof value), "[libm.so.6") != NULL,
		  "library dlopened after the first lookup not found: \"%s\"", value);
	value_of(&run, "dlclosed", value, sizeof value);
	cr_expect(strncmp(value, "0x", 2) == 0 && strchr(value, ' ') == NULL,
		  "unloaded library still named: \"%s\"", value);

	/* Odd addresses (0, 1, unmapped, UINTPTR_MAX) print as a bare address
	 * and name no data. */
	int odd_code = 0, odd_data = 0;
	for (const char *odd = run.text; (odd = strstr(odd, "\nodd: ")) != NULL; odd++) {
		snprintf(value, sizeof value, "%.*s", (int)strcspn(odd + 6, "\n"), odd + 6);
		cr_expect(strncmp(value, "0x", 2) == 0 && strchr(value, ' ') == NULL,
			  "odd address got a name: \"%s\"", value);
		odd_code++;
	}
	for (const char *odd = run.text; (odd = strstr(odd, "\nodd_data: \n")) != NULL; odd++)
		odd_data++;
	cr_expect_eq(odd_code, 4, "odd code lines: %d", odd_code);
	cr_expect_eq(odd_data, 4, "empty odd_data lines: %d", odd_data);
}

Test(symbolize, pie_executable)
{
	check_target(path_from_env("SYMBOLIZE_TARGET_PIE", "build/tests/symbolize_target_pie"),
		     ET_DYN);
}

Test(symbolize, no_pie_executable)
{
	check_target(path_from_env("SYMBOLIZE_TARGET_NOPIE", "build/tests/symbolize_target_nopie"),
		     ET_EXEC);
}
