# SPDX-License-Identifier: GPL-2.0-only
# Tests: unit tests of common/ (cmocka) and bats suites running the real tools.
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUTPUT)/tests/%,$(wildcard tests/workloads/*.c))
BATS ?= bats

$(OUTPUT)/tests/%: tests/workloads/%.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -static -pthread $< -o $@

workloads: $(WORKLOADS)

-include tests/unit.mk

bats-test: $(BINS) $(WORKLOADS)
	$(Q)$(BATS) tests/

test: unit-test bats-test
