/* tracer_sort.c - heapsort: build a max-heap in place, then move its top to
 * the end one element at a time. */
#include "base/tracer_sort.h"

#include <string.h>

static void swap_elements(char *a, char *b, size_t size)
{
	char chunk[64];
	while (size > 0) {
		size_t n = size < sizeof chunk ? size : sizeof chunk;
		memcpy(chunk, a, n);
		memcpy(a, b, n);
		memcpy(b, chunk, n);
		a += n, b += n, size -= n;
	}
}

/* Moves element `at` down until neither child within [0, count) is larger. */
static void sift_down(char *base, size_t at, size_t count, size_t size,
		      int (*compare)(const void *, const void *))
{
	for (;;) {
		size_t largest = at, left = 2 * at + 1, right = left + 1;
		if (left < count && compare(base + left * size, base + largest * size) > 0)
			largest = left;
		if (right < count && compare(base + right * size, base + largest * size) > 0)
			largest = right;
		if (largest == at)
			return;
		swap_elements(base + at * size, base + largest * size, size);
		at = largest;
	}
}

void tracer_sort(void *base, size_t count, size_t size,
		 int (*compare)(const void *, const void *))
{
	char *elements = base;
	if (count < 2 || size == 0)
		return;
	for (size_t i = count / 2; i > 0; i--)
		sift_down(elements, i - 1, count, size, compare);
	for (size_t end = count - 1; end > 0; end--) {
		swap_elements(elements, elements + end * size, size);
		sift_down(elements, 0, end, size, compare);
	}
}
