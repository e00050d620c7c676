/* tools/debuginfod.c: the build-id and DWARF check it reads from a module
 * file (the same id the tracer's reader finds; a truncated or corrupt file
 * gives none, never a crash), and when it asks a server: never without
 * DEBUGINFOD_URLS nor for a module with DWARF of its own, and then
 * libdebuginfod is not even loaded. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbolize/elf_image.h"
#include "../../tools/debuginfod.h"
#include "../../tools/symbolizer.h"

#define PIE "build/tests/symbolize_target_pie"
#define STRIPPED "build/tests/symbolize_target_stripped"

static size_t tracer_build_id(const char *path, unsigned char id[BUILD_ID_MAX])
{
	struct elf_image image;
	cr_assert(elf_image_map_file(&image, path), "%s is missing: build it with make", path);
	size_t len = elf_build_id(&image, id);
	elf_image_close(&image);
	return len;
}

Test(debuginfod, build_id_and_dwarf_of_a_module_file)
{
	const char *paths[] = { PIE, STRIPPED };
	for (int i = 0; i < 2; i++) {
		unsigned char expected[BUILD_ID_MAX], id[64];
		size_t expected_len = tracer_build_id(paths[i], expected);
		cr_assert_eq(expected_len, 20, "%s: built with a GNU build-id", paths[i]);
		int has_dwarf = -1;
		size_t len = elf_file_build_id(paths[i], id, sizeof(id), &has_dwarf);
		cr_expect_eq(len, expected_len, "%s", paths[i]);
		cr_expect_arr_eq(id, expected, expected_len, "%s", paths[i]);
		cr_expect_eq(has_dwarf, i == 0, "%s", paths[i]);
	}
	int has_dwarf = -1;
	unsigned char id[64];
	cr_expect_eq(elf_file_build_id("tests/unit/debuginfod_test.c", id, sizeof(id), &has_dwarf), 0);
	cr_expect_eq(has_dwarf, 0);
	cr_expect_eq(elf_file_build_id("tests/unit", id, sizeof(id), &has_dwarf), 0, "a directory");
	cr_expect_eq(elf_file_build_id("/nonexistent/x", id, sizeof(id), &has_dwarf), 0);
	cr_expect_eq(elf_file_build_id(PIE, id, 8, &has_dwarf), 0, "an id longer than the buffer is none");
}

static unsigned char *read_whole(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	cr_assert_not_null(f, "%s is missing: build it with make", path);
	fseek(f, 0, SEEK_END);
	*size = (size_t)ftell(f);
	rewind(f);
	unsigned char *bytes = malloc(*size);
	cr_assert_eq(fread(bytes, 1, *size, f), *size);
	fclose(f);
	return bytes;
}

static size_t id_of_bytes(const char *scratch, const unsigned char *bytes, size_t size)
{
	FILE *f = fopen(scratch, "wb");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(bytes, 1, size, f), size);
	fclose(f);
	unsigned char id[64];
	int has_dwarf;
	size_t len = elf_file_build_id(scratch, id, sizeof(id), &has_dwarf);
	cr_assert(len <= sizeof(id));
	return len;
}

/* Cut at every byte of the headers and notes and every 1/64 after, and
 * bytes changed in the program and section headers and the notes: the
 * reader (under ASan) reads nothing outside what it allocated. */
Test(debuginfod, truncated_and_corrupted_module_files, .timeout = 60)
{
	size_t size;
	unsigned char *original = read_whole(PIE, &size);
	char scratch[] = "/tmp/debuginfod_test.XXXXXX";
	int fd = mkstemp(scratch);
	cr_assert(fd >= 0);
	close(fd);
	cr_expect_eq(id_of_bytes(scratch, original, size), 20);
	for (size_t cut = 0; cut < size; cut += cut < 2048 ? 1 : size / 64)
		id_of_bytes(scratch, original, cut);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)original;
	unsigned char *copy = malloc(size);
	unsigned long seed = 7;
	for (int round = 0; round < 600; round++) {
		memcpy(copy, original, size);
		seed = seed * 6364136223846793005ul + 1442695040888963407ul;
		/* the first 2 KiB hold the headers and notes; then the section table */
		size_t at = round % 2 ? (seed >> 33) % 2048 : eh->e_shoff + (seed >> 33) % (size - eh->e_shoff);
		copy[at] = (unsigned char)(seed >> 24);
		id_of_bytes(scratch, copy, size);
	}
	free(copy);
	free(original);
	unlink(scratch);
}

static void collect_note(const char *message, void *ctx)
{
	char **notes = ctx;
	size_t len = *notes ? strlen(*notes) : 0;
	*notes = realloc(*notes, len + strlen(message) + 2);
	sprintf(*notes + len, "%s\n", message);
}

static int library_loaded(void)
{
	void *lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (lib)
		dlclose(lib);
	return lib != NULL;
}

/* One request of the stripped program, none of which addr2line named. */
static const char *ask(const char *module, char **notes)
{
	struct symbolizer s;
	symbolizer_init(&s, collect_note, notes);
	struct sym_request r = { .module = "m", .path = module, .address = 0x1000 };
	const char *debug_file = debuginfod_debug_file(&s, module, &r, 1);
	symbolizer_free(&s);
	return debug_file;
}

Test(debuginfod, asks_only_with_urls_and_for_modules_without_dwarf)
{
	char *notes = NULL;
	unsetenv("DEBUGINFOD_URLS");
	cr_expect_null(ask(STRIPPED, &notes));
	setenv("DEBUGINFOD_URLS", "", 1);
	cr_expect_null(ask(STRIPPED, &notes));
	/* a server that cannot be there (port 1): only the note tells it was asked */
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	cr_expect_null(ask(PIE, &notes));
	cr_expect_null(notes, "%s", notes);
	cr_expect_not(library_loaded(), "loaded only when a server is asked");

	char cache[] = "/tmp/debuginfod_cache.XXXXXX";
	cr_assert(mkdtemp(cache));
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	cr_expect_null(ask(STRIPPED, &notes));
	cr_expect(notes && (strstr(notes, "debuginfod has no debug information for " STRIPPED) ||
			    strstr(notes, "libdebuginfod.so.1 (Debian: libdebuginfod1) could not be loaded")),
		  "%s", notes);
	free(notes);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache);
	cr_expect_eq(system(cmd), 0);
}
