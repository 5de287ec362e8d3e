# SPDX-License-Identifier: GPL-2.0-only
# make bench: overhead, start-up and growth, side by side with the peers;
# writes bench/RESULTS.md. Included by the top-level Makefile.
BENCH_DIR := $(OUTPUT)/bench
BENCH_BPF := $(patsubst bench/%.bpf.c,$(BENCH_DIR)/%.bpf.o,$(wildcard bench/*.bpf.c))
BENCH_BINS := $(BENCH_DIR)/readbench $(BENCH_DIR)/loader $(BENCH_DIR)/startup

$(BENCH_DIR):
	$(Q)mkdir -p $@

$(BENCH_DIR)/%.bpf.o: bench/%.bpf.c | $(BENCH_DIR)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BENCH_DIR)/loader: bench/loader.c | $(BENCH_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< $(LDLIBS) -o $@

# static: the workload makes no loader reads, so its read count is exact
$(BENCH_DIR)/%: bench/%.c bench/bench.mk | $(BENCH_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -static -pthread $(filter %.c,$^) -o $@

bench: $(BINS) $(BENCH_BPF) $(BENCH_BINS)
	$(Q)BUILD=$(OUTPUT) bench/run.sh
