/* The report model: frames, locks, freeing, and reading one printed frame. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "splat.h"
#include "../preload/base/report_kinds.h"

void frame_free(struct frame *f)
{
	free(f->text);
	free(f->function);
	free(f->module);
	free(f->module_path);
	free(f->source);
	free(f->inlined);
	memset(f, 0, sizeof(*f));
}

void splat_free(struct splat *s)
{
	free(s->text);
	free(s->title);
	free(s->kind);
	free(s->message);
	frame_free(&s->site);
	for (size_t i = 0; i < s->nlocks; i++) {
		free(s->locks[i].role);
		free(s->locks[i].name);
		free(s->locks[i].kind);
		frame_free(&s->locks[i].at);
	}
	free(s->locks);
	for (size_t i = 0; i < s->ntrace; i++)
		frame_free(&s->trace[i]);
	free(s->trace);
	memset(s, 0, sizeof(*s));
}

struct splat_lock *splat_add_lock(struct splat *s, const char *role, const char *name, size_t name_len)
{
	grow(&s->locks, &s->locks_cap, s->nlocks + 1, sizeof(*s->locks));
	struct splat_lock *l = &s->locks[s->nlocks++];
	memset(l, 0, sizeof(*l));
	l->role = xstrdup(role);
	l->name = xstrndup(name, name_len);
	return l;
}

struct frame **splat_frames(const struct splat *s, size_t *n)
{
	struct frame **v = xcalloc(1 + s->ntrace + s->nlocks, sizeof(*v));
	*n = 0;
	if (s->has_site)
		v[(*n)++] = (struct frame *)&s->site;
	for (size_t i = 0; i < s->ntrace; i++)
		v[(*n)++] = &s->trace[i];
	for (size_t i = 0; i < s->nlocks; i++)
		if (s->locks[i].has_at)
			v[(*n)++] = &s->locks[i].at;
	return v;
}

const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

void frame_render(const struct frame *f, struct strbuf *out)
{
	if (!f->symbolized) {
		sb_puts(out, f->text ? f->text : "?");
		return;
	}
	sb_printf(out, "%s [%s+0x%lx]", f->function ? f->function : "??", f->module, f->offset);
	if (f->source)
		sb_printf(out, " %s", f->source);
	if (f->inlined)
		sb_printf(out, " (inlined: %s)", f->inlined);
}

/* The kinds and titles are the tracer's own list (base/report_kinds.h). */
int splat_is_report_kind(const char *kind)
{
	return kind && report_kind_of_record(kind, strlen(kind)) < NR_REPORT_KINDS;
}

const char *splat_kind_of_title(const char *title)
{
	enum report_kind kind = report_kind_of_title(title);
	return kind < NR_REPORT_KINDS ? report_record_kind[kind] : "unknown";
}
