/* module_list.c - loaded objects from dl_iterate_phdr, kept in a fixed table
 * and an address-sorted index; their files and tables read lazily. */
#define _GNU_SOURCE
#include "symbolize/module_list.h"

#include <limits.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "symbolize/debug_file.h"
#include "runtime/sandbox.h"

static struct module modules[MAX_MODULES];
/* the modules in use, sorted by low address, for lookups by bisection */
static struct module *by_address[MAX_MODULES];
static size_t module_count;

/* One decoder for every inflated section: reads are serialized. */
static struct inflate_tables inflate_tables;

/* dl_iterate_phdr's load/unload counters as of the last listing. */
static unsigned long long listed_adds, listed_subs;
static bool listed_once;
static bool relist_needed; /* set by module_list_forget_range */

/* readlink()/getcwd() results: PATH_MAX is too big for the stack. */
static char path_scratch[PATH_MAX];

/* ---- forgetting ---------------------------------------------------------- */

static void forget_module(struct module *m)
{
	elf_image_close(&m->object);
	elf_image_close(&m->debug);
	tracer_arena_release(&m->arena);
	memset(m, 0, sizeof *m);
}

/* Insertion sort: the table is small and re-sorted only after a listing. */
static void index_modules(void)
{
	module_count = 0;
	for (size_t i = 0; i < MAX_MODULES; i++) {
		if (!modules[i].in_use)
			continue;
		size_t at = module_count++;
		while (at > 0 && by_address[at - 1]->low > modules[i].low) {
			by_address[at] = by_address[at - 1];
			at--;
		}
		by_address[at] = &modules[i];
	}
}

/* ---- listing ------------------------------------------------------------- */

struct listing {
	unsigned long long adds, subs;
	bool counters_read;
	uintptr_t vdso; /* the vDSO's ELF header, 0 if none */
};

static void note_counters(const struct dl_phdr_info *info, size_t size, struct listing *listing)
{
	if (!listing->counters_read &&
	    size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		listing->adds = info->dlpi_adds;
		listing->subs = info->dlpi_subs;
		listing->counters_read = true;
	}
}

static int read_load_counters(struct dl_phdr_info *info, size_t size, void *arg)
{
	note_counters(info, size, arg);
	return 1; /* the counters are global: the first object is enough */
}

static size_t page_size(void)
{
	long size = sysconf(_SC_PAGESIZE);
	return size > 0 ? (size_t)size : 4096;
}

/* The object's extent in memory: its PT_LOAD segments, from the page the
 * lowest one starts in. */
static bool object_span(const struct dl_phdr_info *info, uintptr_t *low, uintptr_t *high)
{
	bool found = false;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t start = (info->dlpi_addr + ph->p_vaddr) & ~(page_size() - 1);
		uintptr_t end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		if (!found || start < *low)
			*low = start;
		if (!found || end > *high)
			*high = end;
		found = true;
	}
	return found && *low < *high;
}

/* Whether [vaddr, vaddr + len) lies in the file-backed, readable part of a
 * PT_LOAD, i.e. can be read in memory. */
static bool is_loaded(const struct dl_phdr_info *info, ElfW(Addr) vaddr, size_t len)
{
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && vaddr >= ph->p_vaddr &&
		    vaddr - ph->p_vaddr <= ph->p_filesz && len <= ph->p_filesz - (vaddr - ph->p_vaddr))
			return true;
	}
	return false;
}

/* The GNU build-id of the object as loaded, read from its own memory: the
 * file on disk may have been replaced since. */
static size_t loaded_build_id(const struct dl_phdr_info *info, unsigned char id[BUILD_ID_MAX])
{
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE || !is_loaded(info, ph->p_vaddr, ph->p_filesz))
			continue;
		const unsigned char *notes = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		size_t len = elf_notes_build_id(notes, ph->p_filesz, ph->p_align, id);
		if (len > 0)
			return len;
	}
	return 0;
}

/* The vDSO has no file, but the kernel maps its whole ELF image (section
 * headers included, within the last page) at AT_SYSINFO_EHDR. */
static void note_vdso_image(struct module *m, const struct dl_phdr_info *info, uintptr_t ehdr)
{
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && ph->p_offset == 0 && info->dlpi_addr + ph->p_vaddr == ehdr) {
			size_t page = page_size();
			m->vdso_image = (const void *)ehdr;
			m->vdso_image_size = (ph->p_filesz + page - 1) & ~(page - 1);
			return;
		}
	}
}

static const char *copy_string(struct tracer_arena *arena, const char *string)
{
	size_t len = strlen(string);
	char *copy = tracer_arena_alloc(arena, len + 1);
	if (copy != NULL)
		memcpy(copy, string, len + 1);
	return copy;
}

/* The absolute path of a loaded object's file, NULL if it has none. The
 * program itself has an empty loader name; dlopen keeps "./x.so" relative
 * (resolved against the current directory, which may have changed since:
 * the build-id check catches a wrong file). */
static const char *object_path(const char *loader_name)
{
	if (loader_name[0] == '\0') {
		ssize_t len = readlink("/proc/self/exe", path_scratch, sizeof path_scratch - 1);
		if (len <= 0)
			return NULL;
		path_scratch[len] = '\0';
		return path_scratch;
	}
	if (loader_name[0] == '/')
		return loader_name;
	if (strchr(loader_name, '/') == NULL || getcwd(path_scratch, sizeof path_scratch) == NULL)
		return NULL;
	while (strncmp(loader_name, "./", 2) == 0)
		loader_name += 2;
	size_t dir_len = strlen(path_scratch), name_len = strlen(loader_name);
	if (dir_len + 1 + name_len + 1 > sizeof path_scratch)
		return NULL;
	path_scratch[dir_len] = '/';
	memcpy(path_scratch + dir_len + 1, loader_name, name_len + 1);
	return path_scratch;
}

static struct module *listed_module(const struct dl_phdr_info *info, uintptr_t low, uintptr_t high,
				    const unsigned char *build_id, size_t build_id_len)
{
	for (size_t i = 0; i < MAX_MODULES; i++) {
		struct module *m = &modules[i];
		if (m->in_use && m->low == low && m->high == high && m->bias == info->dlpi_addr &&
		    m->build_id_len == build_id_len &&
		    memcmp(m->build_id, build_id, build_id_len) == 0 &&
		    strcmp(m->loader_name, info->dlpi_name) == 0)
			return m;
	}
	return NULL;
}

static struct module *free_slot(void)
{
	for (size_t i = 0; i < MAX_MODULES; i++)
		if (!modules[i].in_use)
			return &modules[i];
	return NULL; /* MAX_MODULES objects loaded: the rest print as addresses */
}

static void add_module(const struct dl_phdr_info *info, uintptr_t low, uintptr_t high,
		       const unsigned char *build_id, size_t build_id_len, uintptr_t vdso)
{
	struct module *m = free_slot();
	if (m == NULL)
		return;
	memset(m, 0, sizeof *m);
	m->low = low;
	m->high = high;
	m->bias = info->dlpi_addr;
	memcpy(m->build_id, build_id, build_id_len);
	m->build_id_len = build_id_len;
	m->loader_name = copy_string(&m->arena, info->dlpi_name);
	bool is_vdso = vdso != 0 && vdso >= low && vdso < high;
	const char *path = is_vdso ? NULL : object_path(info->dlpi_name);
	if (path != NULL)
		m->path = copy_string(&m->arena, path);
	if (is_vdso)
		note_vdso_image(m, info, vdso);
	const char *shown = m->path ? m->path : info->dlpi_name[0] ? m->loader_name : NULL;
	if (m->loader_name == NULL || shown == NULL) {
		forget_module(m); /* no name to print it by (or out of memory) */
		return;
	}
	const char *slash = strrchr(shown, '/');
	m->name = slash ? slash + 1 : shown;
	m->in_use = m->listed = true;
}

static int list_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct listing *listing = arg;
	note_counters(info, size, listing);
	uintptr_t low = 0, high = 0;
	if (info->dlpi_name == NULL || !object_span(info, &low, &high))
		return 0;
	unsigned char build_id[BUILD_ID_MAX];
	size_t build_id_len = loaded_build_id(info, build_id);
	struct module *m = listed_module(info, low, high, build_id, build_id_len);
	if (m != NULL)
		m->listed = true; /* still loaded: keeps its files and tables */
	else
		add_module(info, low, high, build_id, build_id_len, listing->vdso);
	return 0;
}

void module_list_refresh(void)
{
	struct listing now = { 0 };
	/* In a sandbox the list made before it stays: listing reads links
	 * and maps memory (sandbox.h). */
	if (listed_once && in_sandbox())
		return;
	dl_iterate_phdr(read_load_counters, &now);
	if (listed_once && !relist_needed && now.counters_read && now.adds == listed_adds &&
	    now.subs == listed_subs)
		return;

	for (size_t i = 0; i < MAX_MODULES; i++)
		modules[i].listed = false;
	/* dl_iterate_phdr holds the loader's lock during the walk, so the
	 * counters read in it match the list */
	struct listing listing = { .vdso = getauxval(AT_SYSINFO_EHDR) };
	dl_iterate_phdr(list_object, &listing);
	for (size_t i = 0; i < MAX_MODULES; i++)
		if (modules[i].in_use && !modules[i].listed)
			forget_module(&modules[i]);
	index_modules();
	listed_adds = listing.adds;
	listed_subs = listing.subs;
	listed_once = true;
	relist_needed = false;
}

void module_list_forget_range(uintptr_t lo, uintptr_t hi)
{
	for (size_t i = 0; i < MAX_MODULES; i++)
		if (modules[i].in_use && modules[i].low < hi && lo < modules[i].high)
			forget_module(&modules[i]);
	index_modules();
	relist_needed = true;
}

struct module *module_containing(uintptr_t address)
{
	module_list_refresh();
	size_t lo = 0, hi = module_count; /* the first module starting above */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (by_address[mid]->low <= address)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || address >= by_address[lo - 1]->high)
		return NULL;
	return by_address[lo - 1];
}

/* ---- reading a module's files -------------------------------------------- */

/* The object's file is used only when it is the object that is loaded (same
 * build-id): a library upgraded or a program rebuilt since it was loaded
 * would otherwise name code with another binary's symbols. */
static void open_files(struct module *m)
{
	if (m->files_tried)
		return;
	m->files_tried = true;
	if (m->vdso_image != NULL) {
		elf_image_from_memory(&m->object, m->vdso_image, m->vdso_image_size);
		return;
	}
	if (m->path != NULL && elf_image_map_file(&m->object, m->path) && m->build_id_len > 0) {
		unsigned char file_id[BUILD_ID_MAX];
		if (elf_build_id(&m->object, file_id) != m->build_id_len ||
		    memcmp(file_id, m->build_id, m->build_id_len) != 0)
			elf_image_close(&m->object);
	}
	debug_file_open(&m->debug, m->path, &m->object, m->build_id, m->build_id_len);
}

static bool read_symbols(struct module *m, const struct elf_image *image, uint32_t type)
{
	return image->bytes != NULL &&
	       symbol_table_read(&m->symbols, image, elf_section_of_type(image, type), &m->arena,
				 &inflate_tables);
}

const struct symbol_table *module_symbols(struct module *m)
{
	/* In a sandbox, only what was read before it (no file is opened) */
	if (!m->symbols_tried && !in_sandbox()) {
		m->symbols_tried = true;
		open_files(m);
		if (!read_symbols(m, &m->object, SHT_SYMTAB) && !read_symbols(m, &m->debug, SHT_SYMTAB))
			read_symbols(m, &m->object, SHT_DYNSYM);
	}
	return m->symbols.count > 0 ? &m->symbols : NULL;
}

static bool has_line_data(const struct elf_image *image)
{
	const Elf64_Shdr *section = image->bytes ? elf_section_named(image, ".debug_line") : NULL;
	return section != NULL && section->sh_type != SHT_NOBITS;
}

const struct line_table *module_lines(struct module *m)
{
	if (!m->lines_tried && !in_sandbox()) {
		m->lines_tried = true;
		open_files(m);
		const struct elf_image *image = has_line_data(&m->debug) ? &m->debug : &m->object;
		struct dwarf_source source = { image, &m->arena, &inflate_tables };
		if (has_line_data(image))
			line_table_build(&m->lines, &source, m->low - m->bias, m->high - m->bias);
	}
	return m->lines.sequence_count > 0 ? &m->lines : NULL;
}
