# SPDX-License-Identifier: GPL-2.0-only
# The arm64 tools, built and tested from this machine (issue 21), included
# by tests/tests.mk:
#
#   make arm64-test    the cross build (make ARCH=arm64, in build-arm64),
#                      its checks below, then its guest tests on Debian
#                      12's arm64 kernel (make vm-test ARCH=arm64)
#   make arm64-check   the same but the guest (make test boots it beside
#                      the x86 guests: guest-test in tests/tests.mk)
#
# On an x86_64 host: gcc-aarch64-linux-gnu, the :arm64 -dev packages
# (dpkg --add-architecture arm64) and qemu-user-static, besides the VM's
# qemu-system-arm. On an arm64 host the same targets build natively.
#
# The checks: each tool an AArch64 static ELF with no loader, that runs
# (--version, under qemu-user where this machine is not arm64); the unit
# tests of common/ built for arm64 and run the same way (where char is
# unsigned, among others); and the completion tables, which name options
# and words, identical to this machine's build's; make release of it,
# tracetools-VERSION-aarch64.tar.gz, its tools stripped AArch64 ELFs
# whose SHA256SUMS check.

ARM64_OUTPUT ?= build-arm64
# Its own compiler, whatever CC this make was given (a command line's CC
# reaches every sub-make): the cross one, or on an arm64 host the native.
ARM64_CC := $(if $(filter arm64,$(HOST_ARCH)),$(CC),$(GNU_ARCH_arm64)-linux-gnu-gcc)
ARM64_MAKE = $(MAKE) --no-print-directory ARCH=arm64 OUTPUT=$(ARM64_OUTPUT) CC=$(ARM64_CC)
ARM64_RUN := $(if $(filter arm64,$(HOST_ARCH)),,qemu-aarch64-static)

.PHONY: arm64-build arm64-check arm64-test
arm64-build:
	+$(Q)$(ARM64_MAKE) all workloads

# Each step whatever the one before said, as make test's stages; fails if
# any did. arm64-check is all of them but the guest's, which make test
# boots beside the x86 guests (guest-test, tests/tests.mk).
ARM64_CHECKS = st=0; \
	$(ARM64_MAKE) unit-test || { st=1; echo "arm64-test: the unit tests failed" >&2; }; \
	for t in $(TOOLS); do \
		f=$(ARM64_OUTPUT)/$$t; \
		m=$$(LC_ALL=C readelf -hW $$f | sed -n 's/^ *Machine: *//p'); \
		[ "$$m" = AArch64 ] || { echo "arm64-test: $$f is for '$$m', not AArch64" >&2; st=1; }; \
		! LC_ALL=C readelf -lW $$f | grep -q 'program interpreter' || \
			{ echo "arm64-test: $$f is not static" >&2; st=1; }; \
		v=$$($(ARM64_RUN) $$f --version | head -n1); \
		[ "$$v" = "$$($(OUTPUT)/$$t --version | head -n1)" ] || \
			{ echo "arm64-test: $$f --version says '$$v'" >&2; st=1; }; \
		cmp $(OUTPUT)/completion/$$t.table $(ARM64_OUTPUT)/completion/$$t.table || st=1; \
	done; \
	[ $$st = 0 ] && echo "arm64-test: $(TOOLS): AArch64, static, run, same completion tables"; \
	tar=$(ARM64_OUTPUT)/tracetools-$(VERSION)-aarch64.tar.gz; \
	if $(ARM64_MAKE) release && (set -e; d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
		tar -xzf $$tar -C $$d; cd $$d/tracetools-$(VERSION)-aarch64; sha256sum --quiet -c SHA256SUMS; \
		for t in $(TOOLS); do \
			LC_ALL=C readelf -hW $$t | grep -qE '^ *Machine: *AArch64$$' && \
			! LC_ALL=C readelf -SW $$t | grep -q '\.debug_info' || \
			{ echo "arm64-test: $$tar: $$t is not a stripped AArch64 ELF" >&2; exit 1; }; \
		done); then \
		echo "arm64-test: $$(basename $$tar): $(TOOLS), stripped AArch64, sums check"; \
	else st=1; echo "arm64-test: make release failed or its tarball is wrong" >&2; fi

arm64-check: arm64-build all
	+$(Q)$(ARM64_CHECKS); exit $$st

arm64-test: arm64-build all
	+$(Q)$(ARM64_CHECKS); \
	$(ARM64_MAKE) vm-test || st=1; \
	exit $$st
