/* The key of the mutex class tags, and voiding them all. */
#include "classes/mutex_tag_key.h"

uint64_t mutex_tag_key = 0x6d75746578746167ull;

void mutex_class_tags_void(void)
{
	uint64_t key = __atomic_load_n(&mutex_tag_key, __ATOMIC_RELAXED);
	if (key)   /* release: after the change of the map */
		__atomic_store_n(&mutex_tag_key, (key + 0x9E3779B97F4A7C16ull) | 1, __ATOMIC_RELEASE);
}
