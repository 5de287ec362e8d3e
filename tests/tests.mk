# SPDX-License-Identifier: GPL-2.0-only
# Tests: unit tests of common/ (cmocka) and bats suites running the real tools.
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUTPUT)/tests/%,$(wildcard tests/workloads/*.c))
BATS ?= bats

$(OUTPUT)/tests/%: tests/workloads/%.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -static -pthread $< -o $@	# static: no loader reads at start

# Test-only tools on the common runtime (e.g. one the verifier rejects).
TEST_TOOLS := $(patsubst tests/tools/%.c,$(OUTPUT)/tests/%,$(filter-out %.bpf.c,$(wildcard tests/tools/*.c)))

$(OUTPUT)/tests/%.bpf.o: tests/tools/%.bpf.c $(BPF_HDRS) | $(OUTPUT)/tests
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/%.o: tests/tools/%.c $(OUTPUT)/tests/%.skel.h $(COMMON_HDRS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

workloads: $(WORKLOADS) $(TEST_TOOLS)

-include tests/unit.mk

# TAP from bats, then one closing line "bats: N passed, N failed, N skipped".
bats-test: $(BINS) $(WORKLOADS) $(TEST_TOOLS)
	$(Q)set -o pipefail; $(BATS) --tap tests/ | awk '{ print } \
		/^ok .*# skip/ { s++; next } /^ok / { p++ } /^not ok / { f++ } \
		END { printf "bats: %d passed, %d failed, %d skipped\n", p, f, s; exit f > 0 }'

-include tests/fuzz/fuzz.mk
-include tests/vm/vm.mk

# Unit tests, the fuzz targets over their corpus (tests/fuzz), then the
# tools on this kernel, then on Debian 12's 6.1 in a VM: every stage runs
# even when one before it failed (a failed bats test must not hide what
# 6.1 says), and test fails if any stage did.
test:
	$(Q)st=0; for t in unit-test fuzz-regress bats-test vm-test; do \
		$(MAKE) --no-print-directory $$t || { st=1; echo "make test: $$t failed" >&2; }; \
	done; exit $$st
