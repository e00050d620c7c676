/* A library whose destructor must run at exit even when the tracer has
 * reported: its destructor stands for gcov's flush, a log's last write. */
#include <unistd.h>

__attribute__((destructor)) static void witness_destructor(void)
{
	static const char line[] = "library destructor ran\n";
	(void)!write(1, line, sizeof(line) - 1);
}

void exit_witness_linked(void) {}
