# SPDX-License-Identifier: GPL-2.0-only
# Long runs of every tool under a heavy workload (tests/soak.py), included
# by tests/tests.mk:
#
#   make soak [SOAK_SECS=600] [SOAK_WARMUP=60] [SOAK_PARALLEL=1]
#
# Each tool SOAK_SECS at a 1 s interval, sampled every 10 s: VmRSS may
# grow at most 256 KiB after SOAK_WARMUP, every hash map it holds stays
# under max_entries, its JSON counts no lost event, and SIGINT ends it
# with exit 0 and a final report. SOAK_PARALLEL runs at a time (2 cores:
# at most 2). As root, on the built tools.

SOAK_SECS ?= 600
SOAK_WARMUP ?= 60
SOAK_PARALLEL ?= 1

.PHONY: soak
soak: $(BINS) $(WORKLOADS)
	$(Q)python3 tests/soak.py --secs $(SOAK_SECS) --warmup $(SOAK_WARMUP) \
		--parallel $(SOAK_PARALLEL) $(OUTPUT)

# For make test: 60 s a tool, the growth measured after 20 s, two runs
# at a time (~3.5 min).
TEST_SOAK_SECS ?= 60
TEST_SOAK_WARMUP ?= 20
TEST_SOAK_PARALLEL ?= 2
.PHONY: soak-test
soak-test: $(BINS) $(WORKLOADS)
	$(Q)$(MAKE) --no-print-directory soak SOAK_SECS=$(TEST_SOAK_SECS) SOAK_WARMUP=$(TEST_SOAK_WARMUP) \
		SOAK_PARALLEL=$(TEST_SOAK_PARALLEL)
