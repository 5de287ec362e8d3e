# SPDX-License-Identifier: GPL-2.0-only
# Tests: unit tests of common/ (cmocka) and bats suites running the real tools.
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUTPUT)/tests/%,$(wildcard tests/workloads/*.c))
BATS ?= bats

$(OUTPUT)/tests/%: tests/workloads/%.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(PLAIN_CFLAGS) -static -pthread $< -o $@	# static: no loader reads at start

# Test-only tools on the common runtime (e.g. one the verifier rejects).
TEST_TOOLS := $(patsubst tests/tools/%.c,$(OUTPUT)/tests/%,$(filter-out %.bpf.c,$(wildcard tests/tools/*.c)))

$(OUTPUT)/tests/%.bpf.o: tests/tools/%.bpf.c $(BPF_HDRS) $(COMMON_HDRS) | $(OUTPUT)/tests
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/tests/%.o: tests/tools/%.c $(OUTPUT)/tests/%.skel.h $(COMMON_HDRS) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

workloads: $(WORKLOADS) $(TEST_TOOLS)

-include tests/unit.mk

# $(call bats_tap,DIR): TAP from bats on DIR's suites, then one closing
# line "bats: N passed, N failed, N skipped".
bats_tap = set -o pipefail; $(BATS) --tap $(1) | awk '{ print } \
		/^ok .*\# skip/ { s++; next } /^ok / { p++ } /^not ok / { f++ } \
		END { printf "bats: %d passed, %d failed, %d skipped\n", p, f, s; exit f > 0 }'

bats-test: all $(WORKLOADS) $(TEST_TOOLS)	# all: the completion files too
	$(Q)$(call bats_tap,tests/)

# The programs built without BPF atomics (bpf/skeleton.sh), on this
# kernel (TRACETOOLS_BPF_ATOMICS=0): from each tool's own suite, a test of
# each feature whose code differs there (keyed histograms, -c and -n,
# biolat's in-flight table, opensnoop's long-path hash, the start store).
# make vm-test runs every guest test on 5.10, where they are the only ones.
# (a line's end joins the next with a space, which the subst takes out)
NOATOMICS_TESTS = $(subst | ,|,$(NOATOMICS_LIST))
NOATOMICS_LIST := ^-p PID: exact|^-n COMM: |^-c CGROUP: |^-P: one histogram|^-F: one histogram|\
	^intervals lose nothing: 20 ms|^a read interrupted by signals with SA_RESTART|\
	^-C: the workload ranks first|^-C --by file: two paths|^-L: exactly N opens|^-t and -c include|\
	^-D: one histogram per disk|^lost: once|^10 ms intervals, per disk|^-p and -t: the I/O|\
	^IPv4 over veth|^-p: one receiver's rows|^a socket two processes read|^nothing of [a-z]+ stays loaded
# It checks that the switch works, and that no test it names was renamed
# out of it (NOATOMICS_COUNT).
NOATOMICS_SUITES := tests/readlat.bats tests/opensnoop.bats tests/biolat.bats tests/tcprcv.bats
NOATOMICS_COUNT := 27
noatomics-test: all $(WORKLOADS) $(TEST_TOOLS)
	$(Q)TRACETOOLS_BPF_ATOMICS=0 $(OUTPUT)/readlat --check | grep -qE '^BPF atomics +fallback +TRACETOOLS_BPF_ATOMICS=0' || \
		{ echo "noatomics-test: TRACETOOLS_BPF_ATOMICS=0 did not choose the programs without BPF atomics" >&2; exit 1; }
	$(Q)n=$$($(BATS) --count -f "$(NOATOMICS_TESTS)" $(NOATOMICS_SUITES)); [ "$$n" -ge $(NOATOMICS_COUNT) ] || \
		{ echo "noatomics-test: $$n tests match NOATOMICS_TESTS, not $(NOATOMICS_COUNT): one was renamed?" >&2; exit 1; }
	$(Q)export TRACETOOLS_BPF_ATOMICS=0; $(call bats_tap,-f "$(NOATOMICS_TESTS)" $(NOATOMICS_SUITES))

# The bats suite on the sanitized build (make SANITIZE=1 san-test): every
# report of ASan, UBSan or LeakSanitizer is written to a log of its own
# (a tool that a test expects to fail must not hide one in its exit code),
# in a directory under /tmp that the tests' unprivileged users can write
# to, and any log fails the run, whatever bats said. The suite runs with
# SANITIZE and make's flags out of its environment: the tests that build
# (a release, a package) build as a user would.
san-test:
ifneq ($(SANITIZE),1)
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 san-test
else
san-test: all $(WORKLOADS) $(TEST_TOOLS)
	$(Q)logs=$$(mktemp -d /tmp/san-logs.XXXXXX) && chmod 1777 "$$logs" && st=0; \
	opts=halt_on_error=1:print_stacktrace=1:log_path=$$logs/san; \
	ASAN_OPTIONS=$$opts:detect_leaks=1 UBSAN_OPTIONS=$$opts BUILD=$(abspath $(OUTPUT)) \
		env -u SANITIZE -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		$(MAKE) --no-print-directory bats-test || st=1; \
	if [ -n "$$(ls -A "$$logs")" ]; then \
		echo "san-test: sanitizer reports in $$logs:" >&2; \
		head -n 40 "$$logs"/* >&2; st=1; \
	fi; exit $$st
endif

-include tests/fuzz/fuzz.mk
-include tests/vm/vm.mk
-include tests/valgrind/valgrind.mk
-include tests/lifecycle.mk
-include tests/soak.mk
-include tests/lint.mk
-include tests/arm64.mk

# What make test runs, in order: static analysis, the unit tests, each
# fuzz target for 60 s from its corpus, the tools on this kernel (and a
# part of it with the programs built without BPF atomics), the
# same suite on the sanitized build, one run of each tool under
# valgrind, 100+ start/stop cycles of each tool, each tool for 60 s
# under load (RSS, map fill, lost), then Debian 12's 6.1 (and its
# PREEMPT_RT build) and Debian 11's 5.10 in a VM, then the arm64 build and its
# guest tests on arm64 6.1. Every stage runs even when one before it
# failed (a failed bats test must not hide what 6.1 says), and test
# fails if any stage did.
TEST_STAGES := lint unit-test fuzz bats-test noatomics-test san-test valgrind-test lifecycle-test soak-test vm-test \
	arm64-test

test:
	$(Q)st=0; for t in $(TEST_STAGES); do \
		$(MAKE) --no-print-directory $$t || { st=1; echo "make test: $$t failed" >&2; }; \
	done; exit $$st
