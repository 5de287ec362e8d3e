# SPDX-License-Identifier: GPL-2.0-only
# Adding a tool: bpf/<tool>.bpf.c, tools/<tool>.c (+ tools/<tool>.h), and its name here.
TOOLS := readlat opensnoop biolat tcprcv

VERSION ?= 0.1.0
SHELL := /bin/bash
OUTPUT ?= build
ARCH ?= x86
PREFIX ?= /usr/local
DESTDIR ?=
STATIC ?= 1

CC ?= cc
CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip

# CFLAGS/CPPFLAGS/LDFLAGS are the user's (make CFLAGS=...); what the code
# needs is added apart so that overriding them cannot drop it.
CFLAGS ?= -O2 -g
override CFLAGS += -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -DTOOLS_VERSION='"$(VERSION)"'
override CPPFLAGS += -Icommon -Itools -I$(OUTPUT)
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-Ivmlinux/$(ARCH) -Icommon -Ibpf -Itools

ifeq ($(STATIC),1)
LDLIBS += -static -Wl,--start-group -lbpf -lelf -lz -lzstd -Wl,--end-group -lm
else
LDLIBS += -lbpf -lelf -lz -lm
endif

COMMON_SRCS := $(wildcard common/*.c)
COMMON_OBJS := $(COMMON_SRCS:common/%.c=$(OUTPUT)/common/%.o)
COMMON_HDRS := $(wildcard common/*.h)
BPF_HDRS := $(wildcard bpf/*.h)
BINS := $(TOOLS:%=$(OUTPUT)/%)

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.PHONY: all clean test unit-test bats-test install vmlinux workloads bench vm-test
.DELETE_ON_ERROR:
.SECONDARY:

all: $(BINS)

$(OUTPUT) $(OUTPUT)/common $(OUTPUT)/tests:
	$(Q)mkdir -p $@

$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) $(COMMON_HDRS) $(wildcard tools/*.h) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(notdir $*)_bpf > $@

$(OUTPUT)/common/%.o: common/%.c $(COMMON_HDRS) | $(OUTPUT)/common
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(OUTPUT)/%.o: tools/%.c $(OUTPUT)/%.skel.h $(COMMON_HDRS) $(wildcard tools/*.h) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(OUTPUT)/%: $(OUTPUT)/%.o $(COMMON_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# Regenerate the committed vmlinux.h from this machine's kernel BTF.
vmlinux:
	$(call msg,GEN,vmlinux/$(ARCH)/vmlinux.h)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h

install: $(BINS)
	$(Q)install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/share/man/man8
	$(Q)install -m 0755 $(BINS) $(DESTDIR)$(PREFIX)/sbin/
	$(Q)install -m 0644 $(TOOLS:%=man/%.8) $(DESTDIR)$(PREFIX)/share/man/man8/

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

include tests/tests.mk
include bench/bench.mk
