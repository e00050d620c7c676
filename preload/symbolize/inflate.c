/* inflate.c - inflate.h by zlib: the whole stream in one inflate() call
 * with Z_FINISH into the whole output buffer, so zlib writes straight into it
 * and needs no window; its state comes from the caller's workspace through
 * zalloc/zfree, never from malloc (zlib's default). */
#define ZLIB_CONST
#include <limits.h>
#include <zlib.h>

#include "symbolize/inflate.h"
#include "runtime/tracer_arena.h"

enum { WORKSPACE_ALIGN = 16 };

/* zalloc: bump allocation in the workspace; Z_NULL when it is used up
 * (inflate() then fails with Z_MEM_ERROR: no fallback to malloc). */
static voidpf workspace_alloc(voidpf opaque, uInt items, uInt size)
{
	struct inflate_tables *t = opaque;
	if (size != 0 && items > INFLATE_WORKSPACE_SIZE / size)
		return Z_NULL;
	size_t n = ((size_t)items * size + WORKSPACE_ALIGN - 1) & ~(size_t)(WORKSPACE_ALIGN - 1);
	if (n > INFLATE_WORKSPACE_SIZE - t->used)
		return Z_NULL;
	voidpf block = t->workspace + t->used;
	t->used += n;
	return block;
}

/* zfree: nothing; the next stream starts the workspace over. */
static void workspace_free(voidpf opaque, voidpf block)
{
	(void)opaque;
	(void)block;
}

bool inflate_zlib(const unsigned char *in, size_t in_size, unsigned char *out, size_t out_size,
		  struct inflate_tables *tables)
{
	/* zlib counts in uInt; no section the symbolizer reads comes near 4 GiB */
	if (in == NULL || (out == NULL && out_size != 0) || in_size > UINT_MAX || out_size > UINT_MAX)
		return false;
	if (tables->workspace == NULL) {
		tables->workspace = tracer_pages_map(INFLATE_WORKSPACE_SIZE);
		if (tables->workspace == NULL)
			return false;
	}
	tables->used = 0;
	z_stream stream = {
		.next_in = in,
		.avail_in = (uInt)in_size,
		.zalloc = workspace_alloc,
		.zfree = workspace_free,
		.opaque = tables,
	};
	if (inflateInit(&stream) != Z_OK)
		return false;
	unsigned char none;   /* zlib wants a buffer even for no output */
	stream.next_out = out_size ? out : &none;
	stream.avail_out = (uInt)out_size;
	int status = inflate(&stream, Z_FINISH);
	bool ok = status == Z_STREAM_END && stream.total_out == out_size;
	inflateEnd(&stream);
	return ok;
}
