/* dwarf_form.c - DWARF attribute forms: their sizes and the strings they name. */
#include "symbolize/dwarf_form.h"

#include "symbolize/dwarf_constants.h"

/* DW_FORM_indirect names the real form in the data; a chain of them is
 * legal but pointless, so a short one is all we follow. */
enum { INDIRECT_FORMS_MAX = 4 };

uint64_t dwarf_read_unit_length(struct byte_reader *r, unsigned *offset_size)
{
	uint64_t length = read_u32(r);
	*offset_size = 4;
	if (length == 0xffffffffu) {
		length = read_u64(r);
		*offset_size = 8;
	} else if (length >= 0xfffffff0u) {
		return 0; /* reserved */
	}
	return r->failed ? 0 : length;
}

bool dwarf_read_form(struct byte_reader *r, uint64_t form, const struct dwarf_format *format,
		     const struct dwarf_strings *strings, int64_t implicit_const,
		     struct dwarf_value *value)
{
	*value = (struct dwarf_value){ 0, NULL };
	for (int indirections = 0; form == DW_FORM_indirect; indirections++) {
		if (indirections == INDIRECT_FORMS_MAX)
			return false;
		form = read_uleb128(r);
	}
	switch (form) {
	case DW_FORM_flag_present:
		value->number = 1;
		break;
	case DW_FORM_implicit_const:
		value->number = (uint64_t)implicit_const;
		break;
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
	case DW_FORM_addrx1:
		value->number = read_u8(r);
		break;
	case DW_FORM_data2:
	case DW_FORM_ref2:
	case DW_FORM_strx2:
	case DW_FORM_addrx2:
		value->number = read_u16(r);
		break;
	case DW_FORM_strx3:
	case DW_FORM_addrx3:
		value->number = read_unsigned(r, 3);
		break;
	case DW_FORM_data4:
	case DW_FORM_ref4:
	case DW_FORM_ref_sup4:
	case DW_FORM_strx4:
	case DW_FORM_addrx4:
		value->number = read_u32(r);
		break;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
	case DW_FORM_ref_sup8:
		value->number = read_u64(r);
		break;
	case DW_FORM_data16: /* MD5 of a file in line tables */
		skip_bytes(r, 16);
		break;
	case DW_FORM_sdata:
		value->number = (uint64_t)read_sleb128(r);
		break;
	case DW_FORM_udata:
	case DW_FORM_ref_udata:
	case DW_FORM_strx:
	case DW_FORM_addrx:
	case DW_FORM_loclistx:
	case DW_FORM_rnglistx:
	case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index:
		value->number = read_uleb128(r);
		break;
	case DW_FORM_addr:
		value->number = read_unsigned(r, format->address_size);
		break;
	case DW_FORM_ref_addr: /* an address in DWARF 2, an offset since */
		value->number = read_unsigned(r, format->version <= 2 ? format->address_size
								      : format->offset_size);
		break;
	case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		value->number = read_unsigned(r, format->offset_size);
		break;
	case DW_FORM_strp:
		value->number = read_unsigned(r, format->offset_size);
		value->string = string_at(strings->str, strings->str_size, value->number);
		break;
	case DW_FORM_line_strp:
		value->number = read_unsigned(r, format->offset_size);
		value->string = string_at(strings->line_str, strings->line_str_size, value->number);
		break;
	case DW_FORM_string:
		value->string = read_cstring(r);
		break;
	case DW_FORM_block1:
		value->number = read_u8(r);
		skip_bytes(r, value->number);
		break;
	case DW_FORM_block2:
		value->number = read_u16(r);
		skip_bytes(r, value->number);
		break;
	case DW_FORM_block4:
		value->number = read_u32(r);
		skip_bytes(r, value->number);
		break;
	case DW_FORM_block:
	case DW_FORM_exprloc:
		value->number = read_uleb128(r);
		skip_bytes(r, value->number);
		break;
	default:
		return false;
	}
	if (format->address_size > 8 || format->offset_size > 8)
		return false;
	if (r->failed)
		value->string = NULL;
	return !r->failed;
}
