/* Lock-order annotations of the header: a nesting subclass for parent and
 * child locks of one class, and a named class for locks a helper makes. */
#include "target.h"
#include <lockdep-rcu.h>

struct node {
	pthread_mutex_t lock;
	struct node *child;
};

static struct node *node_new(void)
{
	struct node *n = calloc(1, sizeof(*n));
	pthread_mutex_init(&n->lock, NULL);
	return n;
}

static struct node *parent, *child, *other;

/* parent then child (annotated as subclass 1, a class of its own), child
 * then cache, and elsewhere cache then a node lock: a real cycle through
 * node -> node/1 -> cache -> node, which the report shows with "/1". */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

SCENARIO nested_annotated(void)
{
	pthread_mutex_lock(&parent->lock);
	pthread_mutex_lock_nested(&parent->child->lock, 1);
	pthread_mutex_unlock(&parent->lock);   /* hand-over-hand down the tree */
	pthread_mutex_lock(&cache_lock);
	pthread_mutex_unlock(&cache_lock);
	pthread_mutex_unlock(&parent->child->lock);
	pthread_mutex_lock(&cache_lock);
	pthread_mutex_lock(&other->lock);
	pthread_mutex_unlock(&other->lock);
	pthread_mutex_unlock(&cache_lock);
	printf("done\n");
}

/* The same without the annotation: one class, cycle class -> cache -> class. */
SCENARIO nested_unannotated(void)
{
	pthread_mutex_lock(&parent->lock);
	pthread_mutex_lock(&parent->child->lock);
	pthread_mutex_lock(&cache_lock);
	pthread_mutex_unlock(&cache_lock);
	pthread_mutex_unlock(&parent->child->lock);
	pthread_mutex_unlock(&parent->lock);
	pthread_mutex_lock(&cache_lock);
	pthread_mutex_lock(&other->lock);
	pthread_mutex_unlock(&other->lock);
	pthread_mutex_unlock(&cache_lock);
	printf("done\n");
}

/* Named classes: reports say the given name. */
static const char request_key, session_key;
SCENARIO named_classes_inverted(void)
{
	struct node *a = node_new(), *b = node_new();
	lockdep_set_class_and_name(&a->lock, &request_key, "request_lock");
	lockdep_set_class_and_name(&b->lock, &session_key, "session_lock");
	pthread_mutex_lock(&a->lock); pthread_mutex_lock(&b->lock);
	pthread_mutex_unlock(&b->lock); pthread_mutex_unlock(&a->lock);
	pthread_mutex_lock(&b->lock); pthread_mutex_lock(&a->lock);
	pthread_mutex_unlock(&a->lock); pthread_mutex_unlock(&b->lock);
}

/* Two classes given one name (two keys, as two modules may name their
 * locks alike), each nested with cache_lock in one direction: no cycle
 * between classes, so no report; the graph keeps them two nodes. */
static const char conn_key_a, conn_key_b;
SCENARIO same_name_two_classes(void)
{
	struct node *a = node_new(), *b = node_new();
	lockdep_set_class_and_name(&a->lock, &conn_key_a, "conn_lock");
	lockdep_set_class_and_name(&b->lock, &conn_key_b, "conn_lock");
	pthread_mutex_lock(&a->lock); pthread_mutex_lock(&cache_lock);
	pthread_mutex_unlock(&cache_lock); pthread_mutex_unlock(&a->lock);
	pthread_mutex_lock(&cache_lock); pthread_mutex_lock(&b->lock);
	pthread_mutex_unlock(&b->lock); pthread_mutex_unlock(&cache_lock);
	printf("done\n");
}

int main(int argc, char **argv)
{
	parent = node_new();
	child = node_new();
	other = node_new();
	parent->child = child;
	static const struct scenario scenarios[] = {
		{ "bug-nested-annotated", nested_annotated },
		{ "bug-nested-unannotated", nested_unannotated },
		{ "bug-named-classes", named_classes_inverted },
		{ "same-name-two-classes", same_name_two_classes },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
