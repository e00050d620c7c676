/* dlopen() with RTLD_DEEPBIND: the object loaded (and what it brings with
 * it) looks its symbols up in its own scope first, so its references to
 * pthread_mutex_lock() and the rest bind to libc's, past the preload: the
 * tracer would see a lock taken by the host and never its release in the
 * plugin (nfs-ganesha loads every FSAL so), and report locks held that are
 * not, and orders that do not exist.
 *
 * After such a load, every global offset table slot of the objects that
 * holds libc's definition of a function the tracer interposes (or an
 * unresolved lazy slot whose deep-bound answer would be libc's) is given
 * the tracer's wrapper, as the loader binds it without RTLD_DEEPBIND. A
 * definition of the object's own or of another library in its scope stays:
 * that is what RTLD_DEEPBIND is for. Slots in RELRO pages are written with
 * the page made writable for the time of the write.
 *
 * Only dlopen() calls with RTLD_DEEPBIND and a path with a '/' are the
 * wrapper's own calls: glibc looks a bare name up with its caller's
 * RUNPATH, and the caller of every other dlopen() stays the program's (a
 * tail call). What the object's constructors do during the load is not
 * seen, nor a bare-name RTLD_DEEPBIND load's calls (docs/limits.md). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "runtime/real_functions.h"
#include "runtime/sandbox.h"
#include "runtime/thread_state.h"

INTERPOSE(dlopen);

struct object_range {
	uintptr_t lo, hi;
};

static struct object_range range_of(const struct dl_phdr_info *info)
{
	struct object_range r = { UINTPTR_MAX, 0 };
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (lo < r.lo)
			r.lo = lo;
		if (lo + ph->p_memsz > r.hi)
			r.hi = lo + ph->p_memsz;
	}
	return r;
}

static int contains(struct object_range r, uintptr_t addr)
{
	return addr >= r.lo && addr < r.hi;
}

struct binding {
	void *handle;              /* the RTLD_DEEPBIND load: its scope's answers */
	void *self;                /* the tracer's own handle */
	struct object_range tracer, libc;
	size_t patched;
};

/* The tracer's wrapper for `name`, or NULL when it interposes no such
 * function (the handle's dependencies answer then, outside its range). */
static void *wrapper_of(struct binding *b, const char *name)
{
	void *f = dlsym(b->self, name);
	return f && contains(b->tracer, (uintptr_t)f) ? f : NULL;
}

/* The slot's new value, or NULL to leave it. */
static void *slot_target(struct binding *b, struct object_range object, const char *name, void *current)
{
	void *wrapper = wrapper_of(b, name);
	if (!wrapper || current == wrapper)
		return NULL;
	void *libc_def = dlsym(RTLD_NEXT, name);
	if (!libc_def)
		return NULL;
	if (current == libc_def)
		return wrapper;
	/* A lazy slot not yet bound points into its own object's PLT: bound
	 * now to what the deep-bound lookup would have given, if libc's. */
	if (contains(object, (uintptr_t)current) && dlsym(b->handle, name) == libc_def)
		return wrapper;
	return NULL;
}

/* The relocations [rela, rela + count) of one object: slots to write. */
static void bind_relocations(struct binding *b, const struct dl_phdr_info *info, const ElfW(Rela) *rela,
			     size_t count, const ElfW(Sym) *symtab, const char *strtab, struct object_range relro)
{
	struct object_range object = range_of(info);
	for (size_t i = 0; i < count; i++) {
		unsigned type = ELF64_R_TYPE(rela[i].r_info);
		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		const ElfW(Sym) *sym = &symtab[ELF64_R_SYM(rela[i].r_info)];
		if (!sym->st_name || ELF64_ST_TYPE(sym->st_info) == STT_OBJECT)
			continue;
		void **slot = (void **)(info->dlpi_addr + rela[i].r_offset);
		void *target = slot_target(b, object, strtab + sym->st_name, *slot);
		if (!target)
			continue;
		int in_relro = contains(relro, (uintptr_t)slot);
		uintptr_t page = (uintptr_t)slot & ~(uintptr_t)(getpagesize() - 1);
		if (in_relro && mprotect((void *)page, (size_t)getpagesize(), PROT_READ | PROT_WRITE))
			continue;
		__atomic_store_n(slot, target, __ATOMIC_RELEASE);
		if (in_relro)
			mprotect((void *)page, (size_t)getpagesize(), PROT_READ);
		b->patched++;
	}
}

/* d_ptr as the loader left it: relocated in place on x86-64 glibc, but
 * taken relative to the object's base when it is not. */
static uintptr_t dynamic_address(const struct dl_phdr_info *info, ElfW(Addr) ptr)
{
	return ptr < info->dlpi_addr ? info->dlpi_addr + ptr : ptr;
}

static int bind_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct binding *b = arg;
	struct object_range object = range_of(info);
	/* Not the tracer, not libc (its own calls to what it defines) nor the
	 * loader, not the vDSO. */
	if (contains(object, b->tracer.lo) || contains(object, b->libc.lo) || !info->dlpi_name ||
	    !info->dlpi_name[0] || strstr(info->dlpi_name, "/ld-linux") || strstr(info->dlpi_name, "linux-vdso"))
		return 0;
	const ElfW(Dyn) *dyn = NULL;
	struct object_range relro = { 0, 0 };
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		else if (ph->p_type == PT_GNU_RELRO)
			relro = (struct object_range){ info->dlpi_addr + ph->p_vaddr,
						       info->dlpi_addr + ph->p_vaddr + ph->p_memsz };
	}
	if (!dyn)
		return 0;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	size_t jmprel_size = 0, rela_size = 0;
	int plt_is_rela = 1;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: symtab = (const ElfW(Sym) *)dynamic_address(info, dyn->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const char *)dynamic_address(info, dyn->d_un.d_ptr); break;
		case DT_JMPREL: jmprel = (const ElfW(Rela) *)dynamic_address(info, dyn->d_un.d_ptr); break;
		case DT_PLTRELSZ: jmprel_size = dyn->d_un.d_val; break;
		case DT_PLTREL: plt_is_rela = dyn->d_un.d_val == DT_RELA; break;
		case DT_RELA: rela = (const ElfW(Rela) *)dynamic_address(info, dyn->d_un.d_ptr); break;
		case DT_RELASZ: rela_size = dyn->d_un.d_val; break;
		default: break;
		}
	}
	if (!symtab || !strtab)
		return 0;
	if (jmprel && plt_is_rela)
		bind_relocations(b, info, jmprel, jmprel_size / sizeof(ElfW(Rela)), symtab, strtab, relro);
	if (rela)
		bind_relocations(b, info, rela, rela_size / sizeof(ElfW(Rela)), symtab, strtab, relro);
	return 0;
}

static int find_range_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct object_range *want = arg;   /* in: lo = an address of the object */
	struct object_range r = range_of(info);
	if (!contains(r, want->lo))
		return 0;
	*want = r;
	return 1;
}

static struct object_range object_containing(uintptr_t addr)
{
	struct object_range r = { addr, 0 };
	if (!dl_iterate_phdr(find_range_of, &r))
		r = (struct object_range){ 0, 0 };
	return r;
}

static void bind_to_tracer(void *handle)
{
	Dl_info self;
	if (!dladdr((void *)&bind_to_tracer, &self) || !self.dli_fname)
		return;
	struct binding b = { .handle = handle };
	b.self = REAL(dlopen)(self.dli_fname, RTLD_NOW | RTLD_NOLOAD);
	if (!b.self)
		return;
	b.tracer = object_containing((uintptr_t)&bind_to_tracer);
	b.libc = object_containing((uintptr_t)&getpid);
	if (b.tracer.hi && b.libc.hi)
		dl_iterate_phdr(bind_object, &b);
	dlclose(b.self);
}

void *dlopen(const char *file, int mode)
{
	struct thread_state *ts = thread_state();
	if (!(mode & RTLD_DEEPBIND) || !file || !strchr(file, '/') || ts->in_tracer || in_sandbox())
		return REAL(dlopen)(file, mode);   /* a tail call: the program stays the caller */
	void *handle = REAL(dlopen)(file, mode);
	if (handle) {
		int saved_errno = errno;
		tracer_enter(ts);
		bind_to_tracer(handle);
		tracer_leave(ts);
		dlerror();   /* a lookup of ours that found nothing is not the program's error */
		errno = saved_errno;
	}
	return handle;
}
