/* The calls after which the process may no longer create its log: new
 * credentials (a daemon dropping root, apache's children becoming
 * www-data) or a new root directory. The log is created just before, so
 * reports made afterwards still reach log_path. Nothing else changes: the
 * real call, its result and errno are the program's. */
#define _GNU_SOURCE
#include <grp.h>
#include <string.h>
#include <unistd.h>
#include "runtime/log_output.h"
#include "runtime/real_functions.h"

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

/* Whether ids (real, effective, saved; -1: kept) are the process's already:
 * such a call changes nothing, and the tracer does nothing for it either
 * (netsniff-ng "drops" to the invoking user, root when root runs it). A
 * call that would set the saved id to the effective one counts as a change
 * unless they are equal. */
static int ids_unchanged(int (*get)(unsigned *, unsigned *, unsigned *), unsigned r, unsigned e, unsigned s,
			 int saved_follows)
{
	unsigned cr, ce, cs;
	if (get(&cr, &ce, &cs) != 0)
		return 0;
	return (r == (unsigned)-1 || r == cr) && (e == (unsigned)-1 || e == ce) && (s == (unsigned)-1 || s == cs) &&
	       (!saved_follows || cs == ce);
}

static int uids(unsigned *r, unsigned *e, unsigned *s) { return getresuid(r, e, s); }
static int gids(unsigned *r, unsigned *e, unsigned *s) { return getresgid(r, e, s); }

/* setuid()/setgid(): all three ids for a privileged caller, the effective
 * one otherwise; unchanged either way when all three are already it. */
#define SET_ALL(get, id) ids_unchanged(get, id, id, id, 0)

static int groups_unchanged(size_t n, const gid_t *list)
{
	gid_t now[256];
	int have = getgroups(256, now);
	return have >= 0 && (size_t)have == n && (n == 0 || !memcmp(now, list, n * sizeof(*list)));
}

int setuid(uid_t uid)
{
	if (!SET_ALL(uids, uid))
		BEFORE(uid, SAME);
	return REAL(setuid)(uid);
}
int seteuid(uid_t uid)
{
	if (!ids_unchanged(uids, (unsigned)-1, uid, (unsigned)-1, 0))
		BEFORE(uid, SAME);
	return REAL(seteuid)(uid);
}
int setreuid(uid_t r, uid_t e)
{
	if (!ids_unchanged(uids, r, e, (unsigned)-1, 1))
		BEFORE(effective(r, e), SAME);
	return REAL(setreuid)(r, e);
}
int setresuid(uid_t r, uid_t e, uid_t s)
{
	if (!ids_unchanged(uids, r, e, s, 0))
		BEFORE(effective(r, e), SAME);
	return REAL(setresuid)(r, e, s);
}
int setgid(gid_t gid)
{
	if (!SET_ALL(gids, gid))
		BEFORE(SAME, gid);
	return REAL(setgid)(gid);
}
int setegid(gid_t gid)
{
	if (!ids_unchanged(gids, (unsigned)-1, gid, (unsigned)-1, 0))
		BEFORE(SAME, gid);
	return REAL(setegid)(gid);
}
int setregid(gid_t r, gid_t e)
{
	if (!ids_unchanged(gids, r, e, (unsigned)-1, 1))
		BEFORE(SAME, effective(r, e));
	return REAL(setregid)(r, e);
}
int setresgid(gid_t r, gid_t e, gid_t s)
{
	if (!ids_unchanged(gids, r, e, s, 0))
		BEFORE(SAME, effective(r, e));
	return REAL(setresgid)(r, e, s);
}
int setgroups(size_t n, const gid_t *list)
{
	if (!groups_unchanged(n, list))
		BEFORE(SAME, SAME);
	return REAL(setgroups)(n, list);
}
int chroot(const char *path) { BEFORE(SAME, SAME); return REAL(chroot)(path); }
