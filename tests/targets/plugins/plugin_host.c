/* A plugin host: dlopen()s a library that links liburcu (RTLD_NOW, local
 * scope by default) and calls into it. The host itself links no liburcu. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PLUGIN\n", argv[0]);
		return 2;
	}
	void *plugin = dlopen(argv[1], RTLD_NOW);
	if (!plugin) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 3;
	}
	int (*work)(void) = (int (*)(void))dlsym(plugin, "plugin_work");
	if (!work)
		return 4;
	printf("plugin returned %d\n", work());
	dlclose(plugin);
	return 0;
}
