/* A program linked with libunwind, which exports its own backtrace() and
 * _Unwind_*: the tracer must still unwind with libgcc, not with the
 * host's libunwind (whose memory validation takes a pipe on the lowest
 * free descriptors). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t never_locked = PTHREAD_MUTEX_INITIALIZER;

static int first_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY);
	close(fd);
	return fd;
}

int main(void)
{
	printf("first fd %d\n", first_free_fd());
	pthread_mutex_unlock(&never_locked);
	printf("after report %d\n", first_free_fd());
	return 0;
}
