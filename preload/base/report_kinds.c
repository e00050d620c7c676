/* The tables of report_kinds.h, and reading a title back to its kind. */
#include <string.h>
#include "base/report_kinds.h"

const char *const report_title_format[NR_REPORT_TITLES] = {
#define REPORT_TITLE_FORMAT(title, kind, format) [REPORT_##title] = format,
	REPORT_TITLES(REPORT_TITLE_FORMAT)
#undef REPORT_TITLE_FORMAT
};

static const enum report_kind title_kind[NR_REPORT_TITLES] = {
#define REPORT_TITLE_KIND(title, kind, format) [REPORT_##title] = REPORT_##kind,
	REPORT_TITLES(REPORT_TITLE_KIND)
#undef REPORT_TITLE_KIND
};

const char *const report_record_kind[NR_REPORT_KINDS] = {
#define REPORT_KIND_RECORD(kind, record, name, anchor) [REPORT_##kind] = record,
	REPORT_KINDS(REPORT_KIND_RECORD)
#undef REPORT_KIND_RECORD
};

const char *const report_kind_name[NR_REPORT_KINDS] = {
#define REPORT_KIND_NAME(kind, record, name, anchor) [REPORT_##kind] = name,
	REPORT_KINDS(REPORT_KIND_NAME)
#undef REPORT_KIND_NAME
};

const char *const report_kind_anchor[NR_REPORT_KINDS] = {
#define REPORT_KIND_ANCHOR(kind, record, name, anchor) [REPORT_##kind] = anchor,
	REPORT_KINDS(REPORT_KIND_ANCHOR)
#undef REPORT_KIND_ANCHOR
};

/* Length of the printf conversion at f ('%' first), flags and width
 * included; "%%" is not one (the caller treats it as a literal). */
static size_t conversion_length(const char *f)
{
	size_t n = 1;
	while (f[n] && strchr("-+ #0123456789.lhzjt", f[n]))
		n++;
	return f[n] ? n + 1 : n;
}

/* Whether text matches format, each conversion matching any (possibly
 * empty) run of characters; *literal is the count of literal characters
 * matched, the match's specificity. Backtracking glob, formats are short. */
static int format_matches(const char *format, const char *text, size_t *literal)
{
	if (!*format)
		return !*text;
	if (format[0] == '%' && format[1] != '%') {
		const char *rest = format + conversion_length(format);
		for (const char *t = text;; t++) {
			if (format_matches(rest, t, literal))
				return 1;
			if (!*t)
				return 0;
		}
	}
	size_t step = format[0] == '%' ? 2 : 1;   /* "%%" is a '%' */
	if (*text != format[step - 1])
		return 0;
	if (!format_matches(format + step, text + 1, literal))
		return 0;
	(*literal)++;
	return 1;
}

enum report_kind report_kind_of_title(const char *title)
{
	enum report_kind best = NR_REPORT_KINDS;
	size_t best_literal = 0;
	for (int t = 0; t < NR_REPORT_TITLES; t++) {
		size_t literal = 0;
		if (format_matches(report_title_format[t], title, &literal) && literal > best_literal) {
			best = title_kind[t];
			best_literal = literal;
		}
	}
	return best;
}

enum report_kind report_kind_of_record(const char *record, size_t len)
{
	for (int k = 0; k < NR_REPORT_KINDS; k++)
		if (strlen(report_record_kind[k]) == len && !memcmp(report_record_kind[k], record, len))
			return (enum report_kind)k;
	return NR_REPORT_KINDS;
}
