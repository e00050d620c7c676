/* mutex_tag_key.h - the per-run key of the class tags kept in pthread
 * mutexes (mutex_class_tag.h). Apart from the tags themselves, so that the
 * class map, below them, can void every tag when a live lock changes class
 * without calling up. */
#ifndef LOCKDEP_RCU_MUTEX_TAG_KEY_H
#define LOCKDEP_RCU_MUTEX_TAG_KEY_H

#include <stdint.h>

/* The per-run key; 0: tags off (class_cache=0). A change voids every tag
 * (mutex_class_tags_void()). */
extern uint64_t mutex_tag_key;

/* Every tag stops counting (a live lock's class changed). */
void mutex_class_tags_void(void);

#endif
