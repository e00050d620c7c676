/* symbolize.c - turns code and data addresses of this process into the names,
 * module+offsets and file:lines of splats, from the module list's ELF symbols
 * and DWARF line tables. Formatting only (no stdio: digits are ours), the
 * reading is in module_list.c. */
#define _GNU_SOURCE
#include "symbolize/symbolize.h"

#include <elf.h>
#include <stdbool.h>
#include <string.h>

#include "symbolize/demangle.h"
#include "symbolize/dwarf_line.h"
#include "symbolize/module_list.h"
#include "symbolize/symbol_table.h"

/* ---- bounded output ---------------------------------------------------- */

/* A splat line being built: never overruns, always NUL-terminated. */
struct out {
	char *buf;
	size_t size;
	size_t len;
};

static void out_init(struct out *o, char *buf, size_t size)
{
	o->buf = buf;
	o->size = buf ? size : 0;
	o->len = 0;
	if (o->size)
		buf[0] = '\0';
}

static void out_append(struct out *o, const char *text, size_t len)
{
	if (o->size == 0)
		return;
	size_t room = o->size - 1 - o->len;
	if (len > room)
		len = room;
	memcpy(o->buf + o->len, text, len);
	o->len += len;
	o->buf[o->len] = '\0';
}

/* A symbol's name as reports print it: a C++ one demangled (demangle.h),
 * on the stack (512 bytes: names past that are left mangled). */
static void out_symbol_name(struct out *o, const struct symbol *sym)
{
	char name[512];
	size_t n = sym->name_length < 3 ? 0 : demangle_name(sym->name, sym->name_length, name, sizeof(name));
	if (n && n < sizeof(name) - 1)
		out_append(o, name, n);
	else
		out_append(o, sym->name, sym->name_length);
}

static void out_string(struct out *o, const char *text)
{
	out_append(o, text, strlen(text));
}

/* "0x" and lowercase hex digits, as printf's "0x%lx" (the hot path keeps
 * clear of vsnprintf: it costs more than the whole lookup). */
static void out_hex(struct out *o, uint64_t value)
{
	char digits[2 + 16];
	size_t at = sizeof digits;
	do {
		digits[--at] = "0123456789abcdef"[value & 15];
		value >>= 4;
	} while (value != 0);
	digits[--at] = 'x';
	digits[--at] = '0';
	out_append(o, digits + at, sizeof digits - at);
}

static void out_decimal(struct out *o, uint64_t value)
{
	char digits[20];
	size_t at = sizeof digits;
	do {
		digits[--at] = (char)('0' + value % 10);
		value /= 10;
	} while (value != 0);
	out_append(o, digits + at, sizeof digits - at);
}

/* ---- what we know about one address ------------------------------------ */

struct site {
	struct module *module;       /* NULL: no loaded object maps the address */
	const struct symbol *symbol; /* NULL when no symbol covers it */
	uintptr_t offset;            /* address - symbol start */
};

static void resolve(uintptr_t addr, struct site *site)
{
	*site = (struct site){ NULL, NULL, 0 };
	site->module = module_containing(addr);
	if (site->module == NULL)
		return;
	const struct symbol_table *symbols = module_symbols(site->module);
	uint64_t file_address = addr - site->module->bias;
	site->symbol = symbols ? symbol_table_find(symbols, file_address) : NULL;
	if (site->symbol != NULL)
		site->offset = file_address - site->symbol->start;
}

/* ---- source file and line ----------------------------------------------- */

/* The path libdw gives for a line table file is name when absolute, else
 * dir/name: as pieces, so it is never copied into a PATH_MAX buffer. */
struct source_path {
	const char *pieces[3];
	size_t count;
};

static struct source_path source_path(const struct line_file *file)
{
	if (file->name[0] == '/' || file->dir == NULL)
		return (struct source_path){ { file->name }, 1 };
	return (struct source_path){ { file->dir, "/", file->name }, 3 };
}

/* How many leading characters of the path are "comp_dir/": the kernel prints
 * paths relative to its tree, we relative to the compilation directory when
 * the file lies below it. 0 when it does not. */
static size_t comp_dir_prefix(const struct source_path *path, const char *comp_dir)
{
	if (comp_dir == NULL || comp_dir[0] == '\0')
		return 0;
	size_t piece = 0, at = 0, matched = 0;
	for (const char *c = comp_dir;; c++) {
		while (piece < path->count && path->pieces[piece][at] == '\0') {
			piece++;
			at = 0;
		}
		if (piece == path->count)
			return 0;
		char expected = *c ? *c : '/';
		if (path->pieces[piece][at] != expected)
			return 0;
		at++;
		matched++;
		if (*c == '\0')
			return matched;
	}
}

static void print_source_path(struct out *o, const struct source_path *path, size_t skip)
{
	for (size_t i = 0; i < path->count; i++) {
		const char *piece = path->pieces[i];
		size_t len = strlen(piece);
		size_t skipped = skip < len ? skip : len;
		skip -= skipped;
		out_string(o, piece + skipped);
	}
}

/* file:line of an exact code address, false when unknown. */
static bool source_location(struct module *module, uintptr_t addr,
			    struct line_location *location)
{
	const struct line_table *lines = module ? module_lines(module) : NULL;
	return lines != NULL && line_table_find(lines, addr - module->bias, location);
}

/* The file relative to its compilation directory when it lies below it. */
static void print_source_file(struct out *o, const struct line_location *location)
{
	struct source_path path = source_path(location->file);
	print_source_path(o, &path, comp_dir_prefix(&path, location->comp_dir));
}

/* ---- public functions --------------------------------------------------- */

/* The call instruction ends right before the return address; its last byte is
 * in the calling function even when the call was the function's last one. */
static uintptr_t call_site(uintptr_t return_address)
{
	return return_address ? return_address - 1 : 0;
}

/* Prints pc but resolves lookup (pc, or pc - 1 for return addresses). */
static size_t format_code(uintptr_t pc, uintptr_t lookup, char *buf, size_t size)
{
	struct out o;
	out_init(&o, buf, size);
	struct site site;
	resolve(lookup, &site);
	if (site.symbol != NULL) {
		out_symbol_name(&o, site.symbol);
		out_append(&o, "+", 1);
		out_hex(&o, site.offset + (pc - lookup));
		out_append(&o, "/", 1);
		out_hex(&o, site.symbol->size);
		out_append(&o, " [", 2);
		out_string(&o, site.module->name);
		out_append(&o, "]", 1);
		struct line_location location;
		if (source_location(site.module, lookup, &location)) {
			out_append(&o, " ", 1);
			print_source_file(&o, &location);
			out_append(&o, ":", 1);
			out_decimal(&o, location.line);
		}
	} else if (site.module != NULL) {
		out_hex(&o, pc);
		out_append(&o, " [", 2);
		out_string(&o, site.module->name);
		out_append(&o, "+", 1);
		out_hex(&o, pc - site.module->bias);
		out_append(&o, "]", 1);
	} else {
		out_hex(&o, pc);
	}
	return o.len;
}

size_t symbolize_code(uintptr_t pc, char *buf, size_t size)
{
	return format_code(pc, call_site(pc), buf, size);
}

size_t symbolize_code_exact(uintptr_t pc, char *buf, size_t size)
{
	return format_code(pc, pc, buf, size);
}

size_t symbolize_data(uintptr_t addr, char *buf, size_t size)
{
	struct out o;
	out_init(&o, buf, size);
	struct site site;
	resolve(addr, &site);
	/* Only a sized data object that really contains addr: a nearby label or
	 * function must not give a heap or stack address a name. */
	const struct symbol *sym = site.symbol;
	if (sym == NULL || (sym->type != STT_OBJECT && sym->type != STT_COMMON) ||
	    site.offset >= sym->size)
		return o.len;
	out_symbol_name(&o, sym);
	if (site.offset != 0) {
		out_append(&o, "+", 1);
		out_hex(&o, site.offset);
	}
	return o.len;
}

size_t symbolize_function(uintptr_t pc, char *buf, size_t size)
{
	struct out o;
	out_init(&o, buf, size);
	struct site site;
	resolve(call_site(pc), &site);
	if (site.symbol != NULL)
		out_symbol_name(&o, site.symbol);
	return o.len;
}

int symbolize_source(uintptr_t addr, char *file, size_t size, int *line)
{
	struct out o;
	out_init(&o, file, size);
	if (line != NULL)
		*line = 0;
	struct line_location location;
	if (!source_location(module_containing(addr), addr, &location))
		return 0;
	print_source_file(&o, &location);
	if (line != NULL)
		*line = (int)location.line;
	return 1;
}

uintptr_t symbolize_function_start(uintptr_t pc)
{
	struct site site;
	resolve(call_site(pc), &site);
	const struct symbol *sym = site.symbol;
	if (sym == NULL || sym->type == STT_OBJECT || sym->type == STT_COMMON)
		return 0;
	return site.module->bias + sym->start;
}

int symbolize_module(uintptr_t addr, char *path, size_t size, uintptr_t *file_offset)
{
	struct out o;
	out_init(&o, path, size);
	struct module *module = module_containing(addr);
	if (module == NULL || module->path == NULL || strlen(module->path) >= size)
		return 0;
	out_string(&o, module->path);
	if (file_offset != NULL)
		*file_offset = addr - module->bias;
	return 1;
}

void symbolize_forget_range(uintptr_t lo, uintptr_t hi)
{
	module_list_forget_range(lo, hi);
}

void symbolize_warm_up(void)
{
	module_list_refresh();
}
