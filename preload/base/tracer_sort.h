/* tracer_sort.h - sorting for the tracer's tables without malloc: glibc's
 * qsort() may malloc a merge buffer, so the tracer uses its own in-place
 * heapsort: no memory at all, no recursion, O(n log n) for any input. */
#ifndef LOCKDEP_RCU_TRACER_SORT_H
#define LOCKDEP_RCU_TRACER_SORT_H

#include <stddef.h>

/* Sorts count elements of size bytes at base. Not stable: compare must
 * order every pair whose order matters (break ties by a unique field). */
void tracer_sort(void *base, size_t count, size_t size,
		 int (*compare)(const void *, const void *));

#endif
