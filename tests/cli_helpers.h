/* Running the lockdep-rcu command (its ASan/UBSan build) and the files
 * around it: scratch directories, reading and writing whole files, checking
 * JSON. Shared by the command-line tests (test_cli*.c) and every other test
 * that needs a scratch directory or a file's text. */
#ifndef CLI_HELPERS_H
#define CLI_HELPERS_H

#include <stddef.h>
#include "harness.h"

/* build/tests/lockdep-rcu-asan */
const char *cli_tool(void);
/* build/targets/<name>, in a buffer of its own (up to 8 live at once). */
const char *cli_target(const char *name);

/* Fails the test on any ASan, UBSan or LSan report in r's stderr. */
void cli_expect_sanitizer_clean(const struct run *r);

/* Runs the tool with the arguments (NULL-terminated), env a NULL-terminated
 * list of "K=V" for it (through env(1)) or NULL; its run is checked for
 * sanitizer reports and for hanging. */
struct run cli_env(double timeout, const char *const *env, const char *arg, ...);

/* A new directory under /tmp (malloc'd); cli_remove_dir removes it with all
 * it holds and frees the name. */
char *cli_temp_dir(void);
void cli_remove_dir(char *dir);

/* The whole file, NUL-terminated (malloc'd), or NULL. */
char *cli_read(const char *path);
/* Writes len bytes of text to path (created or truncated), or fails the test. */
void cli_write(const char *path, const char *text, size_t len);
/* "dir/name", malloc'd. */
char *cli_path_in(const char *dir, const char *name);

int cli_ends_with(const char *name, const char *suffix);
/* Files in dir whose names start with prefix, or -1. */
int cli_count_files(const char *dir, const char *prefix);
/* The number right after the first prefix in text, or -1. */
int cli_number_after(const char *text, const char *prefix);

/* text is one whole valid JSON document (RFC 8259, strict). */
int cli_json_valid(const char *text);

#endif
