# SPDX-License-Identifier: GPL-2.0-only
# Start/stop cycles of every tool in every report mode (tests/lifecycle.py),
# included by tests/tests.mk:
#
#   make lifecycle [CYCLES=100] [LIFECYCLE_SEED=N]
#
# CYCLES per tool and mode, each stopped by SIGINT, SIGTERM or SIGKILL at
# a moment drawn from the seed it prints (LIFECYCLE_SEED= repeats a run):
# each must end within 1 s of the signal, with its final report, and leave
# none of its BPF objects loaded. As root, on the built tools.

CYCLES ?= 100
LIFECYCLE_SEED ?=

.PHONY: lifecycle
lifecycle: $(BINS)
	$(Q)LIFECYCLE_SEED=$(LIFECYCLE_SEED) python3 tests/lifecycle.py --cycles $(CYCLES) $(OUTPUT)

# make test's stage: fewer cycles (the 100 of make lifecycle take ~14
# min on 2 busy cores), every tool, mode and kind of moment all the same.
TEST_CYCLES ?= 20
.PHONY: lifecycle-test
lifecycle-test: $(BINS)
	$(Q)$(MAKE) --no-print-directory lifecycle CYCLES=$(TEST_CYCLES)
