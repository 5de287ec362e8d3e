# SPDX-License-Identifier: GPL-2.0-only
# Tests: unit tests of common/ (cmocka) and bats suites running the real tools.
NPROC := $(shell nproc 2>/dev/null || echo 1)
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

$(OUTPUT)/tests/%.o: tests/tools/%.c $(OUTPUT)/tests/%.skel.h $(COMMON_HDRS) $(wildcard tests/tools/*.h) | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

workloads: $(WORKLOADS) $(TEST_TOOLS)

-include tests/unit.mk

# The bats suites: the tools' own (the tools, the runtime, hostile input:
# what make check takes) and those that build, package or install
# (package-test). The sanitized run takes the tools' and those of the
# package suites that run the tools' code (their command lines: the man
# pages' and completions' checks). The slowest files first: the last to
# start decides when a parallel run ends.
PACKAGE_SUITES := $(addprefix tests/,deb.bats release.bats install.bats man.bats completion.bats readme.bats)
SLOW_SUITES := $(addprefix tests/,runtime.bats readlat.bats tcprcv.bats biolat.bats opensnoop.bats)
TOOL_SUITES := $(SLOW_SUITES) $(filter-out $(SLOW_SUITES) $(PACKAGE_SUITES),$(sort $(wildcard tests/*.bats)))
SAN_SUITES := $(TOOL_SUITES) tests/completion.bats tests/man.bats
# Tests at a time (tests/bats.sh; those tagged serial run alone after).
BATS_JOBS ?= 4
# $(call bats_run,ARGS): tests/bats.sh ARGS ([-j N] [-f REGEX] FILE...),
# without this make's flags: a test that runs make runs it as a user does.
bats_run = env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL BATS='$(BATS)' BATS_JOBS=$(BATS_JOBS) bash tests/bats.sh $(1)

bats-test: all $(WORKLOADS) $(TEST_TOOLS)	# all: the completion files too
	$(Q)$(call bats_run,$(TOOL_SUITES))

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
	$(Q)export TRACETOOLS_BPF_ATOMICS=0; $(call bats_run,-f "$(NOATOMICS_TESTS)" $(NOATOMICS_SUITES))

# SAN_SUITES on the sanitized build (make SANITIZE=1 san-test):
# every report of ASan, UBSan or LeakSanitizer is written to a log of its
# own (a tool that a test expects to fail must not hide one in its exit
# code), in a directory under /tmp that the tests' unprivileged users can
# write to, and any log fails the run, whatever bats said.
san-test:
ifneq ($(SANITIZE),1)
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 san-test
else
san-test: all $(WORKLOADS) $(TEST_TOOLS)
	$(Q)logs=$$(mktemp -d /tmp/san-logs.XXXXXX) && chmod 1777 "$$logs" && st=0; \
	opts=halt_on_error=1:print_stacktrace=1:log_path=$$logs/san; \
	ASAN_OPTIONS=$$opts:detect_leaks=1 UBSAN_OPTIONS=$$opts BUILD=$(abspath $(OUTPUT)) \
		env -u SANITIZE $(call bats_run,$(SAN_SUITES)) || st=1; \
	if [ -n "$$(ls -A "$$logs")" ]; then \
		echo "san-test: sanitizer reports in $$logs:" >&2; \
		head -n 40 "$$logs"/* >&2; st=1; \
	fi; exit $$st
endif

# The suites that build, package or install, on the Debian package made
# once (make deb, in DEB_BUILDDIR), which deb.bats installs. One test at
# a time: a suite's tests install, then check, then purge, in order.
package-test: all $(WORKLOADS) deb
	$(Q)DEBS=$(abspath $(DEB_BUILDDIR)) $(call bats_run,-j 1 $(PACKAGE_SUITES))

# Reproducible builds: a second Debian package, made in another directory
# of another length, has every .deb byte for byte the same as the first
# (package-test's, made again here unless it is this tree's): the BPF
# objects' line info names their sources relative to the tree
# (REPRO_FLAGS). The release tarball's twin builds are release.bats's.
REPRO_DEB_BUILDDIR := $(OUTPUT)/repro/another/build-dir/b
repro-test:
	$(Q)[ -n "$$(ls $(DEB_BUILDDIR)/*.deb 2>/dev/null)" ] && \
	[ "$$($(DEB_TREE_SUM))" = "$$(cat $(DEB_BUILDDIR)/tree.sha256 2>/dev/null)" ] || \
		$(MAKE) --no-print-directory deb
	$(call msg,DEB,$(REPRO_DEB_BUILDDIR))
	$(Q)$(MAKE) --no-print-directory deb DEB_BUILDDIR=$(REPRO_DEB_BUILDDIR) > $(OUTPUT)/repro.log 2>&1 || \
		{ tail -n 40 $(OUTPUT)/repro.log >&2; exit 1; }
	$(Q)st=0; for f in $(DEB_BUILDDIR)/*.deb; do \
		g=$(REPRO_DEB_BUILDDIR)/$${f##*/}; \
		if cmp -s "$$f" "$$g"; then echo "repro-test: $${f##*/}: the same bytes"; continue; fi; \
		st=1; echo "repro-test: $$f and $$g differ; files that differ:" >&2; \
		diff <(dpkg-deb --ctrl-tarfile "$$f" | tar -xO ./md5sums) \
			<(dpkg-deb --ctrl-tarfile "$$g" | tar -xO ./md5sums) >&2; \
	done; exit $$st

-include tests/fuzz/fuzz.mk
-include tests/vm/vm.mk
-include tests/valgrind/valgrind.mk
-include tests/lifecycle.mk
-include tests/soak.mk
-include tests/lint.mk
-include tests/arm64.mk

# make check: the loop to run after every change, minutes (README): the
# unit tests, the fuzz corpora replayed, the tools' suites on this build.
CHECK_STAGES := unit-test fuzz-regress bats-test

# make test, what CI runs: static analysis; the unit tests; each fuzz
# target's corpus replayed and fuzzed for seconds (make fuzz for long
# runs); the tools' suites on this kernel, the part of them whose code
# differs on the programs built without BPF atomics, and the same suites
# on the sanitized build; the suites that build, package and install (the
# Debian package once), and the second builds that must give the same
# bytes; one run of each tool under valgrind; start/stop cycles of each
# tool; each tool for 60 s under load (RSS, map fill, lost); the arm64
# build and its checks; then the guests, two at a time: Debian 12's 6.1,
# its PREEMPT_RT build, Debian 11's 5.10 and arm64 6.1.
TEST_STAGES := lint unit-test fuzz-test bats-test noatomics-test san-test package-test repro-test \
	valgrind-test lifecycle-test soak-test arm64-check guest-test

# $(call stages,NAME,STAGE...): each stage (make -j, this machine's CPUs),
# even when one before it failed (a failed bats test must not hide what
# 6.1 says), with its time; then one line of every stage's time. Fails if
# any stage did.
stages = st=0; failed=; times=; start=$$(date +%s); \
	for t in $(2); do \
		s=$$(date +%s); \
		$(MAKE) --no-print-directory -j$(NPROC) $$t || { st=1; failed="$$failed $$t"; }; \
		s=$$(($$(date +%s) - s)); times="$$times $$t $$s,"; \
		echo "make $(1): $$t took $$s s"; \
	done; \
	echo "make $(1): stage times (s):$${times%,}; total $$(($$(date +%s) - start))"; \
	[ $$st = 0 ] || echo "make $(1): failed:$$failed" >&2; \
	exit $$st

# The guests of this build's kernels (vm-test) and of arm64's (make
# vm-test ARCH=arm64) in one run, VM_JOBS at a time, in that order (rt,
# the slowest, first). Either's guests that cannot be made (a kernel not
# downloaded, no cross compiler) do not keep the other's from running.
guest-test:
	+$(Q)st=0; runs=; \
	if $(MAKE) --no-print-directory vm-kernel vm-initramfs; then \
		runs=$$($(MAKE) -s --no-print-directory vm-runs | tail -n1); else st=1; fi; \
	if $(ARM64_MAKE) vm-kernel vm-initramfs; then \
		runs="$$runs $$($(ARM64_MAKE) -s vm-runs | tail -n1)"; else st=1; fi; \
	[ -z "$${runs// }" ] || VM_TIMEOUT=$(VM_TIMEOUT) VM_TESTS='$(VM_TESTS)' VM_JOBS=$(VM_JOBS) \
		bash tests/vm/run-all.sh $$runs || st=1; \
	exit $$st

.PHONY: check test fuzz-test package-test repro-test guest-test
check:
	+$(Q)$(call stages,check,$(CHECK_STAGES))

test:
	+$(Q)$(call stages,test,$(TEST_STAGES))
