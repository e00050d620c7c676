/* Links libexit_witness.so (initialized before the preload, so its
 * destructor runs after the tracer's) and makes one report. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

void exit_witness_linked(void);

static pthread_mutex_t never_locked = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	(void)argv;
	exit_witness_linked();
	pthread_mutex_unlock(&never_locked);
	printf("main returns\n");
	if (argc > 1)
		exit(5);   /* explicit exit() instead of a return from main */
	return 0;
}
