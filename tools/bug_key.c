#include <string.h>
#include "bug_key.h"

void frame_where(const struct frame *f, struct strbuf *out)
{
	if (f->source)
		sb_puts(out, path_basename(f->source));
	else if (f->function)
		sb_printf(out, "%s [%s]", f->function, f->module ? f->module : "?");
	else if (f->module && f->has_offset)
		sb_printf(out, "%s+0x%lx", f->module, f->offset);
	else
		sb_putc(out, '?');
}

/* A lock's name without the address a stripped program names it by:
 * "lock@55d1afc420c0" -> "lock@?". */
static void lock_name(const char *name, struct strbuf *out)
{
	const char *at = strchr(name, '@');
	if (at && at[1] && strspn(at + 1, "0123456789abcdef") == strlen(at + 1)) {
		sb_add(out, name, (size_t)(at - name));
		sb_puts(out, "@?");
		return;
	}
	sb_puts(out, name);
}

static void lock_key(const struct splat_lock *l, struct strbuf *out)
{
	sb_printf(out, "\n%s ", l->role);
	if (l->has_at)
		frame_where(&l->at, out);
	else
		lock_name(l->name, out);
}

char *bug_key(const struct splat *s)
{
	struct strbuf key = { 0 };
	sb_printf(&key, "%s\n", s->kind);
	if (!strcmp(s->kind, "locks_held_at_exit")) {
		/* The innermost lock the thread took, where it took it: that is
		 * the site too. Inlined read sides have no site and no record
		 * of their own (the text lists them): they do not count. */
		for (size_t i = s->nlocks; i-- > 0;)
			if (!strcmp(s->locks[i].role, "leaked") && s->locks[i].has_at) {
				lock_key(&s->locks[i], &key);
				break;
			}
		return sb_detach(&key);
	}
	if (s->has_site)
		frame_where(&s->site, &key);
	for (size_t i = 0; i < s->nlocks; i++)
		if (strcmp(s->locks[i].role, "held"))
			lock_key(&s->locks[i], &key);
	return sb_detach(&key);
}
