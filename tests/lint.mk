# SPDX-License-Identifier: GPL-2.0-only
# Static analysis of the tools' user-space C (common/*.c, tools/*.c; not
# the BPF programs, not the tests): cppcheck and clang-tidy, every finding
# an error. Included by tests/tests.mk. Needs cppcheck and clang-tidy.
#
#   make lint            the canary, then both checkers (make -j runs files in parallel)
#   make lint-cppcheck   cppcheck alone
#   make lint-tidy       clang-tidy alone, one file per job
#   make lint-canary     each checker must find the bugs planted in tests/lint/canary.c
#
# What is checked and what is not, and why: .clang-tidy (its checks and
# their options), tests/lint/cppcheck.supp (cppcheck's proven false
# positives), tests/lint/libbpf.cfg and tests/lint/libbpf_ownership.h
# (what each checker cannot see of libbpf). Both read the generated
# skeletons and version.h the tools include, with the build's flags.

CPPCHECK ?= cppcheck
CLANG_TIDY ?= clang-tidy

LINT_SRCS := $(sort $(wildcard common/*.c) $(filter-out %.bpf.c,$(wildcard tools/*.c)))
LINT_GEN := $(TOOLS:%=$(OUTPUT)/%.skel.h) $(OUTPUT)/version.h
LINT_CANARY := tests/lint/canary.c

# cppcheck takes the build's -I and -D (it has no gnu11: c11 and
# _GNU_SOURCE say the same to it) and no system header: its libraries
# stand for them. One job (make -j runs it beside clang-tidy's): with
# -j it reports no missingIncludeSystem, and the suppressions file's
# entry for it would be unmatched, which fails as a stale one should.
CPPCHECK_FLAGS := -q --std=c11 --enable=warning,style,performance,portability,information \
	--library=posix --library=tests/lint/libbpf.cfg \
	--suppressions-list=tests/lint/cppcheck.supp --error-exitcode=1
LINT_CPPFLAGS = $(filter -I% -D% -U%,$(CPPFLAGS) $(CFLAGS))

# clang-tidy compiles as the build does (-Wall -Wextra -Werror among
# them: clang's warnings are findings too). A warning option only GCC
# knows, from a user's CFLAGS, is not one. Its closing count of the
# warnings it did not show ("N warnings generated.") is left out.
TIDY_FLAGS = -include tests/lint/libbpf_ownership.h $(CPPFLAGS) $(CFLAGS) -Wno-unknown-warning-option
TIDY_QUIET := grep -v '^[0-9]* warnings\? generated\.$$'

LINT_TIDY := $(LINT_SRCS:%=lint-tidy/%)
.PHONY: lint lint-cppcheck lint-tidy lint-canary $(LINT_TIDY)

lint: lint-canary lint-cppcheck lint-tidy

lint-cppcheck: $(LINT_GEN)
	$(call msg,CPPCHECK,common/ tools/)
	$(Q)$(CPPCHECK) $(CPPCHECK_FLAGS) $(LINT_CPPFLAGS) $(LINT_SRCS)

lint-tidy: $(LINT_TIDY)

$(LINT_TIDY): lint-tidy/%: % $(LINT_GEN)
	$(call msg,TIDY,$*)
	$(Q)set -o pipefail; $(CLANG_TIDY) --quiet $* -- $(TIDY_FLAGS) 2>&1 | { $(TIDY_QUIET) || :; }

# A configuration that silenced a checker would let lint pass vacuously:
# each must fail on the canary, naming both of its bugs.
lint-canary:
	$(call msg,CANARY,$(LINT_CANARY))
	$(Q)out=$$($(CPPCHECK) $(CPPCHECK_FLAGS) $(LINT_CANARY) 2>&1) && st=0 || st=$$?; \
	if [ $$st = 0 ] || ! grep -q '\[deallocuse\]' <<< "$$out" || ! grep -q '\[nullPointer\]' <<< "$$out"; then \
		printf '%s\n' "$$out" >&2; \
		echo "lint-canary: cppcheck missed the bugs planted in $(LINT_CANARY) (exit $$st)" >&2; \
		exit 1; \
	fi; \
	out=$$($(CLANG_TIDY) --quiet $(LINT_CANARY) -- $(TIDY_FLAGS) 2>&1) && st=0 || st=$$?; \
	if [ $$st = 0 ] || ! grep -q '\[clang-analyzer-unix\.Malloc' <<< "$$out" || \
	   ! grep -q '\[clang-analyzer-core\.NullDereference' <<< "$$out"; then \
		printf '%s\n' "$$out" >&2; \
		echo "lint-canary: clang-tidy missed the bugs planted in $(LINT_CANARY) (exit $$st)" >&2; \
		exit 1; \
	fi
