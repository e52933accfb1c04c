# floodgate — one Makefile drives everything.
#
#   make run        install what is missing, build, run the live demo
#                   (RUN_ARGS=--once: end after its summary)
#   make test       install what is missing, build every variant, run every test
#   make test-long  make test, then the long tests: the soak with kills, 700 KB
#                   articles through the whole path, the power-loss matrix, the
#                   Debian package installed, upgraded and purged here; then
#                   every fuzz target fuzzing anew for FG_FUZZ_LONG_SECONDS
#                   (180) each
#   make test-long-only  the long tests alone (make test just passed here)
#   make bench      quick benchmarks; figures to stdout and docs/benchmarks.md
#   make bench-full the long benchmarks too, and the history's curve to 1 G
#                   entries (tools/bench/scale_curve.sh: docs/bench/scale.md)
#   make fuzz       run every libFuzzer target for FUZZ_SECONDS each
#   make deps       apt-get install what is missing (root)
#   make compat-golden  write this build's golden files (tests/data/compat); refuses to change a released one
#   tools/check-layers.sh  the tiers hold (run by make test)
#   make all        build the current variant (release; SANITIZE=1, TSAN=1, DEBUG=1;
#                   PACKAGE=1 is debian/rules' release build, into build/package)
#   make man        the man pages of the current variant (needs scdoc)
#   make install    programs, man pages, units, default config into DESTDIR
#   make deb        the Debian packages into build/deb/ (debian/, dpkg-buildpackage)
#   make clean
#
# Sources are found by convention; a module's directory belongs to a tier
# (TIERS below: the one table of what may use what), so a new module edits
# this file only when it joins the engine:
#   lib/<component>/*.c                    -> build/<v>/libfg-lib.a
#   dataplane/<component>/*.c              -> libfg-engine.a (ENGINE_DIRS)
#                                             or libfg-dataplane.a
#   control/<component>/*.c                -> libfg-control.a
#   tools/<component>/*.c                  -> libfg-tools.a
#     except the program directories listed in PROGRAMS below;
#   dataplane/dpdk/*.c                     -> floodgate (with DPDK)
#   tests/unit/test_*.c                    -> one libcheck binary each;
#     test_*_mt.c are concurrency tests and also run under ThreadSanitizer
#   tests/fuzz/fuzz_*.c                    -> libFuzzer target + corpus replay
#   tools/bench/bench_*.c                  -> one benchmark binary each

SHELL := /bin/bash
.DEFAULT_GOAL := all
.SUFFIXES:
.DELETE_ON_ERROR:
.SECONDARY:

SANITIZE ?= 0
TSAN ?= 0
PACKAGE ?= 0
FUZZ ?= 0
DEBUG ?= 0
FUZZ_SECONDS ?= 60
NPROC := $(shell nproc 2>/dev/null || echo 2)
V ?= 0
ifeq ($(V),1)
Q :=
else
Q := @
endif

ifeq ($(FUZZ),1)
VARIANT := fuzz
else ifeq ($(SANITIZE),1)
VARIANT := asan
else ifeq ($(TSAN),1)
VARIANT := tsan
else ifeq ($(DEBUG),1)
VARIANT := debug
else ifeq ($(PACKAGE),1)
VARIANT := package
else
VARIANT := release
endif
B := build/$(VARIANT)

CC := gcc
ifeq ($(VARIANT),fuzz)
CC := clang
endif
ARCH_FLAGS ?= -march=corei7 -maes -mpclmul
WARN := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes \
	-Wstrict-prototypes -Wundef -Wcast-qual -Wwrite-strings -Wvla
CPPFLAGS := -Iinclude -D_GNU_SOURCE -MMD -MP
# tools' own headers (tools/workload/*.h) for tools and tests; the test
# library's for tests only
TOOLS_CPPFLAGS := -Itools
TEST_CPPFLAGS := -Itests/lib $(TOOLS_CPPFLAGS)
CFLAGS := -std=gnu11 -g -pipe -fno-common $(ARCH_FLAGS) $(WARN)
LDFLAGS :=
LDLIBS := -lpthread -lm -lrt -lhiredis
# A distribution's own flags (debian/rules passes dpkg-buildflags' here):
# added after ours, so its hardening applies and our warnings stay.
CPPFLAGS += $(EXTRA_CPPFLAGS)
CFLAGS += $(EXTRA_CFLAGS)
LDFLAGS += $(EXTRA_LDFLAGS)

ifeq ($(VARIANT),$(filter $(VARIANT),release package))
CFLAGS += -O2
else ifeq ($(VARIANT),debug)
CFLAGS += -O0 -DFG_DEBUG=1
else ifeq ($(VARIANT),asan)
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CFLAGS += -O1 -DFG_DEBUG=1 $(SAN)
LDFLAGS += $(SAN)
else ifeq ($(VARIANT),fuzz)
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CFLAGS += -O1 -DFG_DEBUG=1 -DFG_FUZZING=1 $(SAN) -fsanitize=fuzzer-no-link
LDFLAGS += $(SAN)
else ifeq ($(VARIANT),tsan)
SAN := -fsanitize=thread
CFLAGS += -O1 -DFG_DEBUG=1 $(SAN)
LDFLAGS += $(SAN)
endif

# jemalloc is the allocator of the shipped programs; the sanitizers bring
# their own. pkg-config's DPDK flags start with --as-needed, which would drop
# jemalloc silently, hence --no-as-needed around it.
ifeq ($(VARIANT),$(filter $(VARIANT),release debug package))
JEMALLOC := -Wl,--no-as-needed -ljemalloc -Wl,--as-needed
endif

# DPDK's headers are system headers: our warning set is not theirs.
DPDK_CFLAGS := $(shell pkg-config --cflags libdpdk 2>/dev/null | sed -e 's/-I/-isystem /g' -e 's/-march=[^ ]*//')
DPDK_LIBS := $(shell pkg-config --libs libdpdk 2>/dev/null)
# the bonding PMD's API (dataplane/dpdk/bond.c, feedgen's dpdk.c); the same file the EAL
# loads as a driver
DPDK_BOND_LIBS := -lrte_net_bond
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)
PCAP_LIBS := -lpcap

# ---------------------------------------------------------------- sources
# name:directory of every program; the directory's .c files are its own.
PROGRAMS := floodgate-host:dataplane/host floodctld:control/floodctld \
	floodctl:control/floodctl feedgen:tools/feedgen fg-taphost:tools/taphost \
	histwriter:tools/histwriter fg-compatgen:tools/compatgen fg-mangen:tools/mangen
PROG_DIRS := $(foreach p,$(PROGRAMS),$(word 2,$(subst :, ,$(p)))) dataplane/dpdk \
	tools/bench

# The tiers, lowest first. A tier's objects may use only the tiers before
# it; dataplane and control are siblings and use nothing of each other.
# tools/check-layers.sh enforces it over the objects' symbols (nm) and the
# includes, in `make test`; docs/architecture.md draws it.
#   engine     the pure engine: parsers, rules, history, the NNTP sessions
#   lib        what both planes share: the region and its writer slots, the
#              journal, the verdict log, the data directory, the control
#              protocol, text buffers, the queue's files, the warm-up file
#   dataplane  transports, the queue's writer, the relay, the programs
#   control    floodctld, floodctl and what only they use
#   tools      feedgen, benchmarks, test helpers
TIERS := engine lib dataplane control tools
ENGINE_DIRS := dataplane/core dataplane/article dataplane/config dataplane/date \
	dataplane/history dataplane/msgid dataplane/nntp dataplane/rules dataplane/wildmat \
	dataplane/feeds dataplane/innhist
module_dirs = $(filter-out $(PROG_DIRS) $(2),$(patsubst %/,%,$(dir $(wildcard $(1)/*/*.c))))
TIER_DIRS_engine := $(ENGINE_DIRS)
TIER_DIRS_lib := $(call module_dirs,lib)
TIER_DIRS_dataplane := $(call module_dirs,dataplane,$(ENGINE_DIRS))
TIER_DIRS_control := $(call module_dirs,control)
TIER_DIRS_tools := $(call module_dirs,tools)
tier_objs = $(patsubst %.c,$(B)/obj/%.o,$(wildcard $(addsuffix /*.c,$(sort $(TIER_DIRS_$(1))))))
tier_lib = $(B)/libfg-$(1).a
# what a program of a tier links, highest first (static archives: order matters)
LINK_engine := $(call tier_lib,engine)
LINK_lib := $(call tier_lib,lib) $(LINK_engine)
LINK_dataplane := $(call tier_lib,dataplane) $(LINK_lib)
LINK_control := $(call tier_lib,control) $(LINK_lib)
LINK_tools := $(call tier_lib,tools) $(call tier_lib,control) $(LINK_dataplane)
LIBS_ALL := $(foreach t,$(TIERS),$(call tier_lib,$(t)))

DPDK_SRCS := $(wildcard dataplane/dpdk/*.c)
DPDK_OBJS := $(DPDK_SRCS:%.c=$(B)/obj/%.o)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/unit/%)
MT_BINS := $(filter %_mt,$(UNIT_BINS))
TESTLIB_SRCS := $(wildcard tests/lib/*.c)
TESTLIB_OBJS := $(TESTLIB_SRCS:%.c=$(B)/obj/%.o)

FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAYS := $(FUZZ_SRCS:tests/fuzz/%.c=$(B)/tests/fuzz/%)

# LD_PRELOAD shims of the integration tests (power-loss simulation), built
# without sanitizers: they load into release binaries.
PRELOAD_SRCS := $(wildcard tests/preload/*.c)
PRELOAD_LIBS := $(PRELOAD_SRCS:tests/preload/%.c=$(B)/tests/preload/%.so)

BENCH_SRCS := $(wildcard tools/bench/bench_*.c)
BENCH_BINS := $(BENCH_SRCS:tools/bench/%.c=$(B)/bench/%)

PROG_BINS :=
# A program's own extra libraries: PROG_LIBS_<name> (DPDK for feedgen, whose
# --dpdk transport is tools/feedgen/dpdk.c; that one file sees DPDK's headers).
PROG_LIBS_feedgen := $(DPDK_LIBS) $(DPDK_BOND_LIBS)
PROG_DPDK_OBJS := $(B)/obj/tools/feedgen/dpdk.o
# a program links the tiers its directory's top folder names (dataplane/host
# is a dataplane program, control/floodctl a control one)
define program_template
$(1)_SRCS := $$(wildcard $(2)/*.c)
ifneq ($$($(1)_SRCS),)
PROG_BINS += $(B)/bin/$(1)
$(B)/bin/$(1): $$($(1)_SRCS:%.c=$(B)/obj/%.o) $$(LINK_$(firstword $(subst /, ,$(2))))
	@mkdir -p $$(@D)
	@echo '  LD     $$@'
	$(Q)$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(PROG_LIBS_$(1)) $$(PCAP_LIBS) $$(JEMALLOC) $$(LDLIBS)
endif
endef
$(foreach p,$(PROGRAMS),$(eval $(call program_template,$(word 1,$(subst :, ,$(p))),$(word 2,$(subst :, ,$(p))))))

ifneq ($(DPDK_SRCS),)
PROG_BINS += $(B)/bin/floodgate
endif

# ---------------------------------------------------------------- rules
.PHONY: all deps deps-long test test-long test-long-only bench bench-full fuzz fuzz-build run clean \
	test-build tsan-build help compat-golden programs man install deb

all: $(LIBS_ALL) $(PROG_BINS) $(UNIT_BINS) $(FUZZ_REPLAYS) $(BENCH_BINS) $(PRELOAD_LIBS)

$(B)/tests/preload/%.so: tests/preload/%.c
	@mkdir -p $(@D)
	@echo '  SO     $@'
	$(Q)gcc $(CPPFLAGS) -std=gnu11 -g -O2 -fPIC -shared $(WARN) -o $@ $< -ldl

$(B)/obj/dataplane/dpdk/%.o: dataplane/dpdk/%.c
	@mkdir -p $(@D)
	@echo '  CC     $<'
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(DPDK_CFLAGS) -c -o $@ $<

$(PROG_DPDK_OBJS): $(B)/obj/%.o: %.c
	@mkdir -p $(@D)
	@echo '  CC     $<'
	$(Q)$(CC) $(CPPFLAGS) $(TOOLS_CPPFLAGS) $(CFLAGS) $(DPDK_CFLAGS) -c -o $@ $<

$(B)/obj/tools/bench/%.o: tools/bench/%.c
	@mkdir -p $(@D)
	@echo '  CC     $<'
	$(Q)$(CC) $(CPPFLAGS) $(TOOLS_CPPFLAGS) $(CFLAGS) $(DPDK_CFLAGS) -c -o $@ $<

$(B)/obj/tools/%.o: tools/%.c
	@mkdir -p $(@D)
	@echo '  CC     $<'
	$(Q)$(CC) $(CPPFLAGS) $(TOOLS_CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/obj/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	@echo '  CC     $<'
	$(Q)$(CC) $(CPPFLAGS) $(TEST_CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/obj/%.o: %.c
	@mkdir -p $(@D)
	@echo '  CC     $<'
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

define tier_template
$(call tier_lib,$(1)): $(call tier_objs,$(1))
	@mkdir -p $$(@D)
	@echo '  AR     $$@'
	$(Q)rm -f $$@ && ar rcsT $$@ $$^
endef
$(foreach t,$(TIERS),$(eval $(call tier_template,$(t))))

$(B)/bin/floodgate: $(DPDK_OBJS) $(LINK_dataplane)
	@mkdir -p $(@D)
	@echo '  LD     $@'
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(DPDK_LIBS) $(DPDK_BOND_LIBS) $(JEMALLOC) $(LDLIBS)

# A unit test's own extra libraries: UNIT_LIBS_<name> (INN's libinn.a for
# test_date_inn, INN's date parser as the oracle).
UNIT_LIBS_test_date_inn := /usr/lib/news/libinn.a
UNIT_LIBS_test_innhist := /usr/lib/news/libinn.a

# test_rss checks the port's RSS key with DPDK's rte_softrss (a header's
# inline function: DPDK's headers, none of its libraries)
$(B)/obj/tests/unit/test_rss.o: CFLAGS += $(DPDK_CFLAGS)
# test_tcp_mbuf sends by reference over real mbufs (an EAL without a device:
# DPDK's headers and libraries)
$(B)/obj/tests/unit/test_tcp_mbuf.o: CFLAGS += $(DPDK_CFLAGS)
UNIT_LIBS_test_tcp_mbuf := $(DPDK_LIBS)

$(B)/tests/unit/%: $(B)/obj/tests/unit/%.o $(TESTLIB_OBJS) $(LINK_tools)
	@mkdir -p $(@D)
	@echo '  LD     $@'
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(UNIT_LIBS_$*) $(CHECK_LIBS) $(PCAP_LIBS) $(LDLIBS)

# A fuzz target's own extra libraries: FUZZ_LIBS_<name> (INN's libinn.a for
# fuzz_date, which holds the inn reading to INN's parser on every input).
FUZZ_LIBS_fuzz_date := /usr/lib/news/libinn.a

ifeq ($(VARIANT),fuzz)
# libFuzzer's own main drives the target
$(B)/tests/fuzz/%: $(B)/obj/tests/fuzz/%.o $(LINK_tools)
	@mkdir -p $(@D)
	@echo '  LD     $@'
	$(Q)$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LIBS_$*) $(LDLIBS)
else
$(B)/tests/fuzz/%: $(B)/obj/tests/fuzz/%.o $(B)/obj/tests/fuzz/replay.o $(LINK_tools)
	@mkdir -p $(@D)
	@echo '  LD     $@'
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(FUZZ_LIBS_$*) $(LDLIBS)
endif

# A benchmark's own extra libraries: BENCH_LIBS_<name> (e.g. INN's libinn.a
# for bench_parsers, to time INN's parsers on the same strings).
BENCH_LIBS_bench_parsers := /usr/lib/news/libinn.a

$(B)/bench/%: $(B)/obj/tools/bench/%.o $(LINK_tools)
	@mkdir -p $(@D)
	@echo '  LD     $@'
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(BENCH_LIBS_$*) $(DPDK_LIBS) $(PCAP_LIBS) $(JEMALLOC) $(LDLIBS)

-include $(shell find build/$(VARIANT) -name '*.d' 2>/dev/null)

# for tools/check-layers.sh: the tiers, a tier's module and program directories
.PHONY: print-tiers print-tier-dirs print-tier-progs
print-tiers:
	@echo $(TIERS)
print-tier-dirs:
	@echo $(sort $(TIER_DIRS_$(TIER)))
print-tier-progs:
	@echo $(filter $(TIER)/%,$(PROG_DIRS))

# ---------------------------------------------------------------- top level
# Each top-level job first installs what is missing, then re-enters make so
# that pkg-config sees the freshly installed packages.
deps:
	@tools/deps.sh

# and what only the long tests use (chromium for the status page's render)
deps-long:
	@tools/deps.sh long

# Builds every variant the test suite runs: release, ASan+UBSan, TSan.
test-build:
	$(MAKE) --no-print-directory all
	$(MAKE) --no-print-directory SANITIZE=1 all
	$(MAKE) --no-print-directory TSAN=1 tsan-build

tsan-build: $(MT_BINS)

test: deps
	$(MAKE) --no-print-directory -j$(NPROC) test-build
	tools/run-tests.sh quick

test-long: deps-long
	$(MAKE) --no-print-directory -j$(NPROC) test-build
	$(MAKE) --no-print-directory -j$(NPROC) FUZZ=1 fuzz-build
	tools/run-tests.sh long

# the long suites alone, where `make test` has just passed on this commit
test-long-only: deps-long
	$(MAKE) --no-print-directory -j$(NPROC) test-build
	$(MAKE) --no-print-directory -j$(NPROC) FUZZ=1 fuzz-build
	tools/run-tests.sh long-only

bench: deps
	$(MAKE) --no-print-directory -j$(NPROC) all
	tools/bench/run.sh quick

bench-full: deps
	$(MAKE) --no-print-directory -j$(NPROC) all
	tools/bench/run.sh full
	tools/bench/scale_curve.sh

run: deps
	$(MAKE) --no-print-directory -j$(NPROC) all
	tools/run-demo.sh $(RUN_ARGS)

fuzz: deps
	$(MAKE) --no-print-directory -j$(NPROC) FUZZ=1 fuzz-build
	tools/fuzz.sh $(FUZZ_SECONDS)

fuzz-build: $(FUZZ_REPLAYS)

# docs/compat.md: after a format's version bump, commit what this writes
compat-golden: $(B)/bin/fg-compatgen
	$(B)/bin/fg-compatgen tests/data/compat

clean:
	rm -rf build

# ---------------------------------------------------------------- install
# `make install DESTDIR=...` puts every file where Debian policy says;
# debian/rules calls it (make deb), so this is the one list of what ships.
# Man pages are scdoc sources in debian/man/ with generated parts
# (tools/man/expand.sh): the programs' own --help, floodctl's command
# table, and floodgate.conf's keys from the parser's key table.
PREFIX ?= /usr
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/floodgate
SYSCONFDIR ?= /etc
UNITDIR ?= /lib/systemd/system
INSTALL_SBIN := floodgate floodgate-host floodctld
INSTALL_BIN := floodctl feedgen
MAN_SRCS := $(wildcard debian/man/*.scd)
MAN_PAGES := $(MAN_SRCS:debian/man/%.scd=$(B)/man/%)
UNITS := $(wildcard debian/systemd/*.service)
# the Grafana dashboard, the Prometheus alert rules and their promtool tests
MONITORING := contrib/monitoring/floodgate-dashboard.json contrib/monitoring/floodgate.rules.yml \
	contrib/monitoring/floodgate.rules.test.yml

programs: $(addprefix $(B)/bin/,$(INSTALL_SBIN) $(INSTALL_BIN))

man: $(MAN_PAGES)

$(B)/man/%: debian/man/%.scd tools/man/expand.sh docs/configuration.md \
		$(addprefix $(B)/bin/,$(INSTALL_SBIN) $(INSTALL_BIN) fg-mangen)
	@mkdir -p $(@D)
	@echo '  MAN    $@'
	$(Q)set -o pipefail; tools/man/expand.sh $(B)/bin $< | scdoc > $@

$(B)/floodgate.conf: $(B)/bin/floodctl
	$(Q)$< config --default > $@

install: programs man $(B)/floodgate.conf
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(SYSCONFDIR)/floodgate $(DESTDIR)$(SYSCONFDIR)/logrotate.d \
		$(DESTDIR)$(DOCDIR)/examples/systemd $(DESTDIR)$(DOCDIR)/examples/monitoring
	install -m 0755 $(addprefix $(B)/bin/,$(INSTALL_SBIN)) $(DESTDIR)$(SBINDIR)/
	install -m 0755 $(addprefix $(B)/bin/,$(INSTALL_BIN)) $(DESTDIR)$(BINDIR)/
	for m in $(MAN_PAGES); do \
		install -D -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/} || exit 1; \
	done
	install -m 0644 $(UNITS) $(DESTDIR)$(UNITDIR)/
	install -m 0644 $(B)/floodgate.conf $(DESTDIR)$(SYSCONFDIR)/floodgate/floodgate.conf
	install -m 0644 debian/logrotate/floodgate $(DESTDIR)$(SYSCONFDIR)/logrotate.d/floodgate
	install -m 0644 debian/examples/systemd/*.conf $(DESTDIR)$(DOCDIR)/examples/systemd/
	install -m 0644 $(MONITORING) $(DESTDIR)$(DOCDIR)/examples/monitoring/

# The packages, built from a copy of the tree (so debian/rules' clean never
# touches build/ here) into build/deb/; DEB_VERSION=x.y adds a changelog
# entry of that version to the copy (the package test's upgrade).
deb: deps
	tools/deb/build.sh $(DEB_VERSION)

help:
	@sed -n '2,20p' Makefile | sed 's/^# \{0,1\}//'
