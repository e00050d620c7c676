/* Thread names the program chose, as reports name them: one with bytes
 * that are not UTF-8, one with a newline followed by a title. Each thread
 * dereferences outside a read side, so that a report names it (in its
 * text, its "Comm:" line and its record). */
#include "target.h"

struct config {
	int value;
};
static struct config default_config = { 7 };
static struct config *current_config = &default_config;

static const char *name_to_use;

static void *named_reader(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), name_to_use);
	rcu_register_thread();
	struct config *c = rcu_dereference(current_config);
	printf("value %d\n", c->value);
	rcu_unregister_thread();
	return NULL;
}

/* 0xff and 0xfe never occur in UTF-8; 0xc3 starts a sequence that "(" does
 * not continue; 0xe2 0x82 is a sequence cut short by the end. */
SCENARIO not_utf8(void)
{
	name_to_use = "r\xff\xfe\xc3(x\xe2\x82";
	in_thread(named_reader);
	printf("done\n");
}

/* A name that would start a line of its own with a kernel title. */
SCENARIO newline_and_title(void)
{
	name_to_use = "r\nBUG: fake";
	in_thread(named_reader);
	printf("done\n");
}

/* Correct twin: a plain name (its report is the same bug). */
SCENARIO plain(void)
{
	name_to_use = "reader-1";
	in_thread(named_reader);
	printf("done\n");
}

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "not-utf8", not_utf8 },
		{ "newline-and-title", newline_and_title },
		{ "plain", plain },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
