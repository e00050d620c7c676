/* symbolize.c - turns code and data addresses of this process into names for splats.
 * Uses elfutils libdwfl (.symtab, so static functions too, and DWARF file:line),
 * dlopen()ed privately on first use; falls back to the loader's dladdr1() without it. */
#define _GNU_SOURCE
#include "symbolize.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <limits.h>
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
	int symbol_len;       /* printed part: no "@@GLIBC_2.2.5" version suffix */
	uintptr_t offset;     /* address - symbol start */
	uint64_t size;        /* symbol size */
	int type;             /* STT_FUNC, STT_OBJECT, ... */
	Dwfl_Module *dwfl_module; /* set when libdwfl resolved it: file:line possible */
};

static const char *module_basename(const char *path)
{
	if (path == NULL || path[0] == '\0')
		return NULL;
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* ---- libdw, loaded privately ------------------------------------------- */

/* dlopen()ed RTLD_LOCAL instead of linked, so the traced program never sees
 * libdw or its dependencies in its own symbol namespace and runs without it. */
#define LIBDW_FUNCTIONS(X) \
	X(dwfl_begin) X(dwfl_report_begin) X(dwfl_report_module) X(dwfl_report_end) \
	X(dwfl_linux_proc_find_elf) X(dwfl_build_id_find_debuginfo) \
	X(dwfl_offline_section_address) X(dwfl_addrmodule) X(dwfl_module_info) \
	X(dwfl_module_getelf) X(dwfl_module_build_id) X(dwfl_module_getsymtab) \
	X(dwfl_module_getsym_info) X(dwfl_module_getsrc) X(dwfl_lineinfo) \
	X(dwfl_line_comp_dir)

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
	/* Files by the path we report (regular files only, never devices).
	 * Separate debug files only by build-id on local disk, where Debian's
	 * -dbgsym/-dbg packages put them: dwfl_standard_find_debuginfo would end
	 * in debuginfod, i.e. libcurl loaded into the traced process and network
	 * I/O in the middle of a splat. */
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
 * on its first lookup and lookups bisect it. */
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
	size_t x_len = strcspn(x, "@"), y_len = strcspn(y, "@");
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

/* The symbol enclosing addr, found among the nearest ones starting at or
 * below it. A sizeless symbol (assembly without .size, linker labels like
 * __ehdr_start or _init) only names its own address: taken as reaching up
 * to addr it named PLT stubs and whole rodata ranges. NULL between symbols. */
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
	return nearest->start == addr ? nearest : NULL;
}

/* ---- per-module data ---------------------------------------------------- */

/* Ours, kept in the userdata slot of each Dwfl_Module. */
struct module_data {
	unsigned char build_id[64]; /* of the object as loaded; length 0: it has none */
	size_t build_id_len;
	enum { FILE_UNCHECKED, FILE_MATCHES, FILE_UNUSABLE } file;
	struct symbol_index *symbols; /* built on the first lookup */
};

static void **module_slot(Dwfl_Module *mod)
{
	void **slot = NULL;
	dw.dwfl_module_info(mod, &slot, NULL, NULL, NULL, NULL, NULL, NULL);
	return slot;
}

/* dwfl_report_end callback for unloaded objects. Despite the void * in the
 * prototype, libdwfl passes the address of the module's userdata slot (as
 * dwfl_getmodules does), not its value. */
static int forget_module(Dwfl_Module *mod, void *userdata_slot, const char *name,
			 Dwarf_Addr start, void *arg)
{
	(void)mod, (void)name, (void)start, (void)arg;
	void **slot = userdata_slot;
	struct module_data *data = *slot;
	if (data != NULL)
		free(data->symbols);
	free(data);
	*slot = NULL;
	return DWARF_CB_OK;
}

/* The module's data once its file is known to be the object that is mapped:
 * same build-id. A library upgraded or a program rebuilt since it was loaded
 * would otherwise name code with another binary's symbols; such modules, and
 * unreadable files, are left to dladdr. *bias gets the load bias. */
static struct module_data *usable_module(Dwfl_Module *mod, Dwarf_Addr *bias)
{
	void **slot = module_slot(mod);
	struct module_data *data = slot ? *slot : NULL;
	if (data == NULL || data->file == FILE_UNUSABLE)
		return NULL;
	if (dw.dwfl_module_getelf(mod, bias) == NULL) {
		data->file = FILE_UNUSABLE;
		return NULL;
	}
	if (data->file == FILE_UNCHECKED) {
		const unsigned char *bits = NULL;
		GElf_Addr where;
		int len = dw.dwfl_module_build_id(mod, &bits, &where);
		bool same = data->build_id_len == 0 ||
			    (len == (int)data->build_id_len &&
			     memcmp(bits, data->build_id, data->build_id_len) == 0);
		data->file = same ? FILE_MATCHES : FILE_UNUSABLE;
		if (!same)
			return NULL;
	}
	if (data->symbols == NULL)
		data->symbols = build_symbol_index(mod);
	return data;
}

/* ---- module list, from the dynamic loader ------------------------------ */

/* Reported from dl_iterate_phdr rather than /proc/self/maps: the maps also
 * list libelf's own mmap of each file we read, and dwfl_linux_proc_report
 * merges such a copy lying next to the library into one module with a wrong
 * load bias (seen: libm frames turned into bare addresses). */

/* dl_iterate_phdr's load/unload counters, as of the last module report. */
struct load_counters {
	unsigned long long adds, subs;
};
static struct load_counters reported_at;
static bool reported;

static void note_counters(const struct dl_phdr_info *info, size_t size,
			  struct load_counters *counters)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		counters->adds = info->dlpi_adds;
		counters->subs = info->dlpi_subs;
	}
}

static int read_load_counters(struct dl_phdr_info *info, size_t size, void *arg)
{
	note_counters(info, size, arg);
	return 1; /* the counters are global: the first object is enough */
}

/* A path libdwfl can open for a loaded object, NULL if none: the program
 * itself has no loader name; dlopen keeps "./x.so" relative, resolved here
 * against the current directory; the vDSO has no file ('/'-less name) and
 * is left to dladdr, which reads its dynamic symbols from memory. */
static const char *object_path(const char *loader_name, char path[PATH_MAX])
{
	if (loader_name == NULL)
		return NULL;
	if (loader_name[0] == '\0') {
		ssize_t len = readlink("/proc/self/exe", path, PATH_MAX - 1);
		if (len <= 0)
			return NULL;
		path[len] = '\0';
		return path;
	}
	if (loader_name[0] == '/')
		return loader_name;
	if (strchr(loader_name, '/') == NULL)
		return NULL;
	return realpath(loader_name, path);
}

/* The object's address range as libdwfl expects it: starting at the first
 * PT_LOAD rounded down to its alignment, from which libdwfl derives the bias. */
static bool object_span(const struct dl_phdr_info *info, uintptr_t *low, uintptr_t *high)
{
	bool found = false;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		if (!found) {
			uintptr_t align = ph->p_align > 1 ? ph->p_align : 1;
			*low = info->dlpi_addr + (ph->p_vaddr & -align);
			*high = end;
			found = true;
		} else if (end > *high) {
			*high = end;
		}
	}
	return found;
}

/* Whether [vaddr, vaddr + len) lies in the file-backed part of a PT_LOAD,
 * i.e. is mapped and readable. */
static bool is_loaded(const struct dl_phdr_info *info, ElfW(Addr) vaddr, size_t len)
{
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr &&
		    vaddr - ph->p_vaddr <= ph->p_filesz &&
		    len <= ph->p_filesz - (vaddr - ph->p_vaddr))
			return true;
	}
	return false;
}

static size_t align_up(size_t n, size_t align)
{
	return (n + align - 1) & ~(align - 1);
}

/* The GNU build-id of the object as loaded, read from its own memory. */
static size_t loaded_build_id(const struct dl_phdr_info *info, unsigned char *id, size_t size)
{
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE || !is_loaded(info, ph->p_vaddr, ph->p_filesz))
			continue;
		size_t align = ph->p_align == 8 ? 8 : 4;
		const unsigned char *note = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		size_t left = ph->p_filesz;
		while (left >= sizeof(ElfW(Nhdr))) {
			ElfW(Nhdr) nhdr;
			memcpy(&nhdr, note, sizeof nhdr);
			size_t desc_at = sizeof nhdr + align_up(nhdr.n_namesz, align);
			if (desc_at > left || nhdr.n_descsz > left - desc_at)
				break;
			if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
			    memcmp(note + sizeof nhdr, "GNU", 4) == 0 && nhdr.n_descsz <= size) {
				memcpy(id, note + desc_at, nhdr.n_descsz);
				return nhdr.n_descsz;
			}
			size_t next = desc_at + align_up(nhdr.n_descsz, align);
			if (next >= left)
				break;
			note += next;
			left -= next;
		}
	}
	return 0;
}

/* A module seen for the first time remembers the build-id it was loaded with;
 * one reported again (same path and range) keeps its data, ELF and DWARF. */
static void remember_loaded_object(Dwfl_Module *mod, const struct dl_phdr_info *info)
{
	void **slot = module_slot(mod);
	if (slot == NULL || *slot != NULL)
		return;
	struct module_data *data = calloc(1, sizeof *data);
	if (data == NULL)
		return;
	data->build_id_len = loaded_build_id(info, data->build_id, sizeof data->build_id);
	*slot = data;
}

static int report_loaded_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	note_counters(info, size, arg);
	char buf[PATH_MAX];
	const char *path = object_path(info->dlpi_name, buf);
	uintptr_t low = 0, high = 0;
	if (path == NULL || !object_span(info, &low, &high))
		return 0;
	Dwfl_Module *mod = dw.dwfl_report_module(session, path, low, high);
	if (mod != NULL)
		remember_loaded_object(mod, info);
	return 0;
}

/* The libdwfl session with an up-to-date module list, or NULL without libdw.
 * Reports the loaded objects again only when the loader's counters say one
 * came or went; dl_iterate_phdr holds the loader's lock during the report,
 * so the counters read with it match the list. */
static Dwfl *current_session(void)
{
	if (libdw_state == LIBDW_UNTRIED)
		libdw_state = libdw_load() ? LIBDW_READY : LIBDW_UNAVAILABLE;
	if (libdw_state != LIBDW_READY)
		return NULL;

	struct load_counters now = { 0, 0 };
	dl_iterate_phdr(read_load_counters, &now);
	if (reported && now.adds == reported_at.adds && now.subs == reported_at.subs)
		return session;

	dw.dwfl_report_begin(session);
	dl_iterate_phdr(report_loaded_object, &reported_at);
	dw.dwfl_report_end(session, forget_module, NULL);
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
	Dwarf_Addr start = 0, end = 0, bias = 0;
	const char *path = dw.dwfl_module_info(mod, NULL, &start, &end,
					       NULL, NULL, NULL, NULL);
	if (addr < start || addr >= end)
		return false;
	struct module_data *data = usable_module(mod, &bias);
	if (data == NULL)
		return false;

	site->module = module_basename(path);
	site->bias = bias;
	site->dwfl_module = mod;
	const struct symbol *sym = data->symbols ? find_symbol(data->symbols, addr) : NULL;
	if (sym != NULL) {
		site->symbol = sym->name;
		/* debug .symtab names carry symbol versions: noise in a splat */
		site->symbol_len = (int)strcspn(sym->name, "@");
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
		site->symbol_len = (int)strlen(info.dli_sname);
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
		out_printf(&o, "%.*s+0x%" PRIxPTR "/0x%" PRIx64 " [%s]", site.symbol_len,
			   site.symbol, site.offset + (pc - lookup), site.size, site.module);
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
	out_printf(&o, "%.*s", site.symbol_len, site.symbol);
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
		out_printf(&o, "%.*s", site.symbol_len, site.symbol);
	return o.len;
}
