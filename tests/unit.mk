# SPDX-License-Identifier: GPL-2.0-only
# cmocka unit tests of the pure user-space parts of common/ (tests/unit/).
# Included by the top-level Makefile, which defines OUTPUT, CC, CFLAGS,
# CPPFLAGS, Q, msg and the $(OUTPUT)/common/%.o rule. Needs libcmocka-dev.
#
#   make unit-test   build and run every test program
#
# Test programs are linked dynamically whatever STATIC says for the tools.

UNIT_DIR := $(OUTPUT)/tests/unit
UNIT_TESTS := hist json output cli escape btf_fields metrics report textfile filenames
UNIT_BINS := $(UNIT_TESTS:%=$(UNIT_DIR)/test_%)
UNIT_LDLIBS ?= -lcmocka -lbpf -lelf -lz -lm
UNIT_CPPFLAGS := -Itests/unit
UNIT_HDRS := $(wildcard tests/unit/*.h)

# What each test program links besides its own test_<name>.c: the objects
# of common/ under test and test helpers (diag.o, and cli.o for --btf,
# need libbpf).
UNIT_LINK_hist := $(OUTPUT)/common/hist.o
UNIT_LINK_json := $(OUTPUT)/common/json.o $(OUTPUT)/common/escape.o $(UNIT_DIR)/minijson.o
UNIT_LINK_output := $(OUTPUT)/common/output.o $(OUTPUT)/common/keyed.o $(OUTPUT)/common/hist.o \
	$(OUTPUT)/common/json.o $(OUTPUT)/common/escape.o $(OUTPUT)/common/metrics.o \
	$(UNIT_DIR)/minijson.o
UNIT_LINK_metrics := $(OUTPUT)/common/metrics.o $(OUTPUT)/common/escape.o $(OUTPUT)/common/hist.o
UNIT_LINK_report := $(UNIT_LINK_output) $(OUTPUT)/common/table.o
UNIT_LINK_cli := $(OUTPUT)/common/cli.o $(OUTPUT)/common/completion.o $(OUTPUT)/common/userpath.o
UNIT_LINK_escape := $(OUTPUT)/common/escape.o $(OUTPUT)/common/diag.o \
	$(OUTPUT)/common/cli.o $(OUTPUT)/common/completion.o $(OUTPUT)/common/userpath.o
UNIT_LINK_filenames := $(OUTPUT)/common/filenames.o
UNIT_LINK_btf_fields := $(OUTPUT)/common/btf_fields.o $(OUTPUT)/common/kernel_layout.o
UNIT_LINK_textfile := $(OUTPUT)/common/textfile.o $(OUTPUT)/common/userpath.o $(OUTPUT)/common/diag.o \
	$(OUTPUT)/common/escape.o $(OUTPUT)/common/cli.o $(OUTPUT)/common/completion.o

$(UNIT_DIR):
	$(Q)mkdir -p $@

$(UNIT_DIR)/test_cli.o: $(OUTPUT)/version.h

$(UNIT_DIR)/%.o: tests/unit/%.c $(UNIT_HDRS) | $(UNIT_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(UNIT_CPPFLAGS) $(CFLAGS) -c $< -o $@

define UNIT_TEST_RULE
$(UNIT_DIR)/test_$(1): tests/unit/test_$(1).c $(UNIT_LINK_$(1)) $(COMMON_HDRS) $(UNIT_HDRS) | $(UNIT_DIR)
	$$(call msg,LINK,$$@)
	$$(Q)$$(CC) $$(CPPFLAGS) $$(UNIT_CPPFLAGS) $$(CFLAGS) $$(LDFLAGS) $$< $(UNIT_LINK_$(1)) $$(UNIT_LDLIBS) -o $$@
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call UNIT_TEST_RULE,$(t))))

# Run them all (each prints cmocka's summary); fail if any failed. A
# cross build's run under the emulator (qemu-aarch64-static: dynamic
# programs too, their loader and libraries the :arm64 packages'), where
# the time bounds of the work-budget tests are UNIT_TIME_SCALE times
# looser.
ifeq ($(CROSS),1)
UNIT_RUN ?= UNIT_TIME_SCALE=20 $(COMPLETION_RUN)
endif
UNIT_RUN ?=
unit-test: $(UNIT_BINS)
	$(Q)failed=; \
	for t in $(UNIT_BINS); do \
		echo "  UNIT     $$t"; \
		$(UNIT_RUN) $$t || failed="$$failed $${t##*/}"; \
	done; \
	if [ -n "$$failed" ]; then echo "unit tests FAILED:$$failed" >&2; exit 1; fi
