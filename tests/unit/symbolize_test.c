/* symbolize_test.c - Criterion test of the symbolizer (preload/symbolize/symbolize.c and
 * the readers it uses): runs the prebuilt symbolize_target binaries (PIE and
 * -no-pie, DWARF 5, 4 and 3, stripped, and with a compressed debuglink file;
 * paths from SYMBOLIZE_TARGET_<BUILD> or build/tests/) and checks the names,
 * offsets, lines, allocations and descriptors they print. Build them with
 * make (see the symbolize_target rules in the Makefile). */
#define _GNU_SOURCE /* strchrnul */
#include <criterion/criterion.h>

#include <elf.h>
#include <limits.h>
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

/* "[name]" and "[name+0x" of the module the target is. */
static void module_names(const char *path, char *module, char *module_offset, size_t size)
{
	const char *slash = strrchr(path, '/');
	snprintf(module, size, "[%s]", slash ? slash + 1 : path);
	snprintf(module_offset, size, "[%s+0x", slash ? slash + 1 : path);
}

/* A bare address in the module: "0x<hex> [module+0x<hex>]". */
static void expect_raw_in_module(const char *key, const char *value, const char *module_offset)
{
	cr_expect(strncmp(value, "0x", 2) == 0 && strstr(value, module_offset) != NULL &&
			  value[strlen(value) - 1] == ']',
		  "%s should be a bare address in %s...]: \"%s\"", key, module_offset, value);
}

static void expect_prefix(const char *key, const char *value, const char *prefix)
{
	cr_expect(strncmp(value, prefix, strlen(prefix)) == 0, "%s: expected \"%s...\", got \"%s\"",
		  key, prefix, value);
}

/* What every build of the target prints alike: libc, the vDSO, dlopen()ed
 * libraries, odd addresses, and no allocation and no descriptor left. */
static void check_common(const char *path, int expected_elf_type, struct target_output *run)
{
	cr_assert_eq(elf_type(path), expected_elf_type, "%s: wrong kind of executable", path);
	run_target(path, run);
	cr_assert(WIFEXITED(run->status) && WEXITSTATUS(run->status) == 0,
		  "%s did not exit cleanly (status %#x):\n%s", path, run->status, run->text);
	char value[1024], expect[PATH_MAX + 64];

	/* the symbolizer never allocates and keeps no descriptor */
	cr_expect_str_eq(value_of(run, "allocations", value, sizeof value), "0",
			 "allocations inside the symbolizer");
	int before = -1, after = -2;
	sscanf(value_of(run, "fds", value, sizeof value), "%d %d", &before, &after);
	cr_expect(before >= 0 && before == after, "open descriptors before/after: %s", value);

	/* the first libc lookup, file:line included, ran on the smallest stack */
	value_of(run, "libc_frame", value, sizeof value);
	expect_prefix("libc_frame", value, "__libc_start_call_main+0x");
	cr_expect(strstr(value, " [libc.so.6]") != NULL, "libc frame: \"%s\"", value);
	char debug[8];
	if (strcmp(value_of(run, "libc_debug_file", debug, sizeof debug), "1") == 0)
		cr_expect(strstr(value, "] ../sysdeps/nptl/libc_start_call_main.h:") != NULL,
			  "libc frame without file:line from libc6-dbg: \"%s\"", value);

	char vdso[256];
	if (strstr(run->text, "\nvdso: ") != NULL) { /* when dlopen reaches it */
		value_of(run, "vdso", vdso, sizeof vdso);
		expect_prefix("vdso", vdso, "__vdso_clock_gettime+0x0/0x");
		cr_expect(strstr(vdso, " [linux-vdso.so.1]") != NULL, "vdso: \"%s\"", vdso);
	}

	cr_expect(strstr(value_of(run, "dlopened", value, sizeof value), "[libm.so.6") != NULL,
		  "library dlopened after the first lookup not found: \"%s\"", value);
	value_of(run, "dlclosed", value, sizeof value);
	cr_expect(strncmp(value, "0x", 2) == 0 && strchr(value, ' ') == NULL,
		  "unloaded library still named: \"%s\"", value);

	/* forget_range: still loaded, the library is re-listed and read again;
	 * unloaded, a bare address; another library is named by its own symbols */
	char loaded[1024];
	value_of(run, "plugin_loaded", loaded, sizeof loaded);
	expect_prefix("plugin_loaded", loaded, "plugin_helper_a+0x0/0x");
	cr_expect(strstr(loaded, " [libsymbolize_plugin_a.so] tests/unit/symbolize_plugin.c:") != NULL,
		  "plugin's static function without module or file:line: \"%s\"", loaded);
	cr_expect_str_eq(value_of(run, "plugin_forgotten_fresh", value, sizeof value), "1");
	cr_expect_str_eq(value_of(run, "plugin_relisted", value, sizeof value), loaded);
	value_of(run, "plugin_unloaded", value, sizeof value);
	cr_expect(strncmp(value, "0x", 2) == 0 && strchr(value, ' ') == NULL,
		  "forgotten, unloaded plugin still named: \"%s\"", value);
	value_of(run, "plugin_b", value, sizeof value);
	expect_prefix("plugin_b", value, "plugin_helper_b+0x0/0x");
	cr_expect(strstr(value, " [libsymbolize_plugin_b.so]") != NULL, "plugin_b: \"%s\"", value);
	/* its file replaced by another build after loading: not named from it */
	value_of(run, "replaced_library", value, sizeof value);
	expect_raw_in_module("replaced_library", value, "[libplugin.so+0x");

	/* Odd addresses (0, 1, unmapped, UINTPTR_MAX) print as a bare address
	 * and name no data, module or source. */
	int odd_code = 0, odd_data = 0;
	for (const char *odd = run->text; (odd = strstr(odd, "\nodd: ")) != NULL; odd++) {
		snprintf(value, sizeof value, "%.*s", (int)strcspn(odd + 6, "\n"), odd + 6);
		cr_expect(strncmp(value, "0x", 2) == 0 && strchr(value, ' ') == NULL,
			  "odd address got a name: \"%s\"", value);
		odd_code++;
	}
	for (const char *odd = run->text; (odd = strstr(odd, "\nodd_data: \n")) != NULL; odd++)
		odd_data++;
	cr_expect_eq(odd_code, 4, "odd code lines: %d", odd_code);
	cr_expect_eq(odd_data, 4, "empty odd_data lines: %d", odd_data);
	cr_expect_str_eq(value_of(run, "odd_module", value, sizeof value), "0 \"\"");
	cr_expect_str_eq(value_of(run, "odd_source", value, sizeof value), "0 \"\" 0");

	cr_expect_str_eq(value_of(run, "heap", value, sizeof value), "");
	cr_expect_str_eq(value_of(run, "heap_len", value, sizeof value), "0");
	cr_expect_str_eq(value_of(run, "stack_len", value, sizeof value), "0");
	cr_expect_str_eq(value_of(run, "function_start_outside", value, sizeof value), "1");
	cr_expect_str_eq(value_of(run, "inner_data", value, sizeof value), "global_stats+0x8");

	/* symbolize_module: the file and what addr2line -e takes */
	char real[PATH_MAX];
	cr_assert_not_null(realpath(path, real), "realpath %s", path);
	snprintf(expect, sizeof expect, "1 %s 0x", real);
	expect_prefix("call_site_module", value_of(run, "call_site_module", value, sizeof value),
		      expect);

	char module[512], module_offset[512];
	module_names(path, module, module_offset, sizeof module);
	expect_raw_in_module("past_size", value_of(run, "past_size", value, sizeof value),
			     module_offset);
	expect_raw_in_module("past_sizeless",
			     value_of(run, "past_sizeless", value, sizeof value), module_offset);
}

/* addr2line's answer for the call site must end with the file:line we print
 * (it prints the path joined with the compilation directory). */
static void check_against_addr2line(const struct target_output *run, const char *source)
{
	char value[1024], file[PATH_MAX], command[PATH_MAX + 128], answer[PATH_MAX + 64] = "";
	unsigned long offset = 0;
	int found = 0;
	value_of(run, "call_site_module", value, sizeof value);
	cr_assert(sscanf(value, "%d %4095s 0x%lx", &found, file, &offset) == 3 && found == 1,
		  "call_site_module: \"%s\"", value);
	cr_assert(strchr(file, '\'') == NULL, "quote in path %s", file);
	snprintf(command, sizeof command, "addr2line -e '%s' 0x%lx", file, offset);
	FILE *pipe = popen(command, "r");
	cr_assert_not_null(pipe, "popen %s", command);
	if (fgets(answer, sizeof answer, pipe) == NULL)
		answer[0] = '\0';
	pclose(pipe);
	answer[strcspn(answer, "\n")] = '\0';
	size_t answer_len = strlen(answer), source_len = strlen(source);
	cr_expect(answer_len >= source_len &&
			  strcmp(answer + answer_len - source_len, source) == 0 &&
			  (answer_len == source_len || answer[answer_len - source_len - 1] == '/'),
		  "addr2line says \"%s\", we say \"%s\"", answer, source);
}

/* A build with full DWARF: static functions, data, file:line, new APIs. */
static void check_target(const char *path, int expected_elf_type)
{
	struct target_output run;
	check_common(path, expected_elf_type, &run);
	char module[512], module_offset[512];
	module_names(path, module, module_offset, sizeof module);

	char code[1024], line[64], expect[1024], value[1024];
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
	cr_expect_str_eq(value_of(&run, "truncated", value, sizeof value), "take_st len=7");
	expect_prefix("main_exact", value_of(&run, "main_exact", value, sizeof value), "main+0x0/0x");

	/* symbolize_source: the same file:line symbolize_code prints */
	char source[256];
	snprintf(source, sizeof source, "tests/unit/symbolize_target.c:%s", line);
	snprintf(expect, sizeof expect, "1 %s", source);
	cr_expect_str_eq(value_of(&run, "call_site_source", value, sizeof value), expect);
	value_of(&run, "exact", code, sizeof code);
	value_of(&run, "exact_source", value, sizeof value);
	const char *exact_file = strrchr(code, ' ');
	cr_expect(strncmp(value, "1 ", 2) == 0 && exact_file && strcmp(value + 2, exact_file + 1) == 0,
		  "symbolize_source \"%s\" differs from \"%s\"", value, code);
	check_against_addr2line(&run, source);

	/* symbolize_function_start: the enclosing function's first byte */
	cr_expect_str_eq(value_of(&run, "function_start_matches", value, sizeof value), "1");
	cr_expect_str_eq(value_of(&run, "function_start_exact", value, sizeof value), "1");

	/* a sized symbol names its bytes only, a sizeless one its address only */
	snprintf(expect, sizeof expect, "sized_stub+0x0/0x1 %s", module);
	expect_prefix("sized_stub", value_of(&run, "sized_stub", value, sizeof value), expect);
	snprintf(expect, sizeof expect, "sizeless_label+0x0/0x0 %s", module);
	expect_prefix("sizeless", value_of(&run, "sizeless", value, sizeof value), expect);
}

static const char *target(const char *build)
{
	static char variable[64], fallback[PATH_MAX];
	snprintf(variable, sizeof variable, "SYMBOLIZE_TARGET_%s", build);
	for (char *c = variable; *c; c++)
		*c = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
	snprintf(fallback, sizeof fallback, "build/tests/symbolize_target_%s", build);
	return path_from_env(variable, fallback);
}

Test(symbolize, pie_executable)
{
	check_target(target("pie"), ET_DYN);
}

Test(symbolize, no_pie_executable)
{
	check_target(target("nopie"), ET_EXEC);
}

Test(symbolize, dwarf4_line_tables)
{
	check_target(target("dwarf4"), ET_DYN);
}

Test(symbolize, dwarf3_line_tables)
{
	check_target(target("dwarf3"), ET_DYN);
}

/* Stripped, no build-id: symbols and compressed DWARF from the debuglink
 * file next to it, identified by its CRC. */
Test(symbolize, debuglink_file_with_compressed_sections)
{
	check_target(target("debuglink"), ET_DYN);
}

/* Stripped of .symtab and DWARF, linked -rdynamic: .dynsym names the
 * exported main and global_stats; static functions and data stay raw. */
Test(symbolize, stripped_executable)
{
	const char *path = target("stripped");
	struct target_output run;
	check_common(path, ET_DYN, &run);
	char module[512], module_offset[512], value[1024];
	module_names(path, module, module_offset, sizeof module);
	expect_raw_in_module("code", value_of(&run, "code", value, sizeof value), module_offset);
	expect_raw_in_module("exact", value_of(&run, "exact", value, sizeof value), module_offset);
	expect_raw_in_module("sized_stub", value_of(&run, "sized_stub", value, sizeof value),
			     module_offset);
	cr_expect_str_eq(value_of(&run, "function", value, sizeof value), "");
	cr_expect_str_eq(value_of(&run, "static_data", value, sizeof value), "");
	cr_expect_str_eq(value_of(&run, "exact_source", value, sizeof value), "0 :0");
	cr_expect_str_eq(value_of(&run, "call_site_source", value, sizeof value), "0 :0");
	cr_expect_str_eq(value_of(&run, "function_start_matches", value, sizeof value), "0");
	value_of(&run, "main_exact", value, sizeof value);
	expect_prefix("main_exact", value, "main+0x0/0x");
	size_t len = strlen(value), module_len = strlen(module);
	cr_expect(len > module_len && strcmp(value + len - module_len, module) == 0,
		  "main from .dynsym has no file:line to print: \"%s\"", value);
}
