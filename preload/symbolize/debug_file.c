/* debug_file.c - candidate paths for an object's separate debug file, built in
 * one static buffer (the symbolizer's caller serializes every call). */
#include "symbolize/debug_file.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static char candidate[PATH_MAX];

static bool same_build_id(const struct elf_image *file, const unsigned char *id, size_t len)
{
	unsigned char file_id[BUILD_ID_MAX];
	return elf_build_id(file, file_id) == len && memcmp(file_id, id, len) == 0;
}

/* Maps candidate[] when it is the object's debug file. */
static bool try_candidate(struct elf_image *debug, const char *object_path,
			  const unsigned char *build_id, size_t build_id_len,
			  bool check_crc, uint32_t crc)
{
	if (object_path != NULL && strcmp(candidate, object_path) == 0)
		return false; /* a debuglink naming the object itself */
	if (!elf_image_map_file(debug, candidate))
		return false;
	bool matches = build_id_len > 0 ? same_build_id(debug, build_id, build_id_len)
					: !check_crc || elf_debuglink_crc(debug->bytes, debug->size) == crc;
	if (!matches)
		elf_image_close(debug);
	return matches;
}

/* /usr/lib/debug/.build-id/ab/cdef....debug */
static bool open_by_build_id(struct elf_image *debug, const unsigned char *id, size_t len)
{
	if (len < 2)
		return false;
	int at = snprintf(candidate, sizeof candidate, DEBUG_FILE_ROOT "/.build-id/%02x/", id[0]);
	for (size_t i = 1; i < len && at > 0 && (size_t)at + 3 < sizeof candidate; i++)
		at += snprintf(candidate + at, sizeof candidate - (size_t)at, "%02x", id[i]);
	if (at <= 0 || (size_t)at + sizeof ".debug" > sizeof candidate)
		return false;
	memcpy(candidate + at, ".debug", sizeof ".debug");
	return try_candidate(debug, NULL, id, len, false, 0);
}

static bool open_by_debuglink(struct elf_image *debug, const char *object_path,
			      const struct elf_image *object, const unsigned char *build_id,
			      size_t build_id_len)
{
	const char *name;
	uint32_t crc;
	if (object_path == NULL || object == NULL || object->bytes == NULL ||
	    !elf_debuglink(object, &name, &crc))
		return false;
	const char *slash = strrchr(object_path, '/');
	if (slash == NULL)
		return false;
	int dir_len = (int)(slash - object_path);
	/* next to the object, in its .debug/, under the debug root */
	static const char *const layouts[] = { "%.*s/%s", "%.*s/.debug/%s", DEBUG_FILE_ROOT "%.*s/%s" };
	for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
		int len = snprintf(candidate, sizeof candidate, layouts[i], dir_len, object_path, name);
		if (len > 0 && (size_t)len < sizeof candidate &&
		    try_candidate(debug, object_path, build_id, build_id_len, true, crc))
			return true;
	}
	return false;
}

bool debug_file_open(struct elf_image *debug, const char *object_path,
		     const struct elf_image *object, const unsigned char *build_id,
		     size_t build_id_len)
{
	*debug = (struct elf_image){ 0 };
	return open_by_build_id(debug, build_id, build_id_len) ||
	       open_by_debuglink(debug, object_path, object, build_id, build_id_len);
}
