/* The definition of a symbol that comes after this object in load order,
 * found by reading the loaded objects' dynamic symbol tables directly.
 * For the wrappers the dynamic loader itself calls (free(), munmap()):
 * dlsym() from inside the loader's own error path (a failed dlsym() frees
 * its previous error through free()) overwrites the error state the outer
 * call is building, and the heap is corrupted. This lookup allocates
 * nothing, touches no dlerror state and takes only dl_iterate_phdr()'s
 * lock (recursive, and always taken after the loader's main lock). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include "base/next_symbol.h"

struct lookup {
	const char *name;
	uintptr_t self;       /* our load address */
	int past_self;
	void *found;
};

static uint32_t gnu_hash(const char *name)
{
	uint32_t h = 5381;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	return h;
}

static uint32_t sysv_hash(const char *name)
{
	uint32_t h = 0;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
		h = (h << 4) + *c;
		uint32_t g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

/* The dynamic section's value of tag, relocated when it is an address. */
static uintptr_t dynamic_value(const struct dl_phdr_info *info, const ElfW(Dyn) *dyn, ElfW(Sxword) tag)
{
	for (; dyn->d_tag != DT_NULL; dyn++)
		if (dyn->d_tag == tag) {
			uintptr_t v = dyn->d_un.d_ptr;
			/* the loader relocates these in place for most objects, not
			 * for all (the vDSO): below the base it is an offset */
			return v < info->dlpi_addr ? v + info->dlpi_addr : v;
		}
	return 0;
}

static int defines(const ElfW(Sym) *sym, const char *strtab, const char *name)
{
	unsigned bind = ELF64_ST_BIND(sym->st_info), type = ELF64_ST_TYPE(sym->st_info);
	return sym->st_shndx != SHN_UNDEF && sym->st_value != 0 &&
	       (bind == STB_GLOBAL || bind == STB_WEAK) && (type == STT_FUNC || type == STT_GNU_IFUNC) &&
	       strcmp(strtab + sym->st_name, name) == 0;
}

static const ElfW(Sym) *find_in_object(const struct dl_phdr_info *info, const char *name)
{
	const ElfW(Dyn) *dyn = NULL;
	for (size_t i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return NULL;
	const ElfW(Sym) *symtab = (const ElfW(Sym) *)dynamic_value(info, dyn, DT_SYMTAB);
	const char *strtab = (const char *)dynamic_value(info, dyn, DT_STRTAB);
	if (!symtab || !strtab)
		return NULL;
	const uint32_t *gnu = (const uint32_t *)dynamic_value(info, dyn, DT_GNU_HASH);
	if (gnu) {
		uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2];
		const ElfW(Addr) *bloom = (const ElfW(Addr) *)(gnu + 4);
		const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
		const uint32_t *chain = buckets + nbuckets;
		if (!nbuckets)
			return NULL;
		uint32_t h = gnu_hash(name);
		uint32_t i = buckets[h % nbuckets];
		if (i < symoffset)
			return NULL;
		for (;; i++) {
			uint32_t ch = chain[i - symoffset];
			if ((ch | 1) == (h | 1) && defines(&symtab[i], strtab, name))
				return &symtab[i];
			if (ch & 1)
				return NULL;
		}
	}
	const uint32_t *sysv = (const uint32_t *)dynamic_value(info, dyn, DT_HASH);
	if (sysv) {
		uint32_t nbucket = sysv[0];
		const uint32_t *bucket = sysv + 2, *chain = bucket + nbucket;
		if (!nbucket)
			return NULL;
		for (uint32_t i = bucket[sysv_hash(name) % nbucket]; i; i = chain[i])
			if (defines(&symtab[i], strtab, name))
				return &symtab[i];
	}
	return NULL;
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct lookup *l = arg;
	if (info->dlpi_addr == l->self) {
		l->past_self = 1;
		return 0;
	}
	if (!l->past_self)
		return 0;
	const ElfW(Sym) *sym = find_in_object(info, l->name);
	if (!sym)
		return 0;
	uintptr_t addr = info->dlpi_addr + sym->st_value;
	if (ELF64_ST_TYPE(sym->st_info) == STT_GNU_IFUNC)
		addr = ((uintptr_t (*)(void))addr)();
	l->found = (void *)addr;
	return 1;
}

void *next_symbol(const char *name)
{
	static uintptr_t self;
	if (!self) {
		Dl_info info;
		if (dladdr((void *)&next_symbol, &info))
			self = (uintptr_t)info.dli_fbase;
	}
	struct lookup l = { name, self, 0, NULL };
	dl_iterate_phdr(visit, &l);
	return l.found;
}
