/* Printing a finished collection: the text report people read and the JSON
 * document CI reads. Both carry the same facts. */
#ifndef LOCKDEP_RCU_RENDER_H
#define LOCKDEP_RCU_RENDER_H

#include "collect.h"
#include "util.h"

void render_text(const struct collection *c, struct strbuf *out);
void render_json(const struct collection *c, struct strbuf *out);

/* "11 (Segmentation fault)" */
void render_signal(int sig, struct strbuf *out);

#endif
