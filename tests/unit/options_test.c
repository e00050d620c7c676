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

Test(options, commas_and_white_space_separate_as_for_the_sanitizers)
{
	parse("max_frames=4,symbolize=0 exitcode=3\thalt_on_error=1\n, :print_summary=0");
	cr_expect_eq(tracer_options.max_frames, 4);
	cr_expect_eq(tracer_options.symbolize, 0);
	cr_expect_eq(tracer_options.exitcode, 3);
	cr_expect_eq(tracer_options.halt_on_error, 1);
	cr_expect_eq(tracer_options.print_summary, 0);
	cr_expect_str_empty(errors);
}

Test(options, quoted_values_hold_separators)
{
	parse("log_path='/tmp/a b,c:d.%p',max_frames=9:suppressions=\"/tmp/x y\"");
	cr_expect_str_eq(tracer_options.log_path, "/tmp/a b,c:d.%p");
	cr_expect_eq(tracer_options.max_frames, 9);
	cr_expect_str_eq(tracer_options.suppressions, "/tmp/x y");
	cr_expect_str_empty(errors);
	/* A quote that is never closed is a value like any other. */
	parse("log_path='/tmp/x:max_frames=3");
	cr_expect_str_eq(tracer_options.log_path, "'/tmp/x");
	cr_expect_eq(tracer_options.max_frames, 3);
}

Test(options, a_bad_value_is_shown_with_its_option)
{
	parse("max_frames=abc:exitcode=300:pair_frames=99");
	cr_expect_eq(lines(errors), 3, "%s", errors);
	cr_expect(strstr(errors, "'max_frames' in LOCKDEP_RCU_OPTIONS: expected an integer, got 'abc'"), "%s", errors);
	cr_expect(strstr(errors, "exitcode must be between 0 and 255, got '300'"), "%s", errors);
	cr_expect(strstr(errors, "got '99'"), "%s", errors);
}
