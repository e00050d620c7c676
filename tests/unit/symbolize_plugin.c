/* symbolize_plugin.c - a library that symbolize_target dlopen()s and dlclose()s,
 * built twice (PLUGIN=a and PLUGIN=b) as two libraries with different symbols
 * and build-ids: its static helper is named only by its .symtab. */
#ifndef PLUGIN
#define PLUGIN a
#endif
#define JOIN(x, y) x##y
#define NAME(x, y) JOIN(x, y)
#define HELPER NAME(plugin_helper_, PLUGIN)

__attribute__((noipa)) static int HELPER(int x)
{
	return x * 3;
}

void *plugin_helper(void)
{
	return (void *)HELPER;
}
