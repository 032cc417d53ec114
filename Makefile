# pdtrans - see README.md.  `make`, `make check`, `make demo`, `make bench`,
# `make install PREFIX=/usr/local DESTDIR=`, `make uninstall`, `make check SANITIZE=1`.

PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
BUILD ?= build
PKGS = libprotobuf-c glib-2.0 jansson nettle

# The warnings Lua's makefile uses (issue 15), errors like the rest.
LUA_WARNINGS = -Wmissing-prototypes -Wshadow -Wwrite-strings -Wstrict-prototypes \
  -Wredundant-decls -Wundef -Wold-style-definition -Wnested-externs
# _DEFAULT_SOURCE: src/ir/pages.c's madvise (Linux), which a file cannot ask
# for itself: -include alloc.h reads <features.h> before its first line.
CFLAGS_BASE = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra -Werror -O2 -g \
  $(LUA_WARNINGS)
ifeq ($(SANITIZE),1)
  BUILD := build-san
  CFLAGS_BASE += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
  LDFLAGS += -fsanitize=address,undefined
endif
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)
# src/ir/alloc.h counts GLib's allocations in every file (see that header).
ALL_CFLAGS = $(CFLAGS_BASE) -I$(BUILD)/gen -Isrc -include src/ir/alloc.h $(PKG_CFLAGS) $(CFLAGS)

SRCS = $(sort $(wildcard src/*.c src/*/*.c src/*/*/*.c))
LIB_SRCS = $(filter-out src/main.c,$(SRCS))
OBJS = $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) $(BUILD)/obj/framework.pb-c.o
UNIT_SRCS = $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
BIN = pdtrans$(if $(filter 1,$(SANITIZE)),-san,)

.PHONY: all check lint unit golden golden-update demo bench bench-scale install uninstall completion clean deps fuzz-truncate valgrind fuzz fuzz-smoke fuzz-smoke-check fuzz-job alloc-sweep

all: $(BIN)

$(BUILD)/gen/framework.pb-c.c $(BUILD)/gen/framework.pb-c.h: proto/framework.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --proto_path=proto --c_out=$(BUILD)/gen proto/framework.proto

$(BUILD)/obj/framework.pb-c.o: $(BUILD)/gen/framework.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -Werror,$(ALL_CFLAGS)) -c -o $@ $<

$(BUILD)/obj/%.o: src/%.c $(BUILD)/gen/framework.pb-c.h $(wildcard src/*.h src/*/*.h src/*/*/*.h src/*/*.def src/*/*/*.def)
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/libpdtrans.a: $(OBJS)
	@rm -f $@
	@ar rcs $@ $(OBJS)

$(BIN): $(BUILD)/obj/main.o $(BUILD)/libpdtrans.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libpdtrans.a tests/unit/unit.h tests/unit/transpile_fixture.h
	@mkdir -p $(dir $@)
	@echo "  LD $@"
	@$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(BUILD)/libpdtrans.a $(LDFLAGS) $(PKG_LIBS) $(CHECK_LIBS) -lm

deps:
	@sh tests/deps.sh

# Shell completions, generated from the binary's --help (src/cli/completion/).
COMPLETIONS = $(BUILD)/completion/pdtrans.bash $(BUILD)/completion/_pdtrans
COMPLETION_SRCS = $(wildcard src/cli/completion/*)
completion: $(COMPLETIONS)

$(BUILD)/completion/pdtrans.bash: $(BIN) $(COMPLETION_SRCS)
	@mkdir -p $(dir $@)
	@sh src/cli/completion/gen.sh bash ./$(BIN) >$@.tmp && mv $@.tmp $@

$(BUILD)/completion/_pdtrans: $(BIN) $(COMPLETION_SRCS)
	@mkdir -p $(dir $@)
	@sh src/cli/completion/gen.sh zsh ./$(BIN) >$@.tmp && mv $@.tmp $@

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do PDT_BIN=./$(BIN) $$t; done

# Functions over 80 lines and files over 600 in src/ (tests/funclen.py).
lint:
	@python3 tests/funclen.py

golden: $(BIN)
	@PDTRANS=./$(BIN) sh tests/golden/run.sh

# Rewrites expected/ of the cases named (CASE="a b"), printing the diff.
golden-update: $(BIN)
	@[ -n "$(CASE)" ] || { echo "golden-update: name the case(s) to rewrite: make golden-update CASE=name" >&2; exit 2; }
	@PDTRANS=./$(BIN) sh tests/golden/run.sh --update $(CASE)

# A test that cannot run here (no ../shared, clang, protoc or zsh) appends a
# line to PDT_SKIP_LOG (tests/skip.sh, unit_skip in tests/unit/unit.h); the
# last step counts them and says why.  Under CI=true a skip fails the run.
check: export PDT_SKIP_LOG = $(CURDIR)/$(BUILD)/skipped.txt
check: deps
	@mkdir -p $(BUILD) && : >"$$PDT_SKIP_LOG"
	@$(MAKE) --no-print-directory $(BIN) $(BUILD)/bench/pbbare $(BUILD)/tests/regen $(COMPLETIONS)
	@$(MAKE) --no-print-directory unit golden
	@PDTRANS=./$(BIN) BUILD=$(BUILD) sh tests/real.sh
	@PDTRANS=./$(BIN) sh tests/verify/run.sh
	@PDTRANS=./$(BIN) sh tests/verify/rewrite.sh
	@BUILD=$(BUILD) sh tests/regen/run.sh
	@mandoc -T lint -W warning man/pdtrans.1 && echo "man: mandoc -T lint clean"
	@python3 tests/funclen.py
	@python3 tests/mutants.py --check
	@sh tests/private_headers.sh
	@BUILD=$(BUILD) sh tests/globals.sh
	@PDTRANS=./$(BIN) COMPLETION_DIR=$(BUILD)/completion sh tests/completion.sh
	@PDTRANS=./$(BIN) sh tests/options.sh
	@sh tests/install.sh
	@PDTRANS=./$(BIN) sh tests/check_demo.sh
	@PDTRANS=./$(BIN) sh tests/alloc_fail.sh
	@PDTRANS=./$(BIN) sh tests/kill_sweep.sh
	@$(MAKE) --no-print-directory fuzz-smoke-check
	@$(MAKE) --no-print-directory check-ship
	@n=$$(wc -l <"$$PDT_SKIP_LOG"); if [ "$$n" = 0 ]; then echo "check: no test skipped"; \
	else echo "check: $$n tests skipped (a skip is never a pass):"; sed 's/^/  /' "$$PDT_SKIP_LOG"; \
	if [ "$$CI" = true ]; then echo "check: FAIL: tests skipped under CI=true"; exit 1; fi; fi

# make check's fuzz step: every target for FUZZ_SECONDS (30) on its seeds
# when clang can build libFuzzer targets (tests/deps.sh installs clang),
# else a skip (tests/skip.sh: fails under CI=true).  The targets always
# build with ASan and UBSan, so under SANITIZE=1 the same build runs again
# with FUZZ_SEED=2: other inputs, still reproducible.
fuzz-smoke-check:
	@if sh tests/fuzz/run.sh --available; then \
	$(if $(filter 1,$(SANITIZE)),FUZZ_SEED=$${FUZZ_SEED:-2}) sh tests/fuzz/run.sh --smoke; \
	else . tests/skip.sh && skip fuzz-smoke "clang cannot build libFuzzer targets here (tests/fuzz/run.sh --available; make deps installs clang)"; fi

demo: deps
	@$(MAKE) --no-print-directory $(BIN)
	@PDTRANS=./$(BIN) sh tests/demo.sh

bench: deps
	@$(MAKE) --no-print-directory $(BIN) $(BUILD)/bench/pbbare $(BUILD)/bench/gen
	@PDTRANS=./$(BIN) BUILD=$(BUILD) sh tests/bench/bench.sh

# How time and memory grow from 1k to 1M ops (SIZES="1000 10000" to shorten).
bench-scale: deps
	@$(MAKE) --no-print-directory $(BIN)
	@PDTRANS=./$(BIN) BUILD=$(BUILD) sh tests/bench/scale.sh

$(BUILD)/bench/%: tests/bench/%.c $(BUILD)/libpdtrans.a
	@mkdir -p $(dir $@)
	@echo "  LD $@"
	@$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libpdtrans.a $(LDFLAGS) $(PKG_LIBS) -lm

# Coverage-guided fuzzing (clang + libFuzzer, ASan, UBSan); see
# tests/fuzz/README.md.  fuzz: every target in turn, FUZZ_SECONDS=60 each,
# corpora kept in build/fuzz/corpus; fuzz-smoke: every target on its seeds,
# FUZZ_SECONDS=30 each, FUZZ_SMOKE_JOBS=4 at a time (part of make check).
fuzz: deps
	@sh tests/fuzz/run.sh

fuzz-smoke: deps
	@sh tests/fuzz/run.sh --smoke

# Mutation fuzzing of `verify job` on GEO, local_sgd, spmt and remote
# prefetch job folders (tests/verify/fuzz_job.py), under ASan and UBSan
# (pdtrans-san, built in build-san): FUZZ_JOB_CASES (2000) cases from
# FUZZ_JOB_SEED (random); findings kept in build-san/fuzz-job.  make check
# runs 100 cases of seed 1 with its own binary (tests/verify/job_fuzz.sh).
fuzz-job:
	@$(MAKE) --no-print-directory SANITIZE=1 pdtrans-san
	@python3 tests/verify/fuzz_job.py ./pdtrans-san --cases $${FUZZ_JOB_CASES:-2000} \
	  --seed $${FUZZ_JOB_SEED:-$$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')} --keep build-san/fuzz-job

# Every allocation of a transpile and a backward run failed in turn
# (tests/alloc_fail.sh --full; check runs a sample).  Minutes under SANITIZE=1.
alloc-sweep: $(BIN)
	@PDTRANS=./$(BIN) sh tests/alloc_fail.sh --full

# A mutation check of the suite: every injected bug of tests/mutants.txt, in
# a scratch copy of the tree, must make one of its tests fail.  Not part of
# make check (minutes: each mutant rebuilds and runs its tests).
.PHONY: mutants
mutants: $(BIN)
	@python3 tests/mutants.py

valgrind: $(BIN) $(UNIT_BINS)
	@PDTRANS=./$(BIN) BUILD=$(BUILD) sh tests/valgrind.sh $(UNIT_BINS)

# install records in share/pdtrans/installed-dirs the folders it had to
# create, so that uninstall removes exactly those (when empty) and no other.
INSTALL_ROOT = $(DESTDIR)$(PREFIX)
INSTALL_DIRS = bin share/man/man1 share/pdtrans share/bash-completion/completions share/zsh/site-functions
INSTALL_FILES = bin/pdtrans share/man/man1/pdtrans.1 share/pdtrans/framework.proto \
	share/bash-completion/completions/pdtrans share/zsh/site-functions/_pdtrans

install: $(BIN) $(COMPLETIONS)
	@set -e; list="$(INSTALL_ROOT)/share/pdtrans/installed-dirs"; tmp=$$(mktemp); \
	if [ -f "$$list" ]; then cat "$$list" >"$$tmp"; fi; \
	for d in $(INSTALL_DIRS); do \
	    p="$(INSTALL_ROOT)/$$d"; \
	    while [ ! -d "$$p" ]; do printf '%s\n' "$$p" >>"$$tmp"; p=$$(dirname "$$p"); done; \
	    install -d "$(INSTALL_ROOT)/$$d"; \
	done; \
	sort -u "$$tmp" >"$$list"; rm -f "$$tmp"
	install -m 755 $(BIN) $(INSTALL_ROOT)/bin/pdtrans
	install -m 644 man/pdtrans.1 $(INSTALL_ROOT)/share/man/man1/pdtrans.1
	install -m 644 proto/framework.proto $(INSTALL_ROOT)/share/pdtrans/framework.proto
	install -m 644 $(BUILD)/completion/pdtrans.bash $(INSTALL_ROOT)/share/bash-completion/completions/pdtrans
	install -m 644 $(BUILD)/completion/_pdtrans $(INSTALL_ROOT)/share/zsh/site-functions/_pdtrans

uninstall:
	@set -e; list="$(INSTALL_ROOT)/share/pdtrans/installed-dirs"; \
	for f in $(INSTALL_FILES); do rm -f "$(INSTALL_ROOT)/$$f"; done; \
	if [ -f "$$list" ]; then \
	    dirs=$$(sort -r "$$list"); rm -f "$$list"; \
	    printf '%s\n' "$$dirs" | while IFS= read -r d; do \
	        [ -z "$$d" ] || rmdir "$$d" 2>/dev/null || true; \
	    done; \
	fi; \
	echo "uninstalled pdtrans from $(INSTALL_ROOT)"

clean:
	rm -rf build build-san pdtrans pdtrans-san

$(BUILD)/tests/regen: tests/regen/regen.c $(BUILD)/libpdtrans.a
	@mkdir -p $(dir $@)
	@echo "  LD $@"
	@$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libpdtrans.a $(LDFLAGS) $(PKG_LIBS) -lm

# ---- Build and ship (issue 26; src/ship/README.md) ----
# The version is PDT_VERSION in src/cli/cli.h, the one `pdtrans --version`
# prints and manifest.json records; the package and the static build take it
# from there, so there is one place to change it.
PDTRANS_VERSION := $(shell sed -n 's/^\#define PDT_VERSION "\(.*\)"$$/\1/p' src/cli/cli.h)

# make stops before its first compile, with one line, when a Debian package
# the build needs is missing (src/ship/build_deps.sh names it and the command
# that installs it); `make deps` installs them.  The line comes through
# $(error) so that it is the only one make prints.
BUILD_DEPS_MISSING = $(shell sh src/ship/build_deps.sh)
.PHONY: build-deps
build-deps:
	$(if $(BUILD_DEPS_MISSING),$(error $(BUILD_DEPS_MISSING)))
$(BUILD)/gen/framework.pb-c.c $(BUILD)/gen/framework.pb-c.h: | build-deps

# make static: the same objects linked with -static: glibc, GLib (and its
# pcre2), protobuf-c, jansson and nettle are all inside, so the binary runs in
# an image with no libraries (tests/ship/static.sh runs it in an empty root).
# The linker's warnings that getpwuid and getpwnam_r need glibc's shared NSS
# libraries at run time come from GLib's g_get_user_database_entry, which
# pdtrans never calls; they are left out of the output, every other line is
# shown.
STATIC_BIN = $(BUILD)/static/pdtrans
.PHONY: static check-static
static: $(STATIC_BIN)
$(STATIC_BIN): $(BUILD)/obj/main.o $(BUILD)/libpdtrans.a
ifeq ($(SANITIZE),1)
	$(error make static: not with SANITIZE=1 (ASan and UBSan cannot link statically))
endif
	@mkdir -p $(dir $@)
	@echo "  LD $@ (static)"
	@$(CC) -static $(LDFLAGS) -o $@.tmp $^ $$(pkg-config --static --libs $(PKGS)) -lm 2>$@.log; \
	rc=$$?; grep -v -e 'g_get_user_database_entry' -e 'in statically linked applications requires at runtime' $@.log >&2; \
	rm -f $@.log; [ $$rc = 0 ] && mv $@.tmp $@

check-static: static $(BIN)
	@PDTRANS=./$(BIN) STATIC=$(STATIC_BIN) PDTRANS_VERSION=$(PDTRANS_VERSION) sh tests/ship/static.sh

# make deb: build/deb/pdtrans_VERSION-REVISION_ARCH.deb, built with dpkg-deb
# by src/ship/deb.sh (binary, man page, completions, framework.proto, copyright,
# changelog; Depends from dpkg-shlibdeps).  check-deb: lintian, then install,
# use and remove it with dpkg in a fresh Debian root (tests/ship/deb.sh).
.PHONY: deb check-deb
deb: $(BIN) $(COMPLETIONS)
ifeq ($(SANITIZE),1)
	$(error make deb: not with SANITIZE=1 (the package carries the plain build))
endif
	@mkdir -p $(BUILD)/deb
	@BIN=./$(BIN) COMPLETION_DIR=$(BUILD)/completion PDTRANS_VERSION=$(PDTRANS_VERSION) \
	    OUT=$(BUILD)/deb sh src/ship/deb.sh

check-deb: $(BIN) $(COMPLETIONS)
	@PDTRANS=./$(BIN) BUILD=$(BUILD) PDTRANS_VERSION=$(PDTRANS_VERSION) MAKE="$(MAKE)" sh tests/ship/deb.sh

# check-setup: the README's Set up commands, in order, on a clean clone of
# HEAD in a fresh Debian root, as a user with sudo (tests/ship/setup.sh;
# 30 to 60 minutes: its make check runs whole, as the README gives it).
# check-ship, a late step of make check: check-build-deps and check-static
# (seconds, no network; check-static says in one line why when it cannot
# run).  check-deb and check-setup need Debian's mirror and 10 to 60
# minutes, so they stay their own targets, outside make check and CI.
.PHONY: check-setup check-ship check-build-deps
check-setup:
	@BUILD=$(BUILD) sh tests/ship/setup.sh

# check-build-deps: make stops with the one line when a tool or library is
# taken away (tests/ship/make_stops.sh; seconds, runs in every make check).
check-build-deps:
	@sh tests/ship/make_stops.sh

check-ship: check-build-deps
ifeq ($(SANITIZE),1)
	@echo "ship: check-static not run under SANITIZE=1 (the static link takes the plain build; plain 'make check' runs it)"
else
	@if [ -n "$$PDTRANS_SETUP_TEST" ]; then \
	    echo "ship: check-static not run inside check-setup's own Debian root (the outer run is the ship test)"; \
	else SHIP_IN_CHECK=1 $(MAKE) --no-print-directory check-static; \
	echo "ship: check-deb and check-setup are their own targets (Debian's mirror, about 10 and 30-60 minutes); make check does not run them"; fi
endif
