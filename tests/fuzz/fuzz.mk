# SPDX-License-Identifier: GPL-2.0-only
# libFuzzer targets of what parses input the tool did not make (tests/fuzz/).
# Included by tests/tests.mk. Built with clang's fuzzer, ASan and UBSan
# (an error of either ends the run), apart from the tools' own build.
#
#   make fuzz [FUZZ_SECS=60]   fuzz each target from its corpus for N s
#   make fuzz-regress          run each target once over its corpus
#   make fuzz-test             both: the corpus, then FUZZ_TEST_SECS (5) s each (make test)
#
# A target fuzz_NAME reads seeds from tests/fuzz/corpus/NAME (committed)
# and writes what it finds to $(FUZZ_DIR)/corpus-NAME; a crash is saved
# as $(FUZZ_DIR)/crash-NAME-*, to be fixed and added to the corpus.

FUZZ_DIR := $(OUTPUT)/fuzz
FUZZ_SECS ?= 60
FUZZ_CC ?= $(CLANG)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -g -O1 -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE $(FUZZ_SAN) \
	-fsanitize=fuzzer-no-link
FUZZ_LDLIBS := -lbpf -lelf -lz
# fuzz_cli.c is built once per tool, as cli_<tool>.
FUZZ_CLI := $(TOOLS:%=cli_%)
FUZZ_TARGETS := $(filter-out cli,$(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))) \
	$(FUZZ_CLI)
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)

# What each target links of common/ (and of tests/unit/) besides itself.
FUZZ_LINK_btf_fields := btf_fields kernel_layout
FUZZ_LINK_escape := escape json minijson
FUZZ_LINK_metrics := metrics escape hist
FUZZ_LINK_filenames := filenames

$(FUZZ_DIR) $(FUZZ_DIR)/common:
	$(Q)mkdir -p $@

$(FUZZ_DIR)/common/%.o: common/%.c $(COMMON_HDRS) | $(FUZZ_DIR)/common
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_DIR)/common/minijson.o: tests/unit/minijson.c tests/unit/minijson.h | $(FUZZ_DIR)/common
	$(call msg,FUZZ-CC,$@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -c $< -o $@

define FUZZ_RULE
$(FUZZ_DIR)/fuzz_$(1): tests/fuzz/fuzz_$(1).c $(FUZZ_LINK_$(1):%=$(FUZZ_DIR)/common/%.o) | $(FUZZ_DIR)
	$$(call msg,FUZZ,$$@)
	$$(Q)$$(FUZZ_CC) $$(CPPFLAGS) -Itests/unit $$(FUZZ_CFLAGS) -fsanitize=fuzzer $$^ $$(FUZZ_LDLIBS) -o $$@
endef
$(foreach t,$(filter-out $(FUZZ_CLI),$(FUZZ_TARGETS)),$(eval $(call FUZZ_RULE,$(t))))

# A tool's command line: its source is included by fuzz_cli.c, which
# links the whole runtime (the tool's callbacks name it).
$(FUZZ_DIR)/fuzz_cli_%: tests/fuzz/fuzz_cli.c tools/%.c $(OUTPUT)/%.skel.h $(OUTPUT)/version.h \
		$(COMMON_SRCS:common/%.c=$(FUZZ_DIR)/common/%.o) $(COMMON_HDRS) | $(FUZZ_DIR)
	$(call msg,FUZZ,$@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -DFUZZ_TOOL=$* $< \
		$(COMMON_SRCS:common/%.c=$(FUZZ_DIR)/common/%.o) $(FUZZ_LDLIBS) -lm -o $@
$(FUZZ_DIR)/common/cli.o: $(OUTPUT)/version.h

# -timeout: an input that takes over 10 s is a hang (the BTF reader's
# work is bounded; a hostile file must end it within milliseconds).
FUZZ_OPTS := -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
# An input's length is capped by the longest seed, at least 4096 bytes,
# unless a target says: fuzz_filenames reads a size byte and up to 64
# records of 1056 bytes (4096 would keep it to 3, its table never full).
FUZZ_OPTS_filenames := -max_len=67585

# Every target runs, whatever one before it found; fuzz fails if any did.
fuzz: $(FUZZ_BINS)
	$(Q)st=0; $(foreach t,$(FUZZ_TARGETS), \
		mkdir -p $(FUZZ_DIR)/corpus-$(t) || exit 1; \
		echo "  FUZZ     $(t) for $(FUZZ_SECS) s"; \
		$(FUZZ_DIR)/fuzz_$(t) $(FUZZ_OPTS) $(FUZZ_OPTS_$(t)) -max_total_time=$(FUZZ_SECS) \
			-artifact_prefix=$(FUZZ_DIR)/crash-$(t)- \
			$(FUZZ_DIR)/corpus-$(t) tests/fuzz/corpus/$(t) || \
			{ st=1; echo "make fuzz: $(t) found an input it fails on" >&2; };) \
	exit $$st

fuzz-regress: $(FUZZ_BINS)
	$(Q)for t in $(FUZZ_TARGETS); do \
		echo "  FUZZ     $$t: corpus"; \
		$(FUZZ_DIR)/fuzz_$$t $(FUZZ_OPTS) -runs=0 -artifact_prefix=$(FUZZ_DIR)/crash-$$t- \
			tests/fuzz/corpus/$$t || exit 1; \
	done

# make test's: each target's corpus replayed, then fuzzed from it for
# FUZZ_TEST_SECS (seconds: new inputs from a change's code paths; the
# long search is make fuzz's).
FUZZ_TEST_SECS ?= 5
fuzz-test: fuzz-regress
	$(Q)$(MAKE) --no-print-directory fuzz FUZZ_SECS=$(FUZZ_TEST_SECS)

.PHONY: fuzz fuzz-regress fuzz-test
