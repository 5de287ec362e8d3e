# SPDX-License-Identifier: GPL-2.0-only
# make bench: overhead, start-up and growth, side by side with the peers;
# writes bench/RESULTS.md. Included by the top-level Makefile.
BENCH_DIR := $(OUTPUT)/bench
BENCH_BPF := $(patsubst bench/%.bpf.c,$(BENCH_DIR)/%.bpf.o,$(wildcard bench/*.bpf.c))
BENCH_BINS := $(BENCH_DIR)/readbench $(BENCH_DIR)/openbench $(BENCH_DIR)/loader $(BENCH_DIR)/startup $(BENCH_DIR)/corelight \
	$(BENCH_DIR)/blkcount $(BENCH_DIR)/tcpcount

$(BENCH_DIR):
	$(Q)mkdir -p $@

$(BENCH_DIR)/%.bpf.o: bench/%.bpf.c $(wildcard bench/*.bpf.h) $(BPF_HDRS) | $(BENCH_DIR)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BENCH_DIR)/loader: bench/loader.c | $(BENCH_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< $(LDLIBS) -o $@

# biolat's count control: a libbpf skeleton.
$(BENCH_DIR)/blkcount.skel.h: $(BENCH_DIR)/blkcount.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name blkcount_bpf > $@

$(BENCH_DIR)/blkcount: bench/blkcount.c bench/control.h $(BENCH_DIR)/blkcount.skel.h
	$(call msg,LINK,$@)
	$(Q)$(CC) -I$(BENCH_DIR) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< $(LDLIBS) -o $@

# tcprcv's floor: a libbpf skeleton counting on its two busiest tracepoints.
$(BENCH_DIR)/tcpcount.bpf.o: bench/tcpcount.h
$(BENCH_DIR)/tcpcount.skel.h: $(BENCH_DIR)/tcpcount.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name tcpcount_bpf > $@

$(BENCH_DIR)/tcpcount: bench/tcpcount.c bench/tcpcount.h bench/control.h $(BENCH_DIR)/tcpcount.skel.h
	$(call msg,LINK,$@)
	$(Q)$(CC) -I$(BENCH_DIR) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< $(LDLIBS) -o $@

# A light skeleton: the kernel does CO-RE, libbpf is not linked.
$(BENCH_DIR)/core.lskel.h: $(BENCH_DIR)/core.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton -L $< name core_bpf > $@

$(BENCH_DIR)/corelight: bench/corelight.c $(BENCH_DIR)/core.lskel.h
	$(call msg,LINK,$@)
	$(Q)$(CC) -I$(BENCH_DIR) $(PLAIN_CFLAGS) -Wno-unused-parameter -static $< -o $@

# static: the workload makes no loader reads, so its read count is exact
$(BENCH_DIR)/%: bench/%.c bench/bench.mk | $(BENCH_DIR)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(PLAIN_CFLAGS) -static -pthread $(filter %.c,$^) -o $@

# biolat's counts: bioload makes the I/O on a loop device; tcprcv's
# throughput: tcpload moves the bytes over loopback.
bench: $(BINS) $(BENCH_BPF) $(BENCH_BINS) $(OUTPUT)/tests/bioload $(OUTPUT)/tests/tcpload
	$(Q)BUILD=$(OUTPUT) bench/run.sh
