/* A library that installs a signal handler from its constructor, which
 * runs before the tracer's own constructor (the loader runs the
 * preloaded object's constructor last): the wrapper must be installed and
 * work all the same. The handler takes the library's lock. */
#include <pthread.h>
#include <signal.h>
#include <string.h>

static pthread_mutex_t early_lock = PTHREAD_MUTEX_INITIALIZER;

static void early_handler(int signo)
{
	(void)signo;
	pthread_mutex_lock(&early_lock);
	pthread_mutex_unlock(&early_lock);
}

__attribute__((constructor)) static void install_early_handler(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = early_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
}

/* Takes the library's lock with SIGUSR2 deliverable. */
void early_lock_use(void)
{
	pthread_mutex_lock(&early_lock);
	pthread_mutex_unlock(&early_lock);
}
