#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "../preload/base/options.h"
#include <unistd.h>
#include "launch.h"

#ifndef LOCKDEP_RCU_LIBDIR
#define LOCKDEP_RCU_LIBDIR "/usr/local/lib/lockdep-rcu"
#endif

#define TRACER_NAME "liblockdep-rcu.so"

static int readable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

char *find_tracer(struct strbuf *err)
{
	const char *env = getenv("LOCKDEP_RCU_PRELOAD");
	if (env && *env) {
		if (readable_file(env))
			return path_absolute(env);
		sb_printf(err, "the tracer library LOCKDEP_RCU_PRELOAD=%s cannot be read: %s", env,
			  access(env, F_OK) ? strerror(errno) : "not a regular file");
		return NULL;
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct strbuf looked = { 0 };
	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		*slash = 0;
		/* build/lockdep-rcu next to build/liblockdep-rcu.so; PREFIX/bin and
		 * PREFIX/lib/lockdep-rcu once installed */
		static const char *const candidates[] = { "%s/" TRACER_NAME, "%s/../lib/lockdep-rcu/" TRACER_NAME };
		for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
			char path[PATH_MAX + 64];
			snprintf(path, sizeof(path), candidates[i], self);
			if (readable_file(path)) {
				sb_free(&looked);
				char real[PATH_MAX];
				return xstrdup(realpath(path, real) ? real : path);
			}
			sb_printf(&looked, "%s, ", path);
		}
	}
	const char *installed = LOCKDEP_RCU_LIBDIR "/" TRACER_NAME;
	if (readable_file(installed)) {
		sb_free(&looked);
		return xstrdup(installed);
	}
	sb_printf(err, "cannot find the tracer library " TRACER_NAME " (looked for %s%s); build it with make, "
		  "install it with make install, or set LOCKDEP_RCU_PRELOAD to its path",
		  looked.s ? looked.s : "", installed);
	sb_free(&looked);
	return NULL;
}

static char *check_candidate(const char *path, struct strbuf *err, int *status)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		sb_printf(err, "%s: %s", path, strerror(errno));
		*status = 127;
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		sb_printf(err, "%s: is a directory", path);
		*status = 126;
		return NULL;
	}
	if (access(path, X_OK) < 0) {
		sb_printf(err, "%s: not executable: %s", path, strerror(errno));
		*status = 126;
		return NULL;
	}
	return path_absolute(path);
}

char *resolve_program(const char *name, struct strbuf *err, int *status)
{
	if (!*name) {
		sb_puts(err, "empty program name");
		*status = 127;
		return NULL;
	}
	if (strchr(name, '/'))
		return check_candidate(name, err, status);
	const char *path = getenv("PATH");
	char *copy = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	char *found = NULL, *save = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *candidate = path_join(*dir ? dir : ".", name);
		struct stat st;
		if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode) && access(candidate, X_OK) == 0)
			found = path_absolute(candidate);
		free(candidate);
	}
	free(copy);
	if (!found) {
		sb_printf(err, "%s: command not found (not in PATH)", name);
		*status = 127;
	}
	return found;
}

struct elf_info {
	int is_elf;
	int elf_class;          /* ELFCLASS32 / ELFCLASS64 */
	int machine;
	int has_interp;
	int has_dynamic;
	int type;
};

static int read_at(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);
	return n == (ssize_t)len ? 0 : -1;
}

/* Reads the ELF header and program headers. -1 when the file cannot be
 * read; is_elf 0 for other files. */
static int elf_inspect(const char *path, struct elf_info *info)
{
	memset(info, 0, sizeof(*info));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	unsigned char ident[EI_NIDENT];
	if (read_at(fd, ident, sizeof(ident), 0) || memcmp(ident, ELFMAG, SELFMAG)) {
		close(fd);
		return 0;
	}
	info->is_elf = 1;
	info->elf_class = ident[EI_CLASS];
	if (info->elf_class == ELFCLASS64) {
		Elf64_Ehdr eh;
		if (read_at(fd, &eh, sizeof(eh), 0) == 0) {
			info->machine = eh.e_machine;
			info->type = eh.e_type;
			for (unsigned i = 0; i < eh.e_phnum && i < 4096; i++) {
				Elf64_Phdr ph;
				if (eh.e_phentsize < sizeof(ph) ||
				    read_at(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (Elf64_Off)i * eh.e_phentsize)))
					break;
				info->has_interp |= ph.p_type == PT_INTERP;
				info->has_dynamic |= ph.p_type == PT_DYNAMIC;
			}
		}
	} else if (info->elf_class == ELFCLASS32) {
		Elf32_Ehdr eh;
		if (read_at(fd, &eh, sizeof(eh), 0) == 0) {
			info->machine = eh.e_machine;
			info->type = eh.e_type;
			for (unsigned i = 0; i < eh.e_phnum && i < 4096; i++) {
				Elf32_Phdr ph;
				if (eh.e_phentsize < sizeof(ph) ||
				    read_at(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (Elf32_Off)i * eh.e_phentsize)))
					break;
				info->has_interp |= ph.p_type == PT_INTERP;
				info->has_dynamic |= ph.p_type == PT_DYNAMIC;
			}
		}
	}
	close(fd);
	return 0;
}

/* "#!/path/interp args": the interpreter path, or NULL. */
static char *script_interpreter(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char buf[256];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 3 || buf[0] != '#' || buf[1] != '!')
		return NULL;
	buf[n] = 0;
	char *p = buf + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t len = strcspn(p, " \t\n");
	return len ? xstrndup(p, len) : NULL;
}

int check_preloadable(const char *program, const char *tracer, struct strbuf *err)
{
	struct elf_info prog, lib;
	char *interp = NULL;
	const char *checked = program;
	if (elf_inspect(program, &prog) < 0) {
		sb_printf(err, "%s: cannot read: %s", program, strerror(errno));
		return -1;
	}
	if (!prog.is_elf && (interp = script_interpreter(program)) != NULL) {
		checked = interp;   /* the kernel runs the interpreter: that is what gets preloaded */
		if (elf_inspect(interp, &prog) < 0)
			prog.is_elf = 0;   /* exec will say what is wrong with it */
	}
	int ret = 0;
	if (!prog.is_elf)
		goto out;   /* not ELF: leave it to exec (binfmt_misc, ...) */
	if (elf_inspect(tracer, &lib) < 0 || !lib.is_elf) {
		sb_printf(err, "the tracer library %s is not an ELF file", tracer);
		ret = -1;
	} else if (prog.elf_class != lib.elf_class || prog.machine != lib.machine) {
		sb_printf(err, "%s is a %d-bit program for another ELF class or machine than the tracer "
			  "library %s: the dynamic loader would ignore LD_PRELOAD",
			  checked, prog.elf_class == ELFCLASS32 ? 32 : 64, tracer);
		ret = -1;
	} else if (!prog.has_interp) {
		sb_printf(err, "%s is statically linked%s: LD_PRELOAD cannot work there (no dynamic loader "
			  "runs to load the tracer, and its pthread calls are bound at link time); "
			  "link it dynamically to check it",
			  checked, prog.has_dynamic ? " (static-pie)" : "");
		ret = -1;
	}
out:
	free(interp);
	return ret;
}

int is_secure_exec(const char *program)
{
	struct stat st;
	if (stat(program, &st) < 0)
		return 0;
	return ((st.st_mode & S_ISUID) && st.st_uid != geteuid() && geteuid() != 0) ||
	       ((st.st_mode & S_ISGID) && st.st_gid != getegid() && geteuid() != 0);
}

char *compose_preload(const char *tracer, const char *old)
{
	if (!old || !*old)
		return xstrdup(tracer);
	/* Already there (a nested run)? Keep the list as it is. */
	char *copy = xstrdup(old), *save = NULL;
	for (char *t = strtok_r(copy, ": ", &save); t; t = strtok_r(NULL, ": ", &save))
		if (!strcmp(t, tracer)) {
			free(copy);
			return xstrdup(old);
		}
	free(copy);
	return xasprintf("%s:%s", tracer, old);
}

void options_append(struct strbuf *options, const char *kv)
{
	if (!kv || !*kv)
		return;
	if (options->len)
		sb_putc(options, ':');
	sb_puts(options, kv);
}

void options_append_value(struct strbuf *options, const char *key, const char *value)
{
	int plain = 1;
	for (const char *c = value; *c && plain; c++)
		plain = !options_separator(*c) && *c != '\'' && *c != '"';
	/* Quoted as the tracer reads it when the value holds a separator (a
	 * path with a comma or a space). */
	char *kv = plain ? xasprintf("%s=%s", key, value)
			 : xasprintf("%s=%c%s%c", key, strchr(value, '"') ? '\'' : '"', value,
				     strchr(value, '"') ? '\'' : '"');
	options_append(options, kv);
	free(kv);
}

/* The value of the last `key` in options (as the tracer reads them, the
 * last wins) into buf, or NULL. */
static const char *option_value_of(const char *options, const char *key, char *buf, size_t size)
{
	const char *found = NULL;
	struct option_field f;
	int got;
	while ((got = options_next(&options, &f)) != 0)
		if (got > 0 && f.key_len == strlen(key) && !memcmp(f.key, key, f.key_len)) {
			snprintf(buf, size, "%.*s", (int)f.value_len, f.value);
			found = buf;
		}
	return found;
}

static int option_given(const char *options, const char *key)
{
	char buf[16];
	return option_value_of(options, key, buf, sizeof(buf)) != NULL;
}

int options_set(const char *options, const char *key)
{
	char buf[8];
	return options && option_value_of(options, key, buf, sizeof(buf)) && buf[0];
}

void options_hang_timeouts(struct strbuf *options, double timeout)
{
	/* half of what is left once the watchdog's second of lock waiting
	 * and its look interval are taken off */
	long seconds = (long)((timeout - 2) / 2);
	if (seconds < 1)
		seconds = 1;
	static const struct { const char *key; long tracer_default; } timeouts[] = {
		{ "hung_task_timeout", 120 },
		{ "stall_timeout", 21 },
	};
	for (size_t i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); i++) {
		if (option_given(options->s, timeouts[i].key))
			continue;
		long value = seconds < timeouts[i].tracer_default ? seconds : timeouts[i].tracer_default;
		char *kv = xasprintf("%s=%ld", timeouts[i].key, value);
		options_append(options, kv);
		free(kv);
	}
}

int options_exitcode(const char *options)
{
	char buf[32];
	long v;
	if (options && option_value_of(options, "exitcode", buf, sizeof(buf)) && parse_long(buf, 0, 255, &v) == 0)
		return (int)v;
	return 66;
}

pid_t spawn_program(const struct spawn *s, struct strbuf *err)
{
	int report[2];
	if (pipe2(report, O_CLOEXEC)) {
		sb_printf(err, "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		sb_printf(err, "fork: %s", strerror(errno));
		close(report[0]);
		close(report[1]);
		return -1;
	}
	if (pid == 0) {
		/* The program starts with the signal state a shell would give it. */
		static const int sigs[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE };
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			signal(sigs[i], SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (s->new_process_group)
			setpgid(0, 0);
		if (s->null_stdin) {
			int null = open("/dev/null", O_RDONLY);
			if (null >= 0 && null != 0) {
				dup2(null, 0);
				close(null);
			}
		}
		if (s->out_fd >= 0)
			dup2(s->out_fd, 1);
		if (s->err_fd >= 0)
			dup2(s->err_fd, 2);
		setenv("LD_PRELOAD", s->preload, 1);
		if (s->options)
			setenv("LOCKDEP_RCU_OPTIONS", s->options, 1);
		execv(s->path, s->argv);
		int e = errno;
		if (write(report[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(report[1]);
	int e;
	ssize_t n;
	while ((n = read(report[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(report[0]);
	if (n == (ssize_t)sizeof(e)) {
		int status;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		sb_printf(err, "cannot run %s: %s", s->path, strerror(e));
		return -1;
	}
	return pid;
}
