/* shared_mappings.h - the program's memory that others see: its MAP_SHARED
 * mappings (a file, a memfd, memory shared with its children) and its
 * System V shared memory segments. The tracer never writes into them (a
 * mutex's class tag there would reach a file or another process:
 * mutex_class_tag.h). Recorded by the mmap(), mremap(), munmap(), shmat()
 * and shmdt() wrappers (intercept_memory.c).
 *
 * A table of ranges, lock-free: an entry is claimed by its end word and
 * published by its start word, and lookups read both. When it is full
 * (MAX_SHARED_MAPPINGS live at once), every address counts as shared from
 * then on: nothing is tagged any more, never something wrongly. A range
 * partly unmapped stays whole in the table (it only keeps a few addresses
 * untagged). */
#ifndef LOCKDEP_RCU_SHARED_MAPPINGS_H
#define LOCKDEP_RCU_SHARED_MAPPINGS_H

#include <stddef.h>
#include <stdint.h>

#define MAX_SHARED_MAPPINGS 1024

void shared_mappings_add(uintptr_t lo, uintptr_t hi);
/* Forgets the ranges that lie inside [lo, hi). */
void shared_mappings_remove(uintptr_t lo, uintptr_t hi);
/* Forgets the range that starts at lo (shmdt() gives only that). */
void shared_mappings_remove_at(uintptr_t lo);
/* Whether [lo, hi) overlaps a shared range (or the table overflowed). */
int shared_mappings_overlap(uintptr_t lo, uintptr_t hi);

#endif
