/* Where an order of a same-class pair was taken (instance_pairs.h): the
 * lock call's caller, or a stack in the depot (pair_frames). Apart from
 * the pair cache itself, which the unit tests link alone. */
#include "graph/instance_pairs.h"
#include "unwind/backtrace.h"
#include "base/options.h"
#include "unwind/stack_depot.h"

uint64_t instance_pair_capture(const void *wrapper_frame, uintptr_t ip)
{
	size_t want = (size_t)tracer_options.pair_frames;
	if (want <= 1)
		return (ip & PAIR_WHERE_ADDRESS_MASK) | PAIR_WHERE_IP;
	uintptr_t frames[INSTANCE_PAIR_FRAMES_MAX];
	size_t n = wrapper_frame ? backtrace_capture_from(wrapper_frame, frames, want) : backtrace_capture(frames, want);
	uint32_t id = stack_depot_save(frames, n);
	return id ? id : (ip & PAIR_WHERE_ADDRESS_MASK) | PAIR_WHERE_IP;
}

uint64_t instance_pair_capture_stack(size_t max)
{
	uintptr_t frames[128];
	return stack_depot_save(frames, backtrace_capture(frames, max < 128 ? max : 128));
}
