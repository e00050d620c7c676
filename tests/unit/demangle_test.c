/* demangle_name(): the shapes it names, and everything else left alone. */
#include <criterion/criterion.h>
#include <string.h>
#include "symbolize/demangle.h"

static const char *dm(const char *mangled)
{
	static char out[256];
	if (!demangle_name(mangled, strlen(mangled), out, sizeof(out)))
		return NULL;
	return out;
}

Test(demangle, nested_names_constructors_destructors_and_std)
{
	cr_expect_str_eq(dm("_ZN5tpool19thread_pool_genericC1Eii"), "tpool::thread_pool_generic::thread_pool_generic");
	cr_expect_str_eq(dm("_ZN3THDD2Ev"), "THD::~THD");
	cr_expect_str_eq(dm("_ZNK3Foo3barEv"), "Foo::bar");
	cr_expect_str_eq(dm("_ZN3Foo4lockE"), "Foo::lock", "a static member: no parameters");
	cr_expect_str_eq(dm("_Z21create_background_thdv"), "create_background_thd");
	cr_expect_str_eq(dm("_ZL4lock"), "lock", "internal linkage");
	cr_expect_str_eq(dm("_ZNSt6thread6_StateD0Ev"), "std::thread::_State::~_State");
	cr_expect_str_eq(dm("_ZSt9terminatev"), "std::terminate");
	cr_expect_str_eq(dm("_ZN1a1bEv.isra.0"), "a::b.isra.0", "a GCC clone keeps its suffix");
}

Test(demangle, what_it_does_not_know_is_left_mangled)
{
	cr_expect_null(dm("pthread_mutex_lock"), "C");
	cr_expect_null(dm("_Z"));
	cr_expect_null(dm("_ZN1aE"), "one component: not a valid nested name");
	cr_expect_null(dm("_ZN1aIiE1bEv"), "a template");
	cr_expect_null(dm("_ZN3FoopLERKS_"), "an operator");
	cr_expect_null(dm("_ZN1a9999999999bEv"), "a length past the end");
	cr_expect_null(dm("_ZN1a5bcE"), "a length past the end of the name");
	cr_expect_null(dm("_ZZ4mainE1x"), "a local name");
}

Test(demangle, a_short_buffer_truncates_and_terminates)
{
	char out[8];
	size_t n = demangle_name("_ZN5tpool4workEv", 16, out, sizeof(out));
	cr_expect_eq(n, 7);
	cr_expect_str_eq(out, "tpool::");
}
