/* An RCU-protected object freed while a reader holds it: the check and its
 * report. The kernel has no splat for this (KASAN finds the later use, if
 * any); the title follows its "BUG: held lock freed!". */
#define _GNU_SOURCE
#include "checks/check_rcu_free.h"
#include "checks/checks.h"
#include "report/report.h"

int check_rcu_free(struct thread_state *ts, const char *what, const void *p, size_t size,
		   struct rcu_free_check *c)
{
	c->what = what;
	c->lo = (uintptr_t)p;
	c->size = size;
	c->nr = rcu_deref_find_holders(ts, c->lo, c->lo + (size ? size : 1), c->holders);
	return c->nr != 0;
}

static void print_holder(unsigned index, const struct rcu_holder *h, uintptr_t lo)
{
	char comm[REPORT_COMM_MAX];
	report_thread_comm(h->tid, comm, sizeof(comm));
	enum rcu_flavor flavor = (enum rcu_flavor)(h->section & 0xff);
	const char *lock_name = flavor < NR_FLAVORS ? flavor_lock_name[flavor] : "rcu_read_lock";
	report_printf(" #%u: %s/%d %s(%s){rcu}, at: ", index, comm, h->tid,
		      h->section & DEREF_SECTION_QSBR_ONLINE ? "online since its last quiescent state " : "in ",
		      lock_name);
	if (h->section_ip)
		report_symbolized_ip(h->section_ip);
	else
		report_printf("(not known)");
	report_printf("\n     dereferenced %016lx (+0x%lx into the block), at: ", (unsigned long)h->ptr,
		      (unsigned long)(h->ptr - lo));
	report_symbolized_ip(h->deref_ip);
	report_printf("\n");
	if (h->forgotten)
		report_printf("     (and %llu earlier dereferences of its section, not remembered: the last %d are)\n",
			      (unsigned long long)h->forgotten, DEREF_SET_ENTRIES);
	report_record_lock("reader", NULL, lock_name, "rcu", h->section_ip);
}

struct freed_report {
	uintptr_t ip;
	const struct rcu_free_check *c;
};

static void print_rcu_object_freed_body(struct thread_state *ts, void *arg)
{
	const struct freed_report *r = arg;
	const struct rcu_free_check *c = r->c;
	report_site(r->ip, NULL, 0);
	report_printf(" %s() of an RCU-protected object a reader still holds!\n", c->what);
	report_printf("\nother info that might help us debug this:\n\n");
	report_printf("%s is freeing memory %016lx-%016lx ", report_task_name(), (unsigned long)c->lo,
		      (unsigned long)(c->lo + (c->size ? c->size : 1) - 1));
	if (c->size)
		report_printf("(%lu bytes)", (unsigned long)c->size);
	else
		report_printf("(its size is not known)");
	report_printf(", which %u thread%s dereferenced and still hold%s: %s RCU read-side critical section "
		      "has not ended since:\n", c->nr, c->nr == 1 ? "" : "s", c->nr == 1 ? "s" : "",
		      c->nr == 1 ? "its" : "their");
	report_record_lock("freed", (const void *)c->lo, "RCU-protected object", "memory", 0);
	unsigned shown = c->nr < MAX_HOLDERS_REPORTED ? c->nr : MAX_HOLDERS_REPORTED;
	for (unsigned i = 0; i < shown; i++)
		print_holder(i, &c->holders[i], c->lo);
	if (c->nr > shown)
		report_printf(" ... and %u more\n", c->nr - shown);
	report_printf("\nAn object unpublished from an RCU-protected pointer may be freed only after a grace\n"
		      "period: synchronize_rcu() between unpublishing and freeing it, or call_rcu() to free it.\n"
		      "A reader that dereferenced it before may use it until its read-side critical section ends.\n\n");
	report_held_locks(ts);
	report_backtrace();
}

void print_rcu_object_freed(struct thread_state *ts, uintptr_t ip, const struct rcu_free_check *c)
{
	if (!report_site_once(REPORT_RCU_USE_AFTER_FREE, ip))
		return;
	struct freed_report r = { ip, c };
	report_emit(ts, REPORT_RCU_USE_AFTER_FREE, ip, report_title_format[REPORT_TITLE_RCU_USE_AFTER_FREE],
		    print_rcu_object_freed_body, &r);
}
