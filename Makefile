# floodgate — one Makefile drives everything.
#
#   make run        install what is missing, build, run the live demo
#                   (RUN_ARGS=--once: end after its summary)
#   make test       install what is missing, build every variant, run every test
#   make test-long  the long-running tests (soak, 100 M entries, big articles)
#   make bench      quick benchmarks; figures to stdout and docs/benchmarks.md
#   make bench-full the long benchmarks too
#   make fuzz       run every libFuzzer target for FUZZ_SECONDS each
#   make deps       apt-get install what is missing (root)
#   make all        build the current variant (release; SANITIZE=1, TSAN=1, DEBUG=1)
#   make clean
#
# Sources are found by convention, so adding a module never edits this file:
#   dataplane/<component>/*.c, control/<component>/*.c,
#   tools/<component>/*.c                  -> build/<v>/libfg.a
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
CPPFLAGS := -Iinclude -Itests/lib -D_GNU_SOURCE -MMD -MP
CFLAGS := -std=gnu11 -g -pipe -fno-common $(ARCH_FLAGS) $(WARN)
LDFLAGS :=
LDLIBS := -lpthread -lm -lrt

ifeq ($(VARIANT),release)
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
ifeq ($(VARIANT),$(filter $(VARIANT),release debug))
JEMALLOC := -Wl,--no-as-needed -ljemalloc -Wl,--as-needed
endif

# DPDK's headers are system headers: our warning set is not theirs.
DPDK_CFLAGS := $(shell pkg-config --cflags libdpdk 2>/dev/null | sed -e 's/-I/-isystem /g' -e 's/-march=[^ ]*//')
DPDK_LIBS := $(shell pkg-config --libs libdpdk 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)
PCAP_LIBS := -lpcap

# ---------------------------------------------------------------- sources
# name:directory of every program; the directory's .c files are its own.
PROGRAMS := floodgate-host:dataplane/host floodctld:control/floodctld \
	floodctl:control/floodctl feedgen:tools/feedgen fg-taphost:tools/taphost \
	histwriter:tools/histwriter
PROG_DIRS := $(foreach p,$(PROGRAMS),$(word 2,$(subst :, ,$(p)))) dataplane/dpdk \
	tools/bench

LIB_SRCS := $(filter-out $(addsuffix /%,$(PROG_DIRS)), \
	$(wildcard dataplane/*/*.c control/*/*.c tools/*/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/obj/%.o)
LIB := $(B)/libfg.a

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
define program_template
$(1)_SRCS := $$(wildcard $(2)/*.c)
ifneq ($$($(1)_SRCS),)
PROG_BINS += $(B)/bin/$(1)
$(B)/bin/$(1): $$($(1)_SRCS:%.c=$(B)/obj/%.o) $(LIB)
	@mkdir -p $$(@D)
	@echo '  LD     $$@'
	$(Q)$$(CC) $$(LDFLAGS) -o $$@ $$^ $$(PCAP_LIBS) $$(JEMALLOC) $$(LDLIBS)
endif
endef
$(foreach p,$(PROGRAMS),$(eval $(call program_template,$(word 1,$(subst :, ,$(p))),$(word 2,$(subst :, ,$(p))))))

ifneq ($(DPDK_SRCS),)
PROG_BINS += $(B)/bin/floodgate
endif

# ---------------------------------------------------------------- rules
.PHONY: all deps test test-long bench bench-full fuzz fuzz-build run clean \
	test-build tsan-build help

all: $(LIB) $(PROG_BINS) $(UNIT_BINS) $(FUZZ_REPLAYS) $(BENCH_BINS) $(PRELOAD_LIBS)

$(B)/tests/preload/%.so: tests/preload/%.c
	@mkdir -p $(@D)
	@echo '  SO     $@'
	$(Q)gcc $(CPPFLAGS) -std=gnu11 -g -O2 -fPIC -shared $(WARN) -o $@ $< -ldl

$(B)/obj/dataplane/dpdk/%.o: dataplane/dpdk/%.c
	@mkdir -p $(@D)
	@echo '  CC     $<'
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(DPDK_CFLAGS) -c -o $@ $<

$(B)/obj/tools/bench/%.o: tools/bench/%.c
	@mkdir -p $(@D)
	@echo '  CC     $<'
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(DPDK_CFLAGS) -c -o $@ $<

$(B)/obj/%.o: %.c
	@mkdir -p $(@D)
	@echo '  CC     $<'
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJS)
	@mkdir -p $(@D)
	@echo '  AR     $@'
	$(Q)rm -f $@ && ar rcsT $@ $^

$(B)/bin/floodgate: $(DPDK_OBJS) $(LIB)
	@mkdir -p $(@D)
	@echo '  LD     $@'
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(DPDK_LIBS) $(JEMALLOC) $(LDLIBS)

# A unit test's own extra libraries: UNIT_LIBS_<name> (INN's libinn.a for
# test_date_inn, INN's date parser as the oracle).
UNIT_LIBS_test_date_inn := /usr/lib/news/libinn.a

$(B)/tests/unit/%: $(B)/obj/tests/unit/%.o $(TESTLIB_OBJS) $(LIB)
	@mkdir -p $(@D)
	@echo '  LD     $@'
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(UNIT_LIBS_$*) $(CHECK_LIBS) $(PCAP_LIBS) $(LDLIBS)

# A fuzz target's own extra libraries: FUZZ_LIBS_<name> (INN's libinn.a for
# fuzz_date, which holds the inn reading to INN's parser on every input).
FUZZ_LIBS_fuzz_date := /usr/lib/news/libinn.a

ifeq ($(VARIANT),fuzz)
# libFuzzer's own main drives the target
$(B)/tests/fuzz/%: $(B)/obj/tests/fuzz/%.o $(LIB)
	@mkdir -p $(@D)
	@echo '  LD     $@'
	$(Q)$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LIBS_$*) $(LDLIBS)
else
$(B)/tests/fuzz/%: $(B)/obj/tests/fuzz/%.o $(B)/obj/tests/fuzz/replay.o $(LIB)
	@mkdir -p $(@D)
	@echo '  LD     $@'
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(FUZZ_LIBS_$*) $(LDLIBS)
endif

# A benchmark's own extra libraries: BENCH_LIBS_<name> (e.g. INN's libinn.a
# for bench_parsers, to time INN's parsers on the same strings).
BENCH_LIBS_bench_parsers := /usr/lib/news/libinn.a

$(B)/bench/%: $(B)/obj/tools/bench/%.o $(LIB)
	@mkdir -p $(@D)
	@echo '  LD     $@'
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(BENCH_LIBS_$*) $(DPDK_LIBS) $(PCAP_LIBS) $(JEMALLOC) $(LDLIBS)

-include $(shell find build/$(VARIANT) -name '*.d' 2>/dev/null)

# ---------------------------------------------------------------- top level
# Each top-level job first installs what is missing, then re-enters make so
# that pkg-config sees the freshly installed packages.
deps:
	@tools/deps.sh

# Builds every variant the test suite runs: release, ASan+UBSan, TSan.
test-build:
	$(MAKE) --no-print-directory all
	$(MAKE) --no-print-directory SANITIZE=1 all
	$(MAKE) --no-print-directory TSAN=1 tsan-build

tsan-build: $(MT_BINS)

test: deps
	$(MAKE) --no-print-directory -j$(NPROC) test-build
	tools/run-tests.sh quick

test-long: deps
	$(MAKE) --no-print-directory -j$(NPROC) test-build
	tools/run-tests.sh long

bench: deps
	$(MAKE) --no-print-directory -j$(NPROC) all
	tools/bench/run.sh quick

bench-full: deps
	$(MAKE) --no-print-directory -j$(NPROC) all
	tools/bench/run.sh full

run: deps
	$(MAKE) --no-print-directory -j$(NPROC) all
	tools/run-demo.sh $(RUN_ARGS)

fuzz: deps
	$(MAKE) --no-print-directory -j$(NPROC) FUZZ=1 fuzz-build
	tools/fuzz.sh $(FUZZ_SECONDS)

fuzz-build: $(FUZZ_REPLAYS)

clean:
	rm -rf build

help:
	@sed -n '2,22p' Makefile | sed 's/^# \{0,1\}//'
