/* The tracer's own unwinder (cfi_unwind.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "unwind/cfi_unwind.h"
#include "base/byte_reader.h"
#include "runtime/sandbox.h"
#include "base/raw_syscall.h"

/* glibc 2.35's; weak, so that on an older glibc the preload still loads and
 * every capture goes to libgcc. */
extern int _dl_find_object(void *address, struct dl_find_object *result) __attribute__((weak));

/* DWARF register numbers of x86-64 (the psABI's table). */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

/* Pointer encodings (the LSB's DW_EH_PE_*). */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APPLICATION 0x70
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_INDIRECT 0x80

/* ---- the reduced rules of one return address ---------------------------- */

/* How to step from a frame to its caller's:
 *   CFA = (cfa_rbp ? %rbp : %rsp) + cfa_offset, or with cfa_deref the
 *   word at %rbp + cfa_offset (gcc's stack realignment, main() often:
 *   DW_OP_breg6 off; DW_OP_deref)
 *   return address at CFA + ra_offset, or none (ra_undefined: the
 *   outermost frame, _start's or a thread's start)
 *   caller's %rbp at CFA + rbp_offset if rbp_saved, at %rbp + rbp_offset
 *   if rbp_at_rbp (the realigned frame's DW_OP_breg6 off), else %rbp
 *   unchanged.
 * Packed in 64 bits so that a cache slot is read in one load: */
struct cfi_rule {
	int32_t cfa_offset;
	int16_t rbp_offset;
	int8_t ra_offset;
	uint8_t flags;
};
#define RULE_VALID 1          /* a usable rule (0: this address cannot be unwound here) */
#define RULE_CFA_RBP 2
#define RULE_RBP_SAVED 4
#define RULE_RA_UNDEFINED 8
#define RULE_CFA_DEREF 16
#define RULE_RBP_AT_RBP 32
_Static_assert(sizeof(struct cfi_rule) == 8, "a rule is one 8-byte word");

static uint64_t rule_word(struct cfi_rule r)
{
	uint64_t w;
	memcpy(&w, &r, sizeof(w));
	return w;
}

static struct cfi_rule word_rule(uint64_t w)
{
	struct cfi_rule r;
	memcpy(&r, &w, sizeof(r));
	return r;
}

/* ---- the cache: return address -> rule --------------------------------- */

struct rule_slot {
	uintptr_t pc;       /* 0: free; written after the rule (release) */
	uint64_t rule;
};
static struct rule_slot rule_cache[CFI_RULE_CACHE_SLOTS];

static size_t pc_hash(uintptr_t pc)
{
	uint64_t h = (uint64_t)pc * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 40);
}

static int cache_get(uintptr_t pc, struct cfi_rule *out)
{
	for (size_t i = pc_hash(pc), n = 0; n < 8; i++, n++) {
		const struct rule_slot *s = &rule_cache[i & (CFI_RULE_CACHE_SLOTS - 1)];
		uintptr_t k = __atomic_load_n(&s->pc, __ATOMIC_ACQUIRE);
		if (k == pc) {
			*out = word_rule(__atomic_load_n(&s->rule, __ATOMIC_RELAXED));
			return 1;
		}
		if (!k)
			return 0;
	}
	return 0;
}

/* A slot is claimed with a CAS on its pc, so its rule is written by the
 * claimer only, before the pc: readers see a whole rule or no entry. A
 * full neighbourhood keeps nothing (the address is worked out again). */
static void cache_put(uintptr_t pc, struct cfi_rule rule)
{
	for (size_t i = pc_hash(pc), n = 0; n < 8; i++, n++) {
		struct rule_slot *s = &rule_cache[i & (CFI_RULE_CACHE_SLOTS - 1)];
		uintptr_t k = __atomic_load_n(&s->pc, __ATOMIC_ACQUIRE);
		if (k == pc)
			return;
		if (k)
			continue;
		/* Claim with a marker no return address has (1), then publish. */
		uintptr_t expected = 0;
		if (!__atomic_compare_exchange_n(&s->pc, &expected, (uintptr_t)1, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&s->rule, rule_word(rule), __ATOMIC_RELAXED);
		__atomic_store_n(&s->pc, pc, __ATOMIC_RELEASE);
		return;
	}
}

void cfi_unwind_forget_range(uintptr_t lo, uintptr_t hi)
{
	/* A slot emptied in the middle of a probe run only makes the entries
	 * after it be worked out again (and kept again). */
	for (size_t i = 0; i < CFI_RULE_CACHE_SLOTS; i++) {
		uintptr_t pc = __atomic_load_n(&rule_cache[i].pc, __ATOMIC_ACQUIRE);
		if (pc >= lo && pc < hi)
			__atomic_compare_exchange_n(&rule_cache[i].pc, &pc, (uintptr_t)0, 0, __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED);
	}
}

/* ---- reading .eh_frame -------------------------------------------------- */

/* An encoded pointer at r (`base` for datarel). 0 and a failed reader on an
 * encoding we do not read. */
static uintptr_t read_encoded(struct byte_reader *r, uint8_t enc, uintptr_t datarel_base)
{
	uintptr_t at = (uintptr_t)r->at;
	uint64_t v;
	if (enc == PE_OMIT) {
		byte_reader_fail(r);
		return 0;
	}
	switch (enc & PE_FORMAT) {
	case PE_ABSPTR: v = read_u64(r); break;
	case PE_ULEB128: v = read_uleb128(r); break;
	case PE_UDATA2: v = read_u16(r); break;
	case PE_UDATA4: v = read_u32(r); break;
	case PE_UDATA8: v = read_u64(r); break;
	case PE_SLEB128: v = (uint64_t)read_sleb128(r); break;
	case PE_SDATA2: v = (uint64_t)(int64_t)(int16_t)read_u16(r); break;
	case PE_SDATA4: v = (uint64_t)(int64_t)(int32_t)read_u32(r); break;
	case PE_SDATA8: v = read_u64(r); break;
	default: byte_reader_fail(r); return 0;
	}
	switch (enc & PE_APPLICATION) {
	case 0: break;
	case PE_PCREL: v += at; break;
	case PE_DATAREL: v += datarel_base; break;
	default: byte_reader_fail(r); return 0;
	}
	if (enc & PE_INDIRECT) {
		byte_reader_fail(r);   /* never used for code addresses in .eh_frame */
		return 0;
	}
	return (uintptr_t)v;
}

/* The FDE covering pc, from .eh_frame_hdr's sorted table. NULL if none. */
static const unsigned char *find_fde(const unsigned char *hdr, const unsigned char *end, uintptr_t pc)
{
	struct byte_reader r = byte_reader_init(hdr, (size_t)(end - hdr));
	uint8_t version = read_u8(&r), frame_enc = read_u8(&r), count_enc = read_u8(&r), table_enc = read_u8(&r);
	if (r.failed || version != 1 || table_enc != (PE_DATAREL | PE_SDATA4))
		return NULL;
	read_encoded(&r, frame_enc, (uintptr_t)hdr);
	uint64_t count = read_encoded(&r, count_enc, (uintptr_t)hdr);
	if (r.failed || count == 0 || byte_reader_left(&r) / 8 < count)
		return NULL;
	const unsigned char *table = r.at;
	/* the last entry whose initial location is <= pc */
	uint64_t lo = 0, hi = count;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		int32_t loc;
		memcpy(&loc, table + mid * 8, 4);
		if ((uintptr_t)hdr + (intptr_t)loc <= pc)
			lo = mid;
		else
			hi = mid;
	}
	int32_t loc, fde;
	memcpy(&loc, table + lo * 8, 4);
	memcpy(&fde, table + lo * 8 + 4, 4);
	if ((uintptr_t)hdr + (intptr_t)loc > pc)
		return NULL;
	return hdr + fde;
}

struct cie_info {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	int has_aug_data;
	int signal_frame;         /* 'S': the kernel's signal return trampoline */
	const unsigned char *insns, *insns_end;
};

static int parse_cie(const unsigned char *cie, const unsigned char *limit, struct cie_info *ci)
{
	struct byte_reader r = byte_reader_init(cie, (size_t)(limit - cie));
	uint32_t length = read_u32(&r);
	if (r.failed || length == 0 || length == 0xffffffffu || byte_reader_left(&r) < length)
		return 0;
	const unsigned char *end = r.at + length;
	r.end = end;
	if (read_u32(&r) != 0)
		return 0;   /* not a CIE */
	uint8_t version = read_u8(&r);
	const char *aug = read_cstring(&r);
	if (r.failed || (version != 1 && version != 3) || !aug)
		return 0;
	ci->code_align = read_uleb128(&r);
	ci->data_align = read_sleb128(&r);
	uint64_t ra_reg = version == 1 ? read_u8(&r) : read_uleb128(&r);
	if (ra_reg != REG_RA)
		return 0;
	ci->fde_enc = PE_ABSPTR;
	ci->signal_frame = 0;
	ci->has_aug_data = aug[0] == 'z';
	if (ci->has_aug_data) {
		uint64_t aug_len = read_uleb128(&r);
		const unsigned char *aug_end = r.at + aug_len;
		for (const char *c = aug + 1; *c && !r.failed; c++) {
			if (*c == 'R') {
				ci->fde_enc = read_u8(&r);
			} else if (*c == 'L') {
				read_u8(&r);
			} else if (*c == 'P') {
				uint8_t penc = read_u8(&r);
				read_encoded(&r, penc & ~PE_INDIRECT, 0);
			} else if (*c == 'S') {
				ci->signal_frame = 1;
			} else {
				return 0;   /* anything unknown */
			}
		}
		if (r.failed || aug_end > end)
			return 0;
		r.at = aug_end;
	} else if (aug[0]) {
		return 0;
	}
	if (r.failed)
		return 0;
	ci->insns = r.at;
	ci->insns_end = end;
	return 1;
}

/* ---- running the CFA program ------------------------------------------- */

struct cfa_state {
	uint8_t cfa_reg;
	uint8_t cfa_deref;          /* CFA = *(cfa_reg + cfa_offset) */
	int64_t cfa_offset;
	uint8_t rbp_how, ra_how;    /* HOW_* */
	int64_t rbp_offset, ra_offset;
};
enum { HOW_SAME, HOW_OFFSET, HOW_UNDEFINED, HOW_AT_RBP };

#define DW_OP_deref 0x06
#define DW_OP_breg6 0x76

/* The one DWARF expression form the rules hold: DW_OP_breg6 off, then
 * DW_OP_deref if `deref`, and nothing else. */
static int read_rbp_expression(struct byte_reader *r, int deref, int64_t *off)
{
	uint64_t len = read_uleb128(r);
	if (r->failed || len > byte_reader_left(r))
		return 0;
	struct byte_reader e = byte_reader_init(r->at, (size_t)len);
	skip_bytes(r, len);
	if (read_u8(&e) != DW_OP_breg6)
		return 0;
	*off = read_sleb128(&e);
	if (deref && read_u8(&e) != DW_OP_deref)
		return 0;
	return !e.failed && byte_reader_left(&e) == 0;
}

#define MAX_REMEMBERED 8

/* Runs the instructions [insns, end) over st until the location passes
 * `target` (FDE programs) or to the end (the CIE's, target UINTPTR_MAX and
 * loc 0). `initial` is the state after the CIE's program, for
 * DW_CFA_restore. Returns 0 on anything the reduced rules cannot hold. */
static int run_cfa(const unsigned char *insns, const unsigned char *end, const struct cie_info *ci,
		   uintptr_t loc, uintptr_t target, struct cfa_state *st, const struct cfa_state *initial)
{
	struct cfa_state remembered[MAX_REMEMBERED];
	int nr_remembered = 0;
	struct byte_reader r = byte_reader_init(insns, (size_t)(end - insns));
	while (byte_reader_left(&r) && !r.failed) {
		uint8_t op = read_u8(&r);
		uint64_t reg = 0, delta = 0;
		int64_t off = 0;
		switch (op & 0xc0) {
		case 0x40:   /* DW_CFA_advance_loc */
			loc += (op & 0x3f) * ci->code_align;
			if (loc > target)
				return 1;
			continue;
		case 0x80:   /* DW_CFA_offset */
			reg = op & 0x3f;
			off = (int64_t)read_uleb128(&r) * ci->data_align;
			goto set_offset;
		case 0xc0:   /* DW_CFA_restore */
			reg = op & 0x3f;
			goto restore;
		}
		switch (op) {
		case 0x00:   /* nop */
			break;
		case 0x01:   /* set_loc */
			loc = read_encoded(&r, ci->fde_enc, 0);
			if (loc > target)
				return 1;
			break;
		case 0x02: delta = read_u8(&r); goto advance;
		case 0x03: delta = read_u16(&r); goto advance;
		case 0x04: delta = read_u32(&r); goto advance;
		case 0x05:   /* offset_extended */
			reg = read_uleb128(&r);
			off = (int64_t)read_uleb128(&r) * ci->data_align;
			goto set_offset;
		case 0x06:   /* restore_extended */
			reg = read_uleb128(&r);
			goto restore;
		case 0x07:   /* undefined */
			reg = read_uleb128(&r);
			if (reg == REG_RA)
				st->ra_how = HOW_UNDEFINED;
			else if (reg == REG_RBP)
				st->rbp_how = HOW_UNDEFINED;
			break;
		case 0x08:   /* same_value */
			reg = read_uleb128(&r);
			if (reg == REG_RBP)
				st->rbp_how = HOW_SAME;
			else if (reg == REG_RA)
				return 0;
			break;
		case 0x09:   /* register: reg saved in another register */
			reg = read_uleb128(&r);
			read_uleb128(&r);
			if (reg == REG_RBP || reg == REG_RA)
				return 0;
			break;
		case 0x0a:   /* remember_state */
			if (nr_remembered == MAX_REMEMBERED)
				return 0;
			remembered[nr_remembered++] = *st;
			break;
		case 0x0b:   /* restore_state */
			if (!nr_remembered)
				return 0;
			*st = remembered[--nr_remembered];
			break;
		case 0x0c:   /* def_cfa */
			st->cfa_reg = (uint8_t)read_uleb128(&r);
			st->cfa_offset = (int64_t)read_uleb128(&r);
			st->cfa_deref = 0;
			break;
		case 0x0d:   /* def_cfa_register */
			st->cfa_reg = (uint8_t)read_uleb128(&r);
			if (st->cfa_deref)
				return 0;
			break;
		case 0x0e:   /* def_cfa_offset */
			st->cfa_offset = (int64_t)read_uleb128(&r);
			if (st->cfa_deref)
				return 0;
			break;
		case 0x0f:   /* def_cfa_expression */
			if (!read_rbp_expression(&r, 1, &off))
				return 0;
			st->cfa_reg = REG_RBP;
			st->cfa_offset = off;
			st->cfa_deref = 1;
			break;
		case 0x10:   /* expression */
			reg = read_uleb128(&r);
			if (reg == REG_RBP) {
				if (!read_rbp_expression(&r, 0, &off))
					return 0;
				st->rbp_how = HOW_AT_RBP;
				st->rbp_offset = off;
				break;
			}
			skip_bytes(&r, read_uleb128(&r));
			if (reg == REG_RA)
				return 0;
			break;
		case 0x16:   /* val_expression */
			reg = read_uleb128(&r);
			skip_bytes(&r, read_uleb128(&r));
			if (reg == REG_RBP || reg == REG_RA)
				return 0;
			break;
		case 0x11:   /* offset_extended_sf */
			reg = read_uleb128(&r);
			off = read_sleb128(&r) * ci->data_align;
			goto set_offset;
		case 0x12:   /* def_cfa_sf */
			st->cfa_reg = (uint8_t)read_uleb128(&r);
			st->cfa_offset = read_sleb128(&r) * ci->data_align;
			st->cfa_deref = 0;
			break;
		case 0x13:   /* def_cfa_offset_sf */
			st->cfa_offset = read_sleb128(&r) * ci->data_align;
			if (st->cfa_deref)
				return 0;
			break;
		case 0x14:   /* val_offset */
		case 0x15:   /* val_offset_sf */
			reg = read_uleb128(&r);
			if (op == 0x14)
				read_uleb128(&r);
			else
				read_sleb128(&r);
			if (reg == REG_RBP || reg == REG_RA)
				return 0;
			break;
		case 0x2e:   /* GNU_args_size */
			read_uleb128(&r);
			break;
		case 0x2f:   /* GNU_negative_offset_extended */
			reg = read_uleb128(&r);
			off = -(int64_t)read_uleb128(&r) * ci->data_align;
			goto set_offset;
		default:
			return 0;
		}
		continue;
	advance:
		loc += delta * ci->code_align;
		if (loc > target)
			return 1;
		continue;
	set_offset:
		if (reg == REG_RBP) {
			st->rbp_how = HOW_OFFSET;
			st->rbp_offset = off;
		} else if (reg == REG_RA) {
			st->ra_how = HOW_OFFSET;
			st->ra_offset = off;
		}
		continue;
	restore:
		if (!initial)
			return 0;   /* restore inside the CIE's own program */
		if (reg == REG_RBP) {
			st->rbp_how = initial->rbp_how;
			st->rbp_offset = initial->rbp_offset;
		} else if (reg == REG_RA) {
			st->ra_how = initial->ra_how;
			st->ra_offset = initial->ra_offset;
		}
		continue;
	}
	return !r.failed;
}

/* The FDE covering return address pc (looked up at pc - 1: a call may be
 * the last instruction of its function), its CIE's information, its
 * start, and a reader at its instructions. 0 when there is none or it
 * cannot be read. */
struct fde_info {
	struct cie_info ci;
	uintptr_t start;
	struct byte_reader insns;
};

static int find_frame_info(uintptr_t pc, struct fde_info *f)
{
	struct dl_find_object obj;
	if (!_dl_find_object || _dl_find_object((void *)(pc - 1), &obj) != 0 || !obj.dlfo_eh_frame)
		return 0;
	const unsigned char *limit = obj.dlfo_map_end;
	const unsigned char *hdr = obj.dlfo_eh_frame;
	if (hdr >= limit)
		return 0;
	const unsigned char *fde = find_fde(hdr, limit, pc - 1);
	if (!fde || fde < (const unsigned char *)obj.dlfo_map_start || fde >= limit)
		return 0;
	struct byte_reader r = byte_reader_init(fde, (size_t)(limit - fde));
	uint32_t length = read_u32(&r);
	if (r.failed || length == 0 || length == 0xffffffffu || byte_reader_left(&r) < length)
		return 0;
	r.end = r.at + length;
	const unsigned char *cie_ptr_at = r.at;
	uint32_t cie_offset = read_u32(&r);
	if (r.failed || cie_offset == 0)
		return 0;
	const unsigned char *cie = cie_ptr_at - cie_offset;
	if (cie < (const unsigned char *)obj.dlfo_map_start || !parse_cie(cie, limit, &f->ci))
		return 0;
	f->start = read_encoded(&r, f->ci.fde_enc, 0);
	uintptr_t range = read_encoded(&r, f->ci.fde_enc & PE_FORMAT, 0);
	if (r.failed || pc - 1 < f->start || pc - 1 >= f->start + range)
		return 0;
	if (f->ci.has_aug_data)
		skip_bytes(&r, read_uleb128(&r));
	f->insns = r;
	return !r.failed;
}

int cfi_unwind_is_signal_frame(uintptr_t pc)
{
	struct fde_info f;
	return pc && find_frame_info(pc, &f) && f.ci.signal_frame;
}

/* Works out the rule of return address pc. */
static struct cfi_rule compute_rule(uintptr_t pc)
{
	struct cfi_rule bad = { 0, 0, 0, 0 };
	struct fde_info f;
	if (!find_frame_info(pc, &f) || f.ci.signal_frame)
		return bad;   /* a signal frame restores every register: libgcc's */
	struct cie_info ci = f.ci;
	struct cfa_state initial = { REG_RSP, 0, 8, HOW_SAME, HOW_UNDEFINED, 0, 0 };
	if (!run_cfa(ci.insns, ci.insns_end, &ci, 0, UINTPTR_MAX, &initial, NULL))
		return bad;
	struct cfa_state st = initial;
	if (!run_cfa(f.insns.at, f.insns.end, &ci, f.start, pc - 1, &st, &initial))
		return bad;
	if ((st.cfa_reg != REG_RSP && st.cfa_reg != REG_RBP) || st.cfa_offset < INT32_MIN ||
	    st.cfa_offset > INT32_MAX || (st.cfa_offset < 0 && !st.cfa_deref) || st.rbp_how == HOW_UNDEFINED)
		return bad;
	struct cfi_rule rule = { (int32_t)st.cfa_offset, 0, 0, RULE_VALID };
	if (st.cfa_reg == REG_RBP)
		rule.flags |= RULE_CFA_RBP;
	if (st.cfa_deref)
		rule.flags |= RULE_CFA_DEREF;
	if (st.ra_how == HOW_UNDEFINED) {
		rule.flags |= RULE_RA_UNDEFINED;
	} else if (st.ra_offset < INT8_MIN || st.ra_offset > INT8_MAX) {
		return bad;
	} else {
		rule.ra_offset = (int8_t)st.ra_offset;
	}
	if (st.rbp_how == HOW_OFFSET || st.rbp_how == HOW_AT_RBP) {
		if (st.rbp_offset < INT16_MIN || st.rbp_offset > INT16_MAX)
			return bad;
		rule.flags |= st.rbp_how == HOW_OFFSET ? RULE_RBP_SAVED : RULE_RBP_AT_RBP;
		rule.rbp_offset = (int16_t)st.rbp_offset;
	}
	return rule;
}

static struct cfi_rule rule_of(uintptr_t pc)
{
	struct cfi_rule rule;
	if (cache_get(pc, &rule))
		return rule;
	rule = compute_rule(pc);
	cache_put(pc, rule);   /* the bad ones too: found again at once */
	return rule;
}

/* ---- the walk ------------------------------------------------------------ */

/* Where makecontext()'s coroutines return to: the end of their stacks. */
static uintptr_t context_start_pc;

void cfi_unwind_set_context_start(uintptr_t pc)
{
	context_start_pc = pc;
}

/* A word of the stack being walked. Inside the trusted range (the stack
 * the walk started on, up to its known top) it is read directly; elsewhere
 * (a stack the program switched to with its own instructions, whose call
 * frame information points past its end, into memory that may not be
 * mapped) it is asked of the kernel first, which says EFAULT instead of
 * raising SIGSEGV. Inside a seccomp sandbox the kernel is not asked: the
 * word is not read. */
static int read_word(const struct cfi_bounds *b, uintptr_t addr, int *left, uintptr_t *out)
{
	if (!b || (addr >= b->lo && addr < b->hi && b->hi - addr >= sizeof(uintptr_t))) {
		*out = *(const uintptr_t *)addr;
		return 1;
	}
	*left = 1;
	if (in_sandbox())
		return 0;
	struct iovec local = { out, sizeof(*out) }, remote = { (void *)addr, sizeof(*out) };
	long got = raw_syscall(SYS_process_vm_readv, raw_getpid(), &local, 1L, &remote, 1L, 0L);
	return got == (long)sizeof(*out);
}

/* From a frame whose return address is pc, its caller's stack pointer sp
 * and %rbp: the walk. A step must move up the stack, by less than 16 MiB:
 * anything else is bad rules, and the caller unwinds with libgcc (-1),
 * unless b forbids it or the walk has left the trusted range (libgcc
 * would read the same doubtful memory, unchecked): then the frames found
 * are all there is. The last frame wanted is not stepped from (its rules
 * are not looked up). */
static long walk_from(uintptr_t pc, uintptr_t sp, uintptr_t rbp, uintptr_t *frames, size_t max,
		      uintptr_t skip_lo, uintptr_t skip_hi, const struct cfi_bounds *b)
{
	size_t n = 0;
	int left = 0;   /* a word was read outside the trusted range */
#define WALK_FAIL() return b && (b->no_fallback || left) ? (long)n : -1
	while (n < max && pc && pc != context_start_pc) {
		if (pc < skip_lo || pc >= skip_hi) {
			frames[n++] = pc;
			if (n == max)
				break;
		}
		struct cfi_rule rule = rule_of(pc);
		if (!(rule.flags & RULE_VALID))
			WALK_FAIL();
		if (rule.flags & RULE_RA_UNDEFINED)
			break;   /* the outermost frame */
		uintptr_t cfa = ((rule.flags & RULE_CFA_RBP) ? rbp : sp) + (uintptr_t)(intptr_t)rule.cfa_offset;
		if (rule.flags & RULE_CFA_DEREF) {
			if (cfa <= sp || cfa - sp > (16u << 20))
				WALK_FAIL();   /* the word must be in this stack too */
			if (!read_word(b, cfa, &left, &cfa))
				break;
		}
		if (cfa <= sp || cfa - sp > (16u << 20))
			WALK_FAIL();
		uintptr_t next_pc;
		if (!read_word(b, cfa + (intptr_t)rule.ra_offset, &left, &next_pc))
			break;
		if ((rule.flags & RULE_RBP_SAVED) && !read_word(b, cfa + (intptr_t)rule.rbp_offset, &left, &rbp))
			break;
		if ((rule.flags & RULE_RBP_AT_RBP) && !read_word(b, rbp + (intptr_t)rule.rbp_offset, &left, &rbp))
			break;
		sp = cfa;
		pc = next_pc;
	}
#undef WALK_FAIL
	return (long)n;
}

/* Our own frame has a frame pointer (the preload is built with
 * -fno-omit-frame-pointer): it gives the first return address, the
 * caller's stack pointer and %rbp; from there the rules. */
__attribute__((noinline)) long cfi_unwind_capture(uintptr_t *frames, size_t max, uintptr_t skip_lo, uintptr_t skip_hi)
{
	uintptr_t *fp = __builtin_frame_address(0);
	return walk_from(fp[1], (uintptr_t)(fp + 2), fp[0], frames, max, skip_lo, skip_hi, NULL);
}

long cfi_unwind_capture_regs(uintptr_t pc, uintptr_t sp, uintptr_t rbp, uintptr_t *frames, size_t max,
			     uintptr_t skip_lo, uintptr_t skip_hi)
{
	/* An empty trusted range: every word is asked of the kernel. */
	static const struct cfi_bounds untrusted = { 0, 0, 1 };
	return walk_from(pc, sp, rbp, frames, max, skip_lo, skip_hi, &untrusted);
}

long cfi_unwind_capture_from(const uintptr_t *fp, uintptr_t *frames, size_t max)
{
	return walk_from(fp[1], (uintptr_t)(fp + 2), fp[0], frames, max, 0, 0, NULL);
}

__attribute__((noinline)) long cfi_unwind_capture_at(const uintptr_t *fp, uintptr_t *frames, size_t max,
						     uintptr_t skip_lo, uintptr_t skip_hi,
						     const struct cfi_bounds *bounds)
{
	if (!fp)
		fp = __builtin_frame_address(0);
	return walk_from(fp[1], (uintptr_t)(fp + 2), fp[0], frames, max, skip_lo, skip_hi, bounds);
}
