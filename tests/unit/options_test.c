/* The LOCKDEP_RCU_OPTIONS parser, as pure logic under ASan/UBSan: good
 * values apply, bad ones are named in one error line each and leave the
 * defaults, and nothing is read past the string. */
#include <criterion/criterion.h>
#include <string.h>
#include "base/options.h"

/* The parser reports through the writer it is given; capture it here. */
static char errors[4096];
static size_t errors_len;

static void capture(const char *buf, size_t len)
{
	if (errors_len + len >= sizeof(errors))
		len = sizeof(errors) - errors_len - 1;
	memcpy(errors + errors_len, buf, len);
	errors_len += len;
	errors[errors_len] = 0;
}

static void parse(const char *text)
{
	errors_len = 0;
	errors[0] = 0;
	options_reset();
	options_parse(text, capture);
}

static int lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

Test(options, defaults)
{
	parse(NULL);
	cr_expect_eq(tracer_options.exitcode, 66);
	cr_expect_eq(tracer_options.halt_on_error, 0);
	cr_expect_eq(tracer_options.max_frames, 32);
	cr_expect_str_empty(tracer_options.log_path);
	cr_expect_str_empty(errors);
}

Test(options, key_value_pairs_split_by_colons)
{
	parse("log_path=/tmp/x.%p:exitcode=3:halt_on_error=1:max_frames=5");
	cr_expect_str_eq(tracer_options.log_path, "/tmp/x.%p");
	cr_expect_eq(tracer_options.exitcode, 3);
	cr_expect_eq(tracer_options.halt_on_error, 1);
	cr_expect_eq(tracer_options.max_frames, 5);
	cr_expect_str_empty(errors);
}

Test(options, empty_fields_and_hex_are_fine)
{
	parse("::exitcode=0x10::");
	cr_expect_eq(tracer_options.exitcode, 16);
	cr_expect_str_empty(errors);
}

Test(options, each_bad_option_is_named_once_and_keeps_the_default)
{
	parse("exitcode=abc:max_frames=0:bogus=1:noequals:exitcode=300:max_frames=7");
	cr_expect_eq(tracer_options.exitcode, 66);
	cr_expect_eq(tracer_options.max_frames, 7);
	cr_expect_eq(lines(errors), 5, "%s", errors);
	cr_expect(strstr(errors, "'exitcode'"), "%s", errors);
	cr_expect(strstr(errors, "'max_frames'"), "%s", errors);
	cr_expect(strstr(errors, "'bogus'"), "%s", errors);
	cr_expect(strstr(errors, "'noequals'"), "%s", errors);
	cr_expect(strstr(errors, "exitcode must be between 0 and 255"), "%s", errors);
}

Test(options, overlong_values_are_refused)
{
	char text[2000] = "log_path=";
	memset(text + 9, 'a', sizeof(text) - 10);
	text[sizeof(text) - 1] = 0;
	parse(text);
	cr_expect_str_empty(tracer_options.log_path);
	cr_expect(strstr(errors, "value too long"), "%s", errors);
}
