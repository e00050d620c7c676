/* symbol_table.c - reads an ELF symbol table, keeps what can name code or data,
 * and orders aliases so the name people search the source for wins. */
#include "symbolize/symbol_table.h"

#include <string.h>

#include "base/tracer_sort.h"

/* How many symbols below the nearest one may still enclose an address: only
 * labels inside a function or object put symbols between, and they are few. */
enum { ENCLOSING_SCAN = 16 };

/* Among aliases prefer a sized symbol, then global over weak over local:
 * the exported name is the one people search the source for. */
static unsigned char symbol_rank(const Elf64_Sym *sym)
{
	unsigned char rank = sym->st_size ? 4 : 0;
	switch (ELF64_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return rank + 2;
	case STB_WEAK:
		return rank + 1;
	default:
		return rank;
	}
}

static bool names_code_or_data(const Elf64_Sym *sym, const struct elf_image *image)
{
	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx == SHN_ABS)
		return false;
	/* A symbol in a section that is not loaded (libc's .gnu.warning.gets)
	 * has a value that is no address: it would name the ELF header. */
	const Elf64_Shdr *section = sym->st_shndx < SHN_LORESERVE
					    ? elf_section_at(image, sym->st_shndx) : NULL;
	if (section != NULL && !(section->sh_flags & SHF_ALLOC))
		return false;
	switch (ELF64_ST_TYPE(sym->st_info)) {
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
	int plainer = plainer_name(x->name, y->name);
	if (plainer != 0)
		return plainer;
	/* the same name twice: any fixed order, the sort is not stable */
	if (x->size != y->size)
		return x->size < y->size ? -1 : 1;
	return (int)x->type - (int)y->type;
}

bool symbol_table_read(struct symbol_table *table, const struct elf_image *image,
		       const Elf64_Shdr *section, struct tracer_arena *arena,
		       struct inflate_tables *tables)
{
	*table = (struct symbol_table){ NULL, 0 };
	struct elf_bytes entries, names;
	if (section == NULL || section->sh_entsize != sizeof(Elf64_Sym) ||
	    !elf_section_contents(image, section, arena, tables, &entries) ||
	    !elf_section_contents(image, elf_section_at(image, section->sh_link), arena, tables,
				  &names))
		return false;
	/* A string table ending in NUL makes every offset inside it a string. */
	if (names.size == 0 || names.data[names.size - 1] != '\0')
		return false;

	size_t total = entries.size / sizeof(Elf64_Sym);
	if (total == 0)
		return false;
	struct symbol *symbols = tracer_arena_alloc(arena, total * sizeof *symbols);
	if (symbols == NULL)
		return false;
	size_t count = 0;
	for (size_t i = 0; i < total; i++) {
		Elf64_Sym sym;
		memcpy(&sym, entries.data + i * sizeof sym, sizeof sym); /* may be unaligned */
		if (sym.st_name == 0 || sym.st_name >= names.size || !names_code_or_data(&sym, image))
			continue;
		const char *name = (const char *)names.data + sym.st_name;
		if (name[0] == '\0')
			continue;
		symbols[count++] = (struct symbol){
			.start = sym.st_value,
			.size = sym.st_size,
			.name = name,
			.name_length = (uint32_t)strcspn(name, "@"),
			.type = ELF64_ST_TYPE(sym.st_info),
			.rank = symbol_rank(&sym),
		};
	}
	tracer_arena_shrink(arena, symbols, total * sizeof *symbols, count * sizeof *symbols);
	if (count == 0)
		return false;
	tracer_sort(symbols, count, sizeof *symbols, by_start_then_preference);
	table->symbols = symbols;
	table->count = count;
	return true;
}

const struct symbol *symbol_table_find(const struct symbol_table *table, uint64_t address)
{
	size_t lo = 0, hi = table->count; /* find the first symbol above address */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (table->symbols[mid].start <= address)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	for (size_t i = lo; i > 0 && lo - i < ENCLOSING_SCAN; i--) {
		const struct symbol *sym = &table->symbols[i - 1];
		if (address - sym->start < sym->size)
			return sym;
	}
	const struct symbol *nearest = &table->symbols[lo - 1];
	return nearest->start == address ? nearest : NULL;
}
