/* symbolize.c - turns code and data addresses of this process into names for splats.
 * Uses elfutils libdwfl (.symtab, so static functions too, and DWARF file:line),
 * dlopen()ed privately on first use; falls back to the loader's dladdr1() without it. */
#define _GNU_SOURCE
#include "symbolize.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

__attribute__((format(printf, 2, 3)))
static void out_printf(struct out *o, const char *fmt, ...)
{
	if (o->len + 1 >= o->size)
		return;
	size_t room = o->size - o->len;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(o->buf + o->len, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		o->buf[o->len] = '\0';
	else
		o->len += (size_t)n < room ? (size_t)n : room - 1;
}

/* ---- what we know about one address ------------------------------------ */

/* Filled by a resolver; the strings belong to libdw or the loader and stay
 * valid until the next module refresh, i.e. for the current call. */
struct site {
	const char *module;   /* basename of the mapped object; NULL: none maps it */
	uintptr_t bias;       /* load bias: address - bias is the ELF file address */
	const char *symbol;   /* NULL when no symbol covers the address */
	uintptr_t offset;     /* address - symbol start */
	uint64_t size;        /* symbol size */
	int type;             /* STT_FUNC, STT_OBJECT, ... */
	Dwfl_Module *dwfl_module; /* set when libdwfl resolved it: file:line possible */
};

static const char *module_basename(const char *path)
{
	if (path == NULL || path[0] == '\0')
		return NULL;
	/* libdwfl names the vDSO "[vdso: <pid>]"; the pid is noise in a splat. */
	if (strncmp(path, "[vdso", 5) == 0)
		return "vdso";
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* ---- libdw, loaded privately ------------------------------------------- */

/* dlopen()ed RTLD_LOCAL instead of linked, so the traced program never sees
 * libdw or its dependencies in its own symbol namespace and runs without it. */
#define LIBDW_FUNCTIONS(X) \
	X(dwfl_begin) X(dwfl_report_begin) X(dwfl_report_end) \
	X(dwfl_linux_proc_report) X(dwfl_linux_proc_find_elf) \
	X(dwfl_build_id_find_debuginfo) X(dwfl_offline_section_address) \
	X(dwfl_addrmodule) X(dwfl_module_info) X(dwfl_module_getelf) \
	X(dwfl_module_getsymtab) X(dwfl_module_getsym_info) \
	X(dwfl_module_getsrc) X(dwfl_lineinfo) X(dwfl_line_comp_dir)

static struct {
#define DECLARE_POINTER(fn) __typeof__(fn) *fn;
	LIBDW_FUNCTIONS(DECLARE_POINTER)
#undef DECLARE_POINTER
} dw;

static enum { LIBDW_UNTRIED, LIBDW_READY, LIBDW_UNAVAILABLE } libdw_state;
static Dwfl *session;
static Dwfl_Callbacks callbacks;
static char *debuginfo_path; /* NULL: libdw's default, ":.debug:/usr/lib/debug" */

static bool libdw_load(void)
{
	void *handle = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (handle == NULL) {
		dlerror(); /* so the program's next dlerror() isn't ours */
		return false;
	}
	bool complete = true;
#define RESOLVE(fn) \
	dw.fn = (__typeof__(dw.fn))dlsym(handle, #fn); \
	complete = complete && dw.fn != NULL;
	LIBDW_FUNCTIONS(RESOLVE)
#undef RESOLVE
	if (!complete) {
		dlerror();
		dlclose(handle);
		return false;
	}
	/* Separate debug files only by build-id on local disk (where Debian's
	 * -dbgsym/-dbg packages put them). dwfl_standard_find_debuginfo would end
	 * in debuginfod: libcurl loaded into the traced process, network I/O in
	 * the middle of a splat. */
	callbacks.find_elf = dw.dwfl_linux_proc_find_elf;
	callbacks.find_debuginfo = dw.dwfl_build_id_find_debuginfo;
	callbacks.section_address = dw.dwfl_offline_section_address;
	callbacks.debuginfo_path = &debuginfo_path;
	session = dw.dwfl_begin(&callbacks);
	return session != NULL;
}

/* ---- per-module symbol index ------------------------------------------- */

/* dwfl_module_addrinfo scans the whole symbol table on every call (270 us for
 * libc's 10k-symbol .symtab from libc6-dbg), so each module gets a sorted copy
 * on its first lookup, kept in the module's userdata, and lookups bisect it. */
struct symbol {
	uintptr_t start;
	uint64_t size;
	const char *name;     /* in the module's ELF: lives as long as the module */
	unsigned char type;   /* STT_* */
	unsigned char rank;   /* among aliases at one address, higher wins */
};

struct symbol_index {
	size_t count;
	struct symbol symbols[];
};

/* How many symbols below the nearest one may still enclose an address: only
 * labels inside a function or object put symbols between, and they are few. */
enum { ENCLOSING_SCAN = 16 };

/* Among aliases prefer a sized symbol, then global over weak over local:
 * the exported name is the one people search the source for. */
static unsigned char symbol_rank(const GElf_Sym *sym)
{
	unsigned char rank = sym->st_size ? 4 : 0;
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return rank + 2;
	case STB_WEAK:
		return rank + 1;
	default:
		return rank;
	}
}

static bool names_code_or_data(const GElf_Sym *sym, GElf_Word shndx)
{
	if (shndx == SHN_UNDEF || shndx == SHN_ABS)
		return false;
	switch (GELF_ST_TYPE(sym->st_info)) {
	case STT_FUNC:
	case STT_GNU_IFUNC:
	case STT_OBJECT:
	case STT_COMMON:
	case STT_NOTYPE:
		return true;
	default: /* sections, files, and TLS symbols, whose values are offsets */
		return false;
	}
}

/* Then, for equal rank, the plainer name: "pthread_mutex_lock" over
 * "__pthread_mutex_lock", "frexp" over "frexpf64"; strcmp keeps it stable. */
static int plainer_name(const char *x, const char *y)
{
	size_t x_underscores = strspn(x, "_"), y_underscores = strspn(y, "_");
	if (x_underscores != y_underscores)
		return x_underscores < y_underscores ? 1 : -1;
	size_t x_len = strlen(x), y_len = strlen(y);
	if (x_len != y_len)
		return x_len < y_len ? 1 : -1;
	return strcmp(y, x);
}

/* Sorted by start; aliases in rising preference, so a backward walk from
 * the nearest start meets the preferred alias first. */
static int by_start_then_preference(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return (int)x->rank - (int)y->rank;
	return plainer_name(x->name, y->name);
}

static struct symbol_index *build_symbol_index(Dwfl_Module *mod)
{
	int total = dw.dwfl_module_getsymtab(mod); /* .symtab, else .dynsym */
	size_t room = total > 0 ? (size_t)total : 0;
	struct symbol_index *index = malloc(sizeof *index + room * sizeof index->symbols[0]);
	if (index == NULL)
		return NULL;
	index->count = 0;
	for (int i = 0; i < total; i++) {
		GElf_Sym sym;
		GElf_Addr start;
		GElf_Word shndx;
		const char *name = dw.dwfl_module_getsym_info(mod, i, &sym, &start,
							      &shndx, NULL, NULL);
		if (name == NULL || name[0] == '\0' || !names_code_or_data(&sym, shndx))
			continue;
		index->symbols[index->count++] = (struct symbol){
			.start = start, .size = sym.st_size, .name = name,
			.type = GELF_ST_TYPE(sym.st_info), .rank = symbol_rank(&sym),
		};
	}
	qsort(index->symbols, index->count, sizeof index->symbols[0], by_start_then_preference);
	return index;
}

static const struct symbol_index *module_symbols(Dwfl_Module *mod)
{
	void **userdata = NULL;
	dw.dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (userdata == NULL)
		return NULL;
	if (*userdata == NULL)
		*userdata = build_symbol_index(mod);
	return *userdata;
}

/* dwfl_report_end callback for unmapped modules: drop their index. Despite
 * the void * in the prototype, libdwfl passes the address of the module's
 * userdata slot (as dwfl_getmodules does), not its value. */
static int forget_module(Dwfl_Module *mod, void *userdata_slot, const char *name,
			 Dwarf_Addr start, void *arg)
{
	(void)mod, (void)name, (void)start, (void)arg;
	void **userdata = userdata_slot;
	free(*userdata);
	*userdata = NULL;
	return DWARF_CB_OK;
}

/* The symbol enclosing addr, found among the nearest ones starting at or
 * below it; a sizeless nearest symbol (assembly without .size) is taken as
 * is, like libdwfl does. NULL when addr falls between symbols. */
static const struct symbol *find_symbol(const struct symbol_index *index, uintptr_t addr)
{
	size_t lo = 0, hi = index->count; /* find the first symbol above addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (index->symbols[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	for (size_t i = lo; i > 0 && lo - i < ENCLOSING_SCAN; i--) {
		const struct symbol *sym = &index->symbols[i - 1];
		if (addr - sym->start < sym->size)
			return sym;
	}
	const struct symbol *nearest = &index->symbols[lo - 1];
	return nearest->size == 0 ? nearest : NULL;
}

/* ---- module list -------------------------------------------------------- */

/* dl_iterate_phdr's load/unload counters at the last module report. */
struct load_counters {
	unsigned long long adds, subs;
};
static struct load_counters reported_at;
static bool reported;

static int read_load_counters(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct load_counters *now = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		now->adds = info->dlpi_adds;
		now->subs = info->dlpi_subs;
	}
	return 1; /* the counters are global: the first object is enough */
}

/* The libdwfl session with an up-to-date module list, or NULL without libdw.
 * Re-reads /proc/self/maps only when the loader's counters say a library came
 * or went; unchanged modules keep their parsed ELF and DWARF across reports. */
static Dwfl *current_session(void)
{
	if (libdw_state == LIBDW_UNTRIED)
		libdw_state = libdw_load() ? LIBDW_READY : LIBDW_UNAVAILABLE;
	if (libdw_state != LIBDW_READY)
		return NULL;

	/* Counters first, maps second: a dlopen racing in between bumps the
	 * counters again and is picked up by the next call. */
	struct load_counters now = { 0, 0 };
	dl_iterate_phdr(read_load_counters, &now);
	if (reported && now.adds == reported_at.adds && now.subs == reported_at.subs)
		return session;

	dw.dwfl_report_begin(session);
	/* A failure (no /proc) leaves modules unreported; dladdr covers those. */
	dw.dwfl_linux_proc_report(session, getpid());
	dw.dwfl_report_end(session, forget_module, NULL);
	reported_at = now;
	reported = true;
	return session;
}

/* ---- resolvers ---------------------------------------------------------- */

static bool resolve_with_dwfl(uintptr_t addr, struct site *site)
{
	Dwfl *dwfl = current_session();
	if (dwfl == NULL)
		return false;
	Dwfl_Module *mod = dw.dwfl_addrmodule(dwfl, addr);
	if (mod == NULL)
		return false;
	/* dwfl_addrmodule answers the highest module for any address above it
	 * (seen with 0xffff...fe -> ld.so), so check the module's own range. */
	Dwarf_Addr start = 0, end = 0;
	const char *path = dw.dwfl_module_info(mod, NULL, &start, &end,
					       NULL, NULL, NULL, NULL);
	if (addr < start || addr >= end)
		return false;

	site->module = module_basename(path);
	site->dwfl_module = mod;
	Dwarf_Addr bias;
	site->bias = dw.dwfl_module_getelf(mod, &bias) ? bias : start;

	const struct symbol_index *index = module_symbols(mod);
	const struct symbol *sym = index ? find_symbol(index, addr) : NULL;
	if (sym != NULL) {
		site->symbol = sym->name;
		site->offset = addr - sym->start;
		site->size = sym->size;
		site->type = sym->type;
	}
	return true;
}

/* Loader view: only objects it loaded and only their dynamic symbols. */
static void resolve_with_dladdr(uintptr_t addr, struct site *site)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (!dladdr1((void *)addr, &info, (void **)&sym, RTLD_DL_SYMENT))
		return;
	site->module = module_basename(info.dli_fname);
	struct link_map *map = NULL;
	if (dladdr1((void *)addr, &info, (void **)&map, RTLD_DL_LINKMAP) && map)
		site->bias = map->l_addr;
	else
		site->bias = (uintptr_t)info.dli_fbase;
	if (info.dli_sname != NULL && info.dli_saddr != NULL && sym != NULL) {
		site->symbol = info.dli_sname;
		site->offset = addr - (uintptr_t)info.dli_saddr;
		site->size = sym->st_size;
		site->type = GELF_ST_TYPE(sym->st_info);
	}
}

static void resolve(uintptr_t addr, struct site *site)
{
	memset(site, 0, sizeof *site);
	if (!resolve_with_dwfl(addr, site))
		resolve_with_dladdr(addr, site);
}

/* " file:line" from DWARF, the path made relative to the compilation directory
 * (like the kernel's paths relative to its tree) when it lies below it. */
static void append_source_line(struct out *o, const struct site *site, uintptr_t addr)
{
	if (site->dwfl_module == NULL)
		return;
	Dwfl_Line *line = dw.dwfl_module_getsrc(site->dwfl_module, addr);
	if (line == NULL)
		return;
	int lineno = 0;
	const char *file = dw.dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	if (file == NULL || lineno <= 0)
		return;
	const char *comp_dir = dw.dwfl_line_comp_dir(line);
	size_t dir_len = comp_dir ? strlen(comp_dir) : 0;
	if (dir_len > 0 && strncmp(file, comp_dir, dir_len) == 0 && file[dir_len] == '/')
		file += dir_len + 1;
	out_printf(o, " %s:%d", file, lineno);
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
	if (site.symbol != NULL && site.module != NULL) {
		out_printf(&o, "%s+0x%" PRIxPTR "/0x%" PRIx64 " [%s]", site.symbol,
			   site.offset + (pc - lookup), site.size, site.module);
		append_source_line(&o, &site, lookup);
	} else if (site.module != NULL) {
		out_printf(&o, "0x%" PRIxPTR " [%s+0x%" PRIxPTR "]", pc, site.module,
			   pc - site.bias);
	} else {
		out_printf(&o, "0x%" PRIxPTR, pc);
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
	bool is_object = site.type == STT_OBJECT || site.type == STT_COMMON;
	if (site.symbol == NULL || !is_object || site.offset >= site.size)
		return o.len;
	out_printf(&o, "%s", site.symbol);
	if (site.offset != 0)
		out_printf(&o, "+0x%" PRIxPTR, site.offset);
	return o.len;
}

size_t symbolize_function(uintptr_t pc, char *buf, size_t size)
{
	struct out o;
	out_init(&o, buf, size);
	struct site site;
	resolve(call_site(pc), &site);
	if (site.symbol != NULL)
		out_printf(&o, "%s", site.symbol);
	return o.len;
}
