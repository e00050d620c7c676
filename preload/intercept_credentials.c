/* The calls after which the process may no longer create its log: new
 * credentials (a daemon dropping root, apache's children becoming
 * www-data) or a new root directory. The log is created just before, so
 * reports made afterwards still reach log_path. Nothing else changes: the
 * real call, its result and errno are the program's. */
#define _GNU_SOURCE
#include <grp.h>
#include <unistd.h>
#include "log_output.h"
#include "real_functions.h"

#define BEFORE(uid, gid) log_output_prepare((int)(uid), (int)(gid))
#define SAME -1

INTERPOSE(setuid);
INTERPOSE(seteuid);
INTERPOSE(setreuid);
INTERPOSE(setresuid);
INTERPOSE(setgid);
INTERPOSE(setegid);
INTERPOSE(setregid);
INTERPOSE(setresgid);
INTERPOSE(setgroups);
INTERPOSE(chroot);

/* The identity files are made with afterwards: the effective one. */
static int effective(uid_t real, uid_t eff)
{
	return eff != (uid_t)-1 ? (int)eff : real != (uid_t)-1 ? (int)real : SAME;
}

int setuid(uid_t uid) { BEFORE(uid, SAME); return REAL(setuid)(uid); }
int seteuid(uid_t uid) { BEFORE(uid, SAME); return REAL(seteuid)(uid); }
int setreuid(uid_t r, uid_t e) { BEFORE(effective(r, e), SAME); return REAL(setreuid)(r, e); }
int setresuid(uid_t r, uid_t e, uid_t s) { BEFORE(effective(r, e), SAME); return REAL(setresuid)(r, e, s); }
int setgid(gid_t gid) { BEFORE(SAME, gid); return REAL(setgid)(gid); }
int setegid(gid_t gid) { BEFORE(SAME, gid); return REAL(setegid)(gid); }
int setregid(gid_t r, gid_t e) { BEFORE(SAME, effective(r, e)); return REAL(setregid)(r, e); }
int setresgid(gid_t r, gid_t e, gid_t s) { BEFORE(SAME, effective(r, e)); return REAL(setresgid)(r, e, s); }
int setgroups(size_t n, const gid_t *list) { BEFORE(SAME, SAME); return REAL(setgroups)(n, list); }
int chroot(const char *path) { BEFORE(SAME, SAME); return REAL(chroot)(path); }
