/* demangle_name(): names as `c++filt --no-params --no-verbose` prints them,
 * a clone suffix kept as it is, and what is not a mangled name left alone. */
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

Test(demangle, templates_operators_and_local_names)
{
	cr_expect_str_eq(dm("_ZN1aIiE1bEv"), "a<int>::b", "a template");
	cr_expect_str_eq(dm("_ZNSt6vectorIiSaIiEE9push_backERKi"), "std::vector<int, std::allocator<int> >::push_back");
	cr_expect_str_eq(dm("_Z1fIiEvT_"), "f<int>", "a function template: no return type either");
	cr_expect_str_eq(dm("_ZN3FoopLERKS_"), "Foo::operator+=", "an operator");
	cr_expect_str_eq(dm("_ZZ4mainE1x"), "main::x", "a local name");
	cr_expect_str_eq(dm("_ZN12_GLOBAL__N_13fooEv"), "(anonymous namespace)::foo");
	cr_expect_str_eq(dm("_ZNSs6appendEPKc"), "std::string::append", "std:: abbreviations kept short");
	cr_expect_str_eq(dm("_ZN1aIiE1bEv.constprop.0.isra.0"), "a<int>::b.constprop.0.isra.0",
			 "a clone suffix as it is, not \" [clone ...]\": \" [\" ends a frame's name");
}

Test(demangle, what_is_not_a_mangled_name_is_left_alone)
{
	cr_expect_null(dm("pthread_mutex_lock"), "C");
	cr_expect_null(dm("_Z"));
	cr_expect_null(dm("_ZN1a9999999999bEv"), "a length past the end");
	cr_expect_null(dm("_ZN1a5bcE"), "a length past the end of the name");
	cr_expect_null(dm("_ZN1aIiE"), "an unfinished nested name");
	cr_expect_null(dm("_GLOBAL__sub_I_main"), "not _Z: left as the symbol table says");
	/* longer than 1 KiB: left mangled (the demangler's stack use grows with it) */
	static char long_name[1200];
	memset(long_name, 'a', sizeof(long_name) - 1);
	memcpy(long_name, "_Z1193", 6); /* a valid name of 1199 chars */
	cr_expect_null(dm(long_name));
	memset(long_name, 'a', 1001);
	long_name[1001] = '\0';
	memcpy(long_name, "_Z996", 5); /* a valid name of 1001 chars */
	char out[1100];
	cr_expect_eq(demangle_name(long_name, 1001, out, sizeof(out)), 996, "under 1 KiB: demangled");
	cr_expect_str_eq(out, long_name + 5);
}

Test(demangle, a_short_buffer_truncates_and_terminates)
{
	char out[8];
	size_t n = demangle_name("_ZN5tpool4workEv", 16, out, sizeof(out));
	cr_expect_eq(n, 7);
	cr_expect_str_eq(out, "tpool::");
}
