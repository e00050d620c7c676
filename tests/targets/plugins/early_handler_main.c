/* Uses libearly_handler.so, whose constructor installed a SIGUSR2 handler
 * before the tracer's constructor ran: its lock is taken in the handler and
 * here with SIGUSR2 deliverable, which the tracer must report. */
#include <signal.h>
#include <stdio.h>

void early_lock_use(void);

int main(void)
{
	struct sigaction now;
	sigaction(SIGUSR2, NULL, &now);
	if (now.sa_handler == SIG_DFL) {
		printf("the library's handler is not installed\n");
		return 1;
	}
	raise(SIGUSR2);
	early_lock_use();
	printf("done\n");
	return 0;
}
