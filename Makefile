# lockdep-rcu: make builds the preload and the command line; make test runs
# the Criterion suite; make bench the speed targets (bench-peers, bench-real:
# against other tools, on real servers); make demo the demo.

CC ?= cc
PREFIX ?= /usr/local
DESTDIR ?=
BUILD := build
.DEFAULT_GOAL := all
# Builds run one job per CPU unless -j says otherwise (recipes that measure,
# make bench's, are one shell each and still run alone).
ifeq ($(findstring -j,$(MAKEFLAGS))$(findstring --jobs,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc)
endif

WARN := -Wall -Wextra
CFLAGS ?= -O2 -g
PRELOAD_CFLAGS := $(CFLAGS) $(WARN) -Ipreload -fPIC -pthread -fno-omit-frame-pointer \
	-ftls-model=initial-exec
PRELOAD_LDFLAGS := -shared -pthread -ldl -Wl,--no-undefined -Wl,--version-script=preload/exports.map \
	-Wl,-z,now -Wl,-z,nodelete
# The libraries the symbolizer uses, linked in statically (Debian's archives are
# position-independent in Debian): nothing new loaded into the host, and
# exports.map keeps their symbols local (docs/libraries.md).
SYMBOLIZE_LIBS := -l:libz.a -l:libiberty.a

# The tracer's layers, one folder each (preload/check-layers.sh, docs/design.md).
PRELOAD_SRCS := $(wildcard preload/*/*.c)
PRELOAD_OBJS := $(PRELOAD_SRCS:preload/%.c=$(BUILD)/preload/%.o)
PRELOAD_HDRS := $(wildcard preload/*/*.h) include/lockdep-rcu.h
PRELOAD := $(BUILD)/liblockdep-rcu.so

TOOL_SRCS := $(wildcard tools/*.c)
TOOL := $(BUILD)/lockdep-rcu

# Target programs of the test suite: each tests/targets/X.c becomes
# build/targets/X.<flavor> for every liburcu flavor it is written for.
URCU_FLAVORS := memb mb signal qsbr bp
FLAVOR_CFLAGS_memb :=
FLAVOR_CFLAGS_mb := -DRCU_MB
FLAVOR_CFLAGS_signal := -DRCU_SIGNAL
FLAVOR_CFLAGS_qsbr := -DTARGET_QSBR
FLAVOR_CFLAGS_bp := -DTARGET_BP
FLAVOR_LIBS_memb := -lurcu-memb
FLAVOR_LIBS_mb := -lurcu-mb
FLAVOR_LIBS_signal := -lurcu-signal
FLAVOR_LIBS_qsbr := -lurcu-qsbr
FLAVOR_LIBS_bp := -lurcu-bp
TARGET_CFLAGS := -O1 -g -Wall -Wextra -pthread -Iinclude -Itests/targets
TARGET_SRCS := $(wildcard tests/targets/*.c)
TARGET_NAMES := $(TARGET_SRCS:tests/targets/%.c=%)
TARGETS := $(foreach t,$(TARGET_NAMES),$(foreach f,$(URCU_FLAVORS),$(BUILD)/targets/$(t).$(f)))
# A few built -no-pie and with _LGPL_SOURCE too, to test those builds.
NOPIE_TARGETS := $(BUILD)/targets/header_checks.memb.nopie $(BUILD)/targets/deref_outside_reader.memb.nopie
LGPL_TARGETS := $(BUILD)/targets/header_checks.memb.lgpl $(BUILD)/targets/header_checks.qsbr.lgpl \
	$(foreach f,$(URCU_FLAVORS),$(BUILD)/targets/lgpl_inline.$(f).lgpl $(BUILD)/targets/lfht_resize.$(f).lgpl $(BUILD)/targets/lfht_rules.$(f).lgpl \
		$(BUILD)/targets/lfq_rules.$(f).lgpl $(BUILD)/targets/rcu_free_while_held.$(f).lgpl $(BUILD)/targets/publication.$(f).lgpl)
# Built at -O2 as well (calls inlined, frames merged), with and without
# _LGPL_SOURCE: the liburcu-cds checks and checked publication.
O2_TARGETS := $(foreach f,$(URCU_FLAVORS),$(BUILD)/targets/lfht_rules.$(f).o2 $(BUILD)/targets/lfht_rules.$(f).lgpl.o2 \
	$(BUILD)/targets/lfq_rules.$(f).o2 $(BUILD)/targets/lfq_rules.$(f).lgpl.o2 \
	$(BUILD)/targets/publication.$(f).o2 $(BUILD)/targets/publication.$(f).lgpl.o2 \
	$(BUILD)/targets/header_checks.$(f).o2 $(BUILD)/targets/header_checks.$(f).lgpl.o2)

# Programs that need their own link lines: a plugin that links liburcu in
# its own scope and its host; a library whose destructor witnesses exit.
PLUGIN_TARGETS := $(BUILD)/targets/liburcu_plugin.so $(BUILD)/targets/plugin_host \
	$(BUILD)/targets/libexit_witness.so $(BUILD)/targets/exit_witness_main \
	$(BUILD)/targets/libunwind_host $(BUILD)/targets/liblock_plugin_a.so $(BUILD)/targets/liblock_plugin_b.so \
	$(BUILD)/targets/libearly_handler.so $(BUILD)/targets/early_handler_main $(BUILD)/targets/signal_cache_main \
	$(BUILD)/targets/cxx_accounts $(BUILD)/targets/sandboxed \
	$(BUILD)/targets/deepbind_host $(BUILD)/targets/libdeepbind_plugin.so \
	$(BUILD)/targets/stripped_host $(BUILD)/targets/libstripped_constructor.so
$(BUILD)/targets/libstripped_constructor.so: tests/targets/plugins/stripped_constructor.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIC -shared -s $< -o $@
$(BUILD)/targets/stripped_host: tests/targets/plugins/stripped_host.c $(BUILD)/targets/libstripped_constructor.so
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) $< -o $@ -L$(BUILD)/targets -lstripped_constructor -Wl,-rpath,'$$ORIGIN'
$(BUILD)/targets/deepbind_host: tests/targets/plugins/deepbind_host.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) $< -o $@ -ldl -Wl,-rpath,'$$ORIGIN'
$(BUILD)/targets/libdeepbind_plugin.so: tests/targets/plugins/deepbind_plugin.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -fPIC -shared $< -o $@
$(BUILD)/targets/sandboxed: tests/targets/plugins/sandboxed.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) $< -o $@
# C++: its symbols are mangled (reports name them demangled).
$(BUILD)/targets/cxx_accounts: tests/targets/plugins/cxx_accounts.cc
	@mkdir -p $(@D)
	$(CXX) -O1 -g -Wall -Wextra -pthread $< -o $@
$(BUILD)/targets/liburcu_plugin.so: tests/targets/plugins/urcu_plugin.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -shared -fPIC $< -o $@ -lurcu-memb -lurcu-common
$(BUILD)/targets/plugin_host: tests/targets/plugins/plugin_host.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) $< -o $@ -ldl
$(BUILD)/targets/libexit_witness.so: tests/targets/plugins/exit_witness.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -shared -fPIC $< -o $@
$(BUILD)/targets/liblock_plugin_a.so: tests/targets/plugins/lock_plugin.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -DORDER_A -shared -fPIC $< -o $@
$(BUILD)/targets/liblock_plugin_b.so: tests/targets/plugins/lock_plugin.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -DORDER_B -shared -fPIC $< -o $@
$(BUILD)/targets/libunwind_host: tests/targets/plugins/libunwind_host.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) $< -o $@ -Wl,--no-as-needed /usr/lib/x86_64-linux-gnu/libunwind.so.8
$(BUILD)/targets/exit_witness_main: tests/targets/plugins/exit_witness_main.c $(BUILD)/targets/libexit_witness.so
	$(CC) $(TARGET_CFLAGS) $< -o $@ -L$(BUILD)/targets -lexit_witness -Wl,-rpath,'$$ORIGIN'
# pthreads only, no liburcu: the lock wrappers' own fast path with a handler installed.
$(BUILD)/targets/signal_cache_main: tests/targets/plugins/signal_cache_main.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) $< -o $@
# A library whose constructor installs a signal handler before the tracer's runs.
$(BUILD)/targets/libearly_handler.so: tests/targets/plugins/early_handler.c
	@mkdir -p $(@D)
	$(CC) $(TARGET_CFLAGS) -shared -fPIC $< -o $@
$(BUILD)/targets/early_handler_main: tests/targets/plugins/early_handler_main.c $(BUILD)/targets/libearly_handler.so
	$(CC) $(TARGET_CFLAGS) $< -o $@ -L$(BUILD)/targets -learly_handler -Wl,-rpath,'$$ORIGIN'

SUITE_SRCS := $(wildcard tests/*.c)
SUITE := $(BUILD)/tests/suite
SANITIZE := -fsanitize=address,undefined -fno-omit-frame-pointer
UNIT := $(BUILD)/tests/unit
# The symbolizer: its own ELF and DWARF readers, zlib's inflate(), no libdw, no malloc.
SYMBOLIZE_SRCS := preload/symbolize/symbolize.c preload/symbolize/demangle.c preload/symbolize/module_list.c preload/symbolize/debug_file.c \
	preload/symbolize/elf_image.c preload/symbolize/symbol_table.c preload/symbolize/dwarf_line.c preload/symbolize/dwarf_form.c \
	preload/symbolize/dwarf_comp_dir.c preload/symbolize/inflate.c preload/runtime/tracer_arena.c preload/base/tracer_sort.c preload/runtime/sandbox.c
SYMBOLIZE_HDRS := $(SYMBOLIZE_SRCS:.c=.h) preload/base/byte_reader.h preload/symbolize/dwarf_constants.h
# The symbolizer's test program in every build it must read: PIE and -no-pie,
# DWARF 4 and 3 line tables, stripped, and split into a debuglink file with
# zlib-compressed sections; plus two libraries it dlopen()s.
SYMBOLIZE_TARGETS := $(addprefix $(BUILD)/tests/symbolize_target_,pie nopie dwarf4 dwarf3 \
	stripped debuglink) $(BUILD)/tests/libsymbolize_plugin_a.so $(BUILD)/tests/libsymbolize_plugin_b.so

# The workloads (tests/bench/<w>.c), built plain: make bench measures them
# plain and preloaded against the targets, make bench-peers also under
# ThreadSanitizer (separate binaries) and Helgrind; make bench-real measures
# real servers. The tracer measured is BENCH_PRELOAD: this tree's build by
# default, or any other build given by absolute path (then it is not built):
#   make bench BENCH_PRELOAD=/work/main/build/liblockdep-rcu.so
BENCH_WORKLOADS := lock_heavy rcu_read_heavy many_locks rwlock_read_mostly free_cost lfht_lookup fork_wait spawn
PEER_WORKLOADS := lock_heavy rcu_read_heavy many_locks rwlock_read_mostly
BENCH_BINS := $(BENCH_WORKLOADS:%=$(BUILD)/bench/%)
BENCH_TSAN_BINS := $(PEER_WORKLOADS:%=$(BUILD)/bench/tsan/%)
BENCH_LIBS_rcu_read_heavy := -lurcu-memb -lurcu-common
BENCH_LIBS_rcu_deref_cost := -lurcu-memb -lurcu-common
BENCH_LIBS_lfht_lookup := -lurcu-memb -lurcu-cds -lurcu-common
BENCH_PRELOAD ?= $(PRELOAD)
BENCH_PRELOAD_DEP := $(filter $(PRELOAD),$(BENCH_PRELOAD))
BENCH_REAL_WORKDIR ?= $(BUILD)/bench-real

.PHONY: all check-layers check-docs docs man test test-deps bench bench-floor bench-peers bench-real demo install clean
all: $(PRELOAD) $(TOOL)

$(BUILD)/preload/%.o: preload/%.c $(PRELOAD_HDRS)
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -c $< -o $@

$(PRELOAD): $(PRELOAD_OBJS) preload/exports.map
	$(CC) $(PRELOAD_OBJS) $(PRELOAD_LDFLAGS) $(SYMBOLIZE_LIBS) -o $@

# The command shares the suppressions parser, the option table
# (preload/base/options.h), the report kinds and titles
# (preload/base/report_kinds.h) and the demangler with the tracer.
TOOL_DEPS := $(TOOL_SRCS) $(wildcard tools/*.h) preload/base/suppressions.c preload/base/suppressions.h preload/base/options.h preload/base/options.c preload/base/utf8.h \
	preload/base/report_kinds.c preload/base/report_kinds.h preload/base/graph_format.h preload/base/record_schema.h \
	preload/symbolize/demangle.c preload/symbolize/demangle.h
$(TOOL): $(TOOL_DEPS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -Ipreload -DLOCKDEP_RCU_LIBDIR='"$(PREFIX)/lib/lockdep-rcu"' $(TOOL_SRCS) preload/base/options.c preload/base/suppressions.c preload/base/report_kinds.c preload/symbolize/demangle.c -o $@ -l:libiberty.a -ljansson
# The same under ASan/UBSan for the test suite; its tracer is the one in build/.
TOOL_ASAN := $(BUILD)/tests/lockdep-rcu-asan
$(TOOL_ASAN): $(TOOL_DEPS)
	@mkdir -p $(@D)
	$(CC) -O1 -g $(WARN) -Ipreload $(SANITIZE) -DLOCKDEP_RCU_LIBDIR='"$(abspath $(BUILD))"' $(TOOL_SRCS) preload/base/options.c preload/base/suppressions.c preload/base/report_kinds.c preload/symbolize/demangle.c -o $@ -l:libiberty.a -ljansson

# ---- test targets ---------------------------------------------------------
define flavored_target
$(BUILD)/targets/%.$(1): tests/targets/%.c tests/targets/target.h include/lockdep-rcu.h
	@mkdir -p $$(@D)
	$$(CC) $$(TARGET_CFLAGS) $$(FLAVOR_CFLAGS_$(1)) $$< -o $$@ -Wl,--as-needed $$(FLAVOR_LIBS_$(1)) -lurcu-cds -lurcu-common
$(BUILD)/targets/%.$(1).nopie: tests/targets/%.c tests/targets/target.h include/lockdep-rcu.h
	@mkdir -p $$(@D)
	$$(CC) $$(TARGET_CFLAGS) -fno-pie -no-pie $$(FLAVOR_CFLAGS_$(1)) $$< -o $$@ -Wl,--as-needed $$(FLAVOR_LIBS_$(1)) -lurcu-cds -lurcu-common
$(BUILD)/targets/%.$(1).lgpl: tests/targets/%.c tests/targets/target.h include/lockdep-rcu.h
	@mkdir -p $$(@D)
	$$(CC) $$(TARGET_CFLAGS) -D_LGPL_SOURCE $$(FLAVOR_CFLAGS_$(1)) $$< -o $$@ -Wl,--as-needed $$(FLAVOR_LIBS_$(1)) -lurcu-cds -lurcu-common
$(BUILD)/targets/%.$(1).o2: tests/targets/%.c tests/targets/target.h include/lockdep-rcu.h
	@mkdir -p $$(@D)
	$$(CC) $$(TARGET_CFLAGS) -O2 $$(FLAVOR_CFLAGS_$(1)) $$< -o $$@ -Wl,--as-needed $$(FLAVOR_LIBS_$(1)) -lurcu-cds -lurcu-common
$(BUILD)/targets/%.$(1).lgpl.o2: tests/targets/%.c tests/targets/target.h include/lockdep-rcu.h
	@mkdir -p $$(@D)
	$$(CC) $$(TARGET_CFLAGS) -O2 -D_LGPL_SOURCE $$(FLAVOR_CFLAGS_$(1)) $$< -o $$@ -Wl,--as-needed $$(FLAVOR_LIBS_$(1)) -lurcu-cds -lurcu-common
endef
$(foreach f,$(URCU_FLAVORS),$(eval $(call flavored_target,$(f))))

# The suite reads the tracer's records as the command does: jansson, with
# the flags of tools/json.h.
$(SUITE): $(SUITE_SRCS) $(wildcard tests/*.h) tools/json.h tools/util.h
	@mkdir -p $(@D)
	$(CC) -O1 -g $(WARN) -Itests $(SANITIZE) $(SUITE_SRCS) -o $@ -lcriterion -ljansson

SYMBOLIZE_TARGET_DEPS := tests/unit/symbolize_target.c $(SYMBOLIZE_SRCS) $(SYMBOLIZE_HDRS)
SYMBOLIZE_TARGET_BUILD = $(CC) -O0 $(WARN) -pthread -Ipreload tests/unit/symbolize_target.c $(SYMBOLIZE_SRCS) $(SYMBOLIZE_LIBS)
$(BUILD)/tests/symbolize_target_pie: $(SYMBOLIZE_TARGET_DEPS)
	@mkdir -p $(@D)
	$(SYMBOLIZE_TARGET_BUILD) -g -fpie -pie -o $@
$(BUILD)/tests/symbolize_target_nopie: $(SYMBOLIZE_TARGET_DEPS)
	@mkdir -p $(@D)
	$(SYMBOLIZE_TARGET_BUILD) -g -fno-pie -no-pie -o $@
$(BUILD)/tests/symbolize_target_dwarf4: $(SYMBOLIZE_TARGET_DEPS)
	@mkdir -p $(@D)
	$(SYMBOLIZE_TARGET_BUILD) -gdwarf-4 -fpie -pie -o $@
# gcc 12 writes line table version 3 for -gdwarf-2
$(BUILD)/tests/symbolize_target_dwarf3: $(SYMBOLIZE_TARGET_DEPS)
	@mkdir -p $(@D)
	$(SYMBOLIZE_TARGET_BUILD) -gdwarf-2 -fpie -pie -o $@
# .dynsym only: -rdynamic exports main and global_stats, not the static functions
$(BUILD)/tests/symbolize_target_stripped: $(SYMBOLIZE_TARGET_DEPS)
	@mkdir -p $(@D)
	$(SYMBOLIZE_TARGET_BUILD) -g -fpie -pie -rdynamic -o $@
	strip --strip-all $@
# No build-id, so the debuglink's CRC identifies the debug file; its DWARF is
# zlib-compressed (SHF_COMPRESSED), as in Debian's debug packages.
$(BUILD)/tests/symbolize_target_debuglink: $(SYMBOLIZE_TARGET_DEPS)
	@mkdir -p $(@D)
	$(SYMBOLIZE_TARGET_BUILD) -g -fpie -pie -Wl,--build-id=none -o $@
	objcopy --only-keep-debug --compress-debug-sections=zlib $@ $@.debug
	strip --strip-all $@
	cd $(@D) && objcopy --add-gnu-debuglink=$(@F).debug $(@F)
$(BUILD)/tests/libsymbolize_plugin_%.so: tests/unit/symbolize_plugin.c
	@mkdir -p $(@D)
	$(CC) -O0 -g $(WARN) -fPIC -shared -DPLUGIN=$* $< -o $@

# Pure logic of the tracer (no interposing symbols) and of the command,
# under the sanitizers.
UNIT_SRCS := $(wildcard tests/unit/*_test.c)
UNIT_LOGIC := preload/base/options.c preload/base/suppressions.c preload/base/report_kinds.c preload/base/class_rules.c preload/runtime/tracer_lock.c \
	preload/base/key_set.c preload/unwind/cfi_unwind.c preload/graph/instance_pairs.c preload/graph/instance_pair_where.c preload/classes/shared_mappings.c preload/classes/lock_instances.c preload/classes/orphaned_locks.c preload/unwind/stack_depot.c preload/unwind/backtrace.c preload/runtime/signal_state.c preload/runtime/tracer_stack.c preload/runtime/real_functions.c preload/base/next_symbol.c preload/graph/lock_graph.c preload/runtime/self_check.c tools/text_log.c tools/util.c \
	tools/logfile.c tools/record.c tools/splat.c tools/group.c tools/symbolizer.c tools/debuginfod.c
$(UNIT): $(UNIT_SRCS) $(UNIT_LOGIC) preload/base/options.h preload/base/suppressions.h preload/runtime/tracer_lock.h \
		preload/runtime/thread_state.h preload/checks/signal_usage.h $(wildcard tools/*.h) $(SYMBOLIZE_SRCS) $(SYMBOLIZE_HDRS)
	@mkdir -p $(@D)
	$(CC) -O1 -g $(WARN) -Ipreload $(SANITIZE) $(UNIT_SRCS) $(UNIT_LOGIC) $(SYMBOLIZE_SRCS) -o $@ $(SYMBOLIZE_LIBS) -lcriterion -ljansson

TEST_DEPS := $(PRELOAD) $(TOOL) $(TOOL_ASAN) $(TARGETS) $(NOPIE_TARGETS) $(LGPL_TARGETS) $(O2_TARGETS) $(PLUGIN_TARGETS) $(SUITE) $(UNIT) $(SYMBOLIZE_TARGETS) \
	$(BENCH_BINS) $(BUILD)/bench/floor_preload.so

# LeakSanitizer stays on for our code and the tools; only Criterion's own
# occasional leak is suppressed.
LSAN_ENV := LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0

# Everything the tests run, built (then run one part: build/tests/suite --filter 'lock_order/*').
test-deps: $(TEST_DEPS)

# The layers of preload/ only include downwards (docs/design.md).
check-layers:
	@bash preload/check-layers.sh

# The suite says each test as it finishes ([PASS] name: seconds): progress
# over its ten minutes, and where the time goes.
test: check-layers check-docs $(TEST_DEPS)
	$(LSAN_ENV) $(UNIT) --jobs 2
	$(LSAN_ENV) $(SUITE) --jobs 2 --verbose

# ---- documentation ---------------------------------------------------------
# What the tracer's tables can write is generated (tools/docgen/): the options
# table of docs/options.md and the man pages, so they cannot drift from the
# code. make docs rewrites docs/options.md (commit it); make check-docs, run
# by make test, fails when the committed one differs, when a report kind has
# no page, when a relative link or anchor of README.md and docs/ leads nowhere,
# or when an option the tracer's help=1 lists is missing from the man page.
DOCGEN := $(BUILD)/docgen/docgen
CHECK_LINKS := $(BUILD)/docgen/check_links
MAN_PAGES := $(BUILD)/man/lockdep-rcu.1 $(BUILD)/man/liblockdep-rcu.7
DOC_PAGES := README.md $(wildcard docs/*.md docs/reports/*.md)

$(DOCGEN): tools/docgen/docgen.c preload/base/options.h preload/base/report_kinds.h preload/base/report_kinds.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -Ipreload $< preload/base/report_kinds.c -o $@
$(CHECK_LINKS): tools/docgen/check_links.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) $< -o $@
$(BUILD)/docs/options.md: $(DOCGEN) docs/options.md.in
	@mkdir -p $(@D)
	$(DOCGEN) options-md docs/options.md.in > $@.tmp && mv $@.tmp $@
$(BUILD)/man/lockdep-rcu.1: $(TOOL) tools/docgen/man1.sh
	@mkdir -p $(@D)
	bash tools/docgen/man1.sh $(TOOL) > $@.tmp && mv $@.tmp $@
$(BUILD)/man/liblockdep-rcu.7: $(DOCGEN) $(TOOL)
	@mkdir -p $(@D)
	$(DOCGEN) options-man "$$($(TOOL) --version | awk '{ print $$NF; exit }')" > $@.tmp && mv $@.tmp $@

docs: $(BUILD)/docs/options.md
	cp $(BUILD)/docs/options.md docs/options.md
man: $(MAN_PAGES)

check-docs: $(BUILD)/docs/options.md $(DOCGEN) $(CHECK_LINKS) $(MAN_PAGES) $(PRELOAD)
	@diff -u docs/options.md $(BUILD)/docs/options.md || \
		{ echo "check-docs: docs/options.md is not what TRACER_OPTIONS (preload/base/options.h) and docs/options.md.in make: run make docs and commit it" >&2; exit 1; }
	@$(DOCGEN) report-pages docs/reports
	@$(CHECK_LINKS) $(DOC_PAGES)
	@for page in $(MAN_PAGES); do groff -man -ww -z $$page 2>&1 | grep . && \
		{ echo "check-docs: groff warns about $$page" >&2; exit 1; }; done; true
	@options=$$(LOCKDEP_RCU_OPTIONS=help=1 LD_PRELOAD=$(abspath $(PRELOAD)) /bin/true 2>&1 | \
		awk '/^  [a-z_]+ +- / { print $$1 }'); \
	[ -n "$$options" ] || { echo "check-docs: help=1 listed no option" >&2; exit 1; }; \
	for o in $$options; do \
		grep -q "^\\\\fB$$o\\\\fR=" $(BUILD)/man/liblockdep-rcu.7 || \
			{ echo "check-docs: option $$o (help=1) is not in liblockdep-rcu(7)" >&2; exit 1; }; \
		grep -q "| \`$$o\` |" docs/options.md || \
			{ echo "check-docs: option $$o (help=1) is not in docs/options.md" >&2; exit 1; }; \
	done

# ---- bench, demo ----------------------------------------------------------
$(BUILD)/bench/%: tests/bench/%.c tests/bench/bench.h
	@mkdir -p $(@D)
	$(CC) -O2 $(WARN) -pthread $< -o $@ $(BENCH_LIBS_$*)
# The held-lock stack alone (make bench-floor): what knowing the held locks
# costs, the floor under any lock-order checker's ratios.
$(BUILD)/bench/floor_preload.so: tests/bench/floor_preload.c
	@mkdir -p $(@D)
	$(CC) -O2 $(WARN) -shared -fPIC $< -o $@ -ldl
$(BUILD)/bench/tsan/%: tests/bench/%.c tests/bench/bench.h
	@mkdir -p $(@D)
	$(CC) -O2 -g $(WARN) -fsanitize=thread -pthread $< -o $@ $(BENCH_LIBS_$*)

$(BUILD)/bench/symbolize_bench: tests/bench/symbolize_bench.c $(SYMBOLIZE_SRCS) $(SYMBOLIZE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(WARN) -pthread -Ipreload $< $(SYMBOLIZE_SRCS) -o $@ $(SYMBOLIZE_LIBS)

# Every part runs, whatever the one before it said; the status is the first
# part's that failed (run-bench.sh: 1 when a target is missed).
bench: $(BENCH_PRELOAD_DEP) $(BENCH_BINS) $(BUILD)/bench/symbolize_bench $(BUILD)/bench/rcu_deref_cost
	@status=0; \
	tests/bench/run-bench.sh --preload $(BENCH_PRELOAD) $(BUILD) || status=$$?; \
	$(BUILD)/bench/symbolize_bench || { s=$$?; [ $$status -ne 0 ] || status=$$s; }; \
	tests/bench/run-deref-bench.sh --preload $(BENCH_PRELOAD) $(BUILD) || { s=$$?; [ $$status -ne 0 ] || status=$$s; }; \
	[ $$status -eq 0 ] || echo "make bench: a part failed (first status $$status): see above" >&2; \
	exit $$status

# The same table with the floor preload in the tracer's place (its "targets"
# say nothing about it; the ratios are the point).
bench-floor: $(BENCH_BINS) $(BUILD)/bench/floor_preload.so
	-tests/bench/run-bench.sh --preload $(abspath $(BUILD)/bench/floor_preload.so) $(BUILD)

# ThreadSanitizer binaries only where the compiler can link them; the script
# says which peer it skipped and why.
bench-peers: $(BENCH_PRELOAD_DEP) $(BENCH_BINS)
	@mkdir -p $(BUILD)/bench
	@if echo 'int main(void) { return 0; }' | $(CC) -fsanitize=thread -x c - \
			-o $(BUILD)/bench/tsan-probe 2>/dev/null; then \
		$(MAKE) --no-print-directory $(BENCH_TSAN_BINS); \
	else \
		rm -rf $(BUILD)/bench/tsan; \
	fi
	@rm -f $(BUILD)/bench/tsan-probe
	tests/bench/run-bench-peers.sh --preload $(BENCH_PRELOAD) $(BUILD)

# Real servers, plain and preloaded; the run's files stay in the workdir.
bench-real: $(BENCH_PRELOAD_DEP)
	rm -rf $(BENCH_REAL_WORKDIR)
	tests/bench/run-bench-real.sh --preload $(BENCH_PRELOAD) $(BENCH_REAL_WORKDIR)

# The demo's program exits 66 under the tracer (its exitcode for a run with
# reports, as the sanitizers do): expected here, so the demo itself succeeds.
demo: $(PRELOAD) $(BUILD)/targets/demo_buggy_cache.memb
	@echo "== running a buggy liburcu program under LD_PRELOAD=$(PRELOAD)"
	@LD_PRELOAD=$(PWD)/$(PRELOAD) $(BUILD)/targets/demo_buggy_cache.memb; status=$$?; \
	if [ $$status -eq 66 ]; then \
		echo "== the program exited 66: the tracer's exit status for a run with reports (LOCKDEP_RCU_OPTIONS=exitcode=0 keeps the program's own)"; \
	else \
		echo "== the program exited $$status; 66 was expected (reports found)"; exit 1; \
	fi

install: all $(MAN_PAGES)
	install -d $(DESTDIR)$(PREFIX)/lib/lockdep-rcu $(DESTDIR)$(PREFIX)/include \
		$(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 0755 $(PRELOAD) $(DESTDIR)$(PREFIX)/lib/lockdep-rcu/liblockdep-rcu.so
	install -m 0644 include/lockdep-rcu.h $(DESTDIR)$(PREFIX)/include/lockdep-rcu.h
	install -m 0755 $(TOOL) $(DESTDIR)$(PREFIX)/bin/lockdep-rcu
	install -m 0644 $(BUILD)/man/lockdep-rcu.1 $(DESTDIR)$(PREFIX)/share/man/man1/lockdep-rcu.1
	install -m 0644 $(BUILD)/man/liblockdep-rcu.7 $(DESTDIR)$(PREFIX)/share/man/man7/liblockdep-rcu.7
	sed -e 's|@PREFIX@|$(PREFIX)|g' tools/lockdep-rcu.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/lockdep-rcu.pc

clean:
	rm -rf $(BUILD)

# ---- Debian package -------------------------------------------------------
# make deb: build/lockdep-rcu_VERSION_ARCH.deb, from make install PREFIX=/usr
# staged under build/deb (packaging/deb/build-deb.sh; tests/deb/check-deb.sh
# installs and tries it). The command built for it is its own,
# build/deb/lockdep-rcu: it has the installed tracer's directory,
# /usr/lib/lockdep-rcu, compiled in, where build/lockdep-rcu has $(PREFIX)'s.
# The install runs in a make of its own, with its own jobs: GNU make 4.3 shows
# no -j in MAKEFLAGS while a makefile is read, so the top of this one adds
# -j$(nproc) in every sub-make too, and a sub-make that shares its parent's
# jobserver then warns "-j2 forced in makefile: resetting jobserver mode".
DEB_WORK := $(BUILD)/deb
.PHONY: deb
deb:
	rm -rf $(DEB_WORK)/debian
	MAKEFLAGS='$(filter-out -j% --jobserver-auth=% --jobserver-fds=%,$(MAKEFLAGS))' \
		$(MAKE) --no-print-directory install PREFIX=/usr DESTDIR=$(abspath $(DEB_WORK))/debian/lockdep-rcu TOOL=$(DEB_WORK)/lockdep-rcu
	bash packaging/deb/build-deb.sh $(DEB_WORK) $(BUILD)
