# SPDX-License-Identifier: GPL-2.0-only
# One run of each tool under valgrind's memcheck (tests/valgrind/
# valgrind.bats), on make VALGRIND=1's build (dynamic, -DTOOLS_MEMCHECK,
# in build-vg). Included by tests/tests.mk. Needs valgrind (its
# <valgrind/memcheck.h> too) and bats; as root.
#
#   make valgrind-test          build build-vg, run the suite on it
#   make valgrind-test VG_WAIT=N  bound on each wait for a tool under valgrind (s)

VG_WAIT ?= 120

valgrind-test:
ifneq ($(VALGRIND),1)
	$(Q)$(MAKE) --no-print-directory VALGRIND=1 valgrind-test
else
valgrind-test: $(BINS) $(WORKLOADS)
	$(Q)export BUILD=$(abspath $(OUTPUT)) VG_WAIT=$(VG_WAIT); $(call bats_run,-j 1 tests/valgrind/)
endif
