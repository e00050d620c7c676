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

#define BEFORE_CREDENTIALS_CHANGE() log_output_prepare()

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

int setuid(uid_t uid) { BEFORE_CREDENTIALS_CHANGE(); return REAL(setuid)(uid); }
int seteuid(uid_t uid) { BEFORE_CREDENTIALS_CHANGE(); return REAL(seteuid)(uid); }
int setreuid(uid_t r, uid_t e) { BEFORE_CREDENTIALS_CHANGE(); return REAL(setreuid)(r, e); }
int setresuid(uid_t r, uid_t e, uid_t s) { BEFORE_CREDENTIALS_CHANGE(); return REAL(setresuid)(r, e, s); }
int setgid(gid_t gid) { BEFORE_CREDENTIALS_CHANGE(); return REAL(setgid)(gid); }
int setegid(gid_t gid) { BEFORE_CREDENTIALS_CHANGE(); return REAL(setegid)(gid); }
int setregid(gid_t r, gid_t e) { BEFORE_CREDENTIALS_CHANGE(); return REAL(setregid)(r, e); }
int setresgid(gid_t r, gid_t e, gid_t s) { BEFORE_CREDENTIALS_CHANGE(); return REAL(setresgid)(r, e, s); }
int setgroups(size_t n, const gid_t *list) { BEFORE_CREDENTIALS_CHANGE(); return REAL(setgroups)(n, list); }
int chroot(const char *path) { BEFORE_CREDENTIALS_CHANGE(); return REAL(chroot)(path); }
