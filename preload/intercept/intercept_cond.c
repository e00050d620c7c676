/* Condition variables release the mutex while waiting and take it again
 * before returning (also on timeout, and when cancellation unwinds), all
 * inside glibc where the mutex wrappers never see it: we model it here. */
#define _GNU_SOURCE
#include <pthread.h>
#include <time.h>
#include "checks/lock_tracking.h"
#include "runtime/real_functions.h"

INTERPOSE(pthread_cond_wait);
INTERPOSE(pthread_cond_timedwait);
INTERPOSE(pthread_cond_clockwait);

int pthread_cond_wait(pthread_cond_t *restrict c, pthread_mutex_t *restrict m)
{
	MUTEX_WAIT(REAL(pthread_cond_wait)(c, m));
}

int pthread_cond_timedwait(pthread_cond_t *restrict c, pthread_mutex_t *restrict m,
			   const struct timespec *restrict abstime)
{
	MUTEX_WAIT(REAL(pthread_cond_timedwait)(c, m, abstime));
}

int pthread_cond_clockwait(pthread_cond_t *restrict c, pthread_mutex_t *restrict m,
			   clockid_t clock, const struct timespec *restrict abstime)
{
	MUTEX_WAIT(REAL(pthread_cond_clockwait)(c, m, clock, abstime));
}
