# SPDX-License-Identifier: GPL-2.0-only
# Adding a tool: bpf/<tool>.bpf.c, tools/<tool>.c (+ tools/<tool>.h), and its name here.
TOOLS := readlat opensnoop biolat tcprcv

SHELL := /bin/bash
# make SANITIZE=1: the user space built with ASan and UBSan (every error
# fatal), linked dynamically (static ASan is not supported), in build-san
# unless OUTPUT is given; make SANITIZE=1 san-test runs the bats suite on
# it (tests/tests.mk). Workloads and BPF programs are built as always.
# A sanitized OUTPUT remembers it (its .sanitized): a make of it without
# SANITIZE (a test's make install OUTPUT=...) builds as it was built, not
# plain objects into a sanitized link.
ifeq ($(origin SANITIZE),undefined)
ifneq ($(origin OUTPUT),undefined)
SANITIZE := $(if $(wildcard $(OUTPUT)/.sanitized),1,0)
endif
endif
SANITIZE ?= 0
# make VALGRIND=1: the user space linked dynamically (memcheck replaces
# malloc and free only in a dynamic program: in a static one it sees no
# leak) with -DTOOLS_MEMCHECK (common/memcheck.h), in build-vg unless
# OUTPUT is given; make valgrind-test runs tests/valgrind/valgrind.bats
# on it (tests/valgrind/valgrind.mk).
VALGRIND ?= 0
# The machine the tools are for, in the kernel's words (its vmlinux/ARCH
# and the BPF programs' __TARGET_ARCH_): this one's by default. ARCH=arm64
# on an x86_64 host is a cross build (CROSS_COMPILE, default
# aarch64-linux-gnu-: Debian's gcc-aarch64-linux-gnu, with the libraries
# as :arm64 multiarch packages) into build-arm64 unless OUTPUT is given.
ARCHES := x86 arm64
arch_of_uname = $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(1)))
HOST_ARCH := $(call arch_of_uname,$(shell uname -m))
ARCH ?= $(HOST_ARCH)
# uname's words too: ARCH=aarch64, ARCH=x86_64 (an ARCH from the kernel's build)
override ARCH := $(call arch_of_uname,$(strip $(ARCH)))
ifeq ($(filter $(ARCH),$(ARCHES)),)
$(error ARCH=$(ARCH): one of $(ARCHES))
endif
# GNU triplets and the user-mode emulator's names (qemu-user-static).
GNU_ARCH_x86 := x86_64
GNU_ARCH_arm64 := aarch64
ifneq ($(ARCH),$(HOST_ARCH))
CROSS := 1
CROSS_COMPILE ?= $(GNU_ARCH_$(ARCH))-linux-gnu-
ifneq ($(SANITIZE)$(VALGRIND),00)
$(error ARCH=$(ARCH) is a cross build: SANITIZE and VALGRIND need this machine's arch)
endif
else
# A native build: a CROSS_COMPILE of the environment (a kernel build's) is
# not this build's.
override CROSS_COMPILE :=
endif
CROSS ?= 0
OUTPUT ?= $(if $(filter 1,$(SANITIZE)),build-san,$(if $(filter 1,$(VALGRIND)),build-vg,$(if $(filter 1,$(CROSS)),build-$(ARCH),build)))
PREFIX ?= /usr/local
DESTDIR ?=
STATIC ?= 1
ifeq ($(SANITIZE),1)
override STATIC := 0
$(shell mkdir -p '$(OUTPUT)' && touch '$(OUTPUT)/.sanitized')
# clang's: GCC's UBSan under ASan ignores log_path (san-test reads the logs)
ifeq ($(origin CC),default)
CC := clang
endif
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif
ifeq ($(VALGRIND),1)
override STATIC := 0
MEMCHECK_FLAGS := -DTOOLS_MEMCHECK
endif
# A VERSION file, the commit git archive wrote into an exported tree, or
# git describe (packaging/version.sh); make VERSION=x overrides it.
ifneq ($(origin VERSION),command line)
VERSION := $(shell packaging/version.sh 2>/dev/null)
ifeq ($(VERSION),)
$(warning no version: no VERSION file, no exported packaging/archive-version, no git checkout (make VERSION=...))
VERSION := unknown
endif
endif

ifeq ($(origin CC),default)
CC := $(if $(CROSS_COMPILE),$(CROSS_COMPILE)gcc,cc)
endif
STRIP ?= $(CROSS_COMPILE)strip
# A cross build's completion tables come from running its tools under
# the emulator (completion/completion.mk). Its compiler must build for
# ARCH: a CC given (the environment's, a parent make's) that builds for
# this machine would make x86 tools in build-arm64.
ifeq ($(CROSS),1)
COMPLETION_RUN ?= qemu-$(GNU_ARCH_$(ARCH))-static
CC_MACHINE := $(firstword $(subst -, ,$(shell $(CC) -dumpmachine 2>/dev/null)))
ifeq ($(CC_MACHINE),)
$(error ARCH=$(ARCH): no compiler $(CC) (apt-get install gcc-$(GNU_ARCH_$(ARCH))-linux-gnu, or give CROSS_COMPILE))
endif
ifneq ($(CC_MACHINE),$(GNU_ARCH_$(ARCH)))
$(error ARCH=$(ARCH): CC=$(CC) builds for $(CC_MACHINE), not $(GNU_ARCH_$(ARCH)) (leave CC unset for $(CROSS_COMPILE)gcc))
endif
endif
CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
LLVM_OBJDUMP ?= llvm-objdump

# CFLAGS/CPPFLAGS/LDFLAGS are the user's (make CFLAGS=...); what the code
# needs is added apart so that overriding them cannot drop it.
CFLAGS ?= -O2 -g
# Paths relative to the tree, in debug info and BPF line info alike, so
# that two checkouts of one commit build the same bytes.
REPRO_FLAGS := -ffile-prefix-map=$(CURDIR)=.
override CFLAGS += -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE $(REPRO_FLAGS)
# Static helpers (workloads) take these, never the sanitizers.
PLAIN_CFLAGS := $(CFLAGS)
override CFLAGS += $(SAN_FLAGS)
override LDFLAGS += $(SAN_FLAGS)
override CPPFLAGS += -Icommon -Itools -I$(OUTPUT) $(MEMCHECK_FLAGS)
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	$(REPRO_FLAGS) -Ivmlinux/$(ARCH) -Icommon -Ibpf -Itools

ifeq ($(STATIC),1)
LDLIBS += -static -Wl,--start-group -lbpf -lelf -lz -lzstd -Wl,--end-group -lm
else
LDLIBS += -lbpf -lelf -lz -lm
endif

COMMON_SRCS := $(sort $(wildcard common/*.c))	# sorted: one link order everywhere
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

.PHONY: all clean test unit-test bats-test noatomics-test install uninstall vmlinux workloads bench vm-test san-test valgrind-test
.DELETE_ON_ERROR:
.SECONDARY:

all: $(BINS)

# An OUTPUT is for one ARCH (its .arch, written when it is made): a make
# of it for another would take its objects as up to date.
$(OUTPUT) $(OUTPUT)/common $(OUTPUT)/tests:
	$(Q)mkdir -p $@ && { [ -e $(OUTPUT)/.arch ] || echo $(ARCH) > $(OUTPUT)/.arch; }
OUTPUT_ARCH := $(shell cat '$(OUTPUT)/.arch' 2>/dev/null)
ifneq ($(OUTPUT_ARCH),)
ifneq ($(OUTPUT_ARCH),$(ARCH))
$(error $(OUTPUT) holds an ARCH=$(OUTPUT_ARCH) build, not ARCH=$(ARCH): another OUTPUT, or make clean OUTPUT=$(OUTPUT) ARCH=$(OUTPUT_ARCH))
endif
endif

# bpf/gates-ordered.sh reads the line info before the strip: the interval
# gates' adds must be fetching ones (bpf/interval.bpf.h).
$(OUTPUT)/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) $(COMMON_HDRS) $(wildcard tools/*.h) bpf/gates-ordered.sh | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)bash bpf/gates-ordered.sh $(LLVM_OBJDUMP) $@
	$(Q)$(LLVM_STRIP) -g $@

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(notdir $*)_bpf > $@

# Each tool's programs twice: as written, and with BPF_NO_ATOMICS for
# kernels whose BPF has no atomic operation but add (before 5.12), which
# refuse a program holding another anywhere; bpf/only-add.sh fails the
# build if one is left there (clang also turns an add of 0 into an or).
# The tool's skeleton opens the one its kernel takes (bpf/skeleton.sh).
$(OUTPUT)/%.noatomics.bpf.o: bpf/%.bpf.c $(BPF_HDRS) $(COMMON_HDRS) $(wildcard tools/*.h) bpf/only-add.sh | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DBPF_NO_ATOMICS -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@
	$(Q)bash bpf/only-add.sh $(LLVM_OBJDUMP) $@

$(TOOLS:%=$(OUTPUT)/%.skel.h): $(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o $(OUTPUT)/%.noatomics.bpf.o bpf/skeleton.sh
	$(call msg,GEN-SKEL,$@)
	$(Q)bash bpf/skeleton.sh $(BPFTOOL) $(notdir $*)_bpf $(OUTPUT)/$*.bpf.o $(OUTPUT)/$*.noatomics.bpf.o > $@

# What --version prints, rewritten only when it changes (a new commit,
# STATIC=0), so that cli.o and the tools follow.
$(OUTPUT)/version.h: FORCE | $(OUTPUT)
	$(Q)printf '#define TOOLS_VERSION "%s"\n#define TOOLS_STATIC %d\n' \
		'$(VERSION)' $(if $(filter 1,$(STATIC)),1,0) > $@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi
$(OUTPUT)/common/cli.o: $(OUTPUT)/version.h
.PHONY: FORCE

$(OUTPUT)/common/%.o: common/%.c $(COMMON_HDRS) | $(OUTPUT)/common
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(OUTPUT)/%.o: tools/%.c $(OUTPUT)/%.skel.h $(COMMON_HDRS) $(wildcard tools/*.h) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(OUTPUT)/%: $(OUTPUT)/%.o $(COMMON_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The release tarball takes the shell completions (completion/completion.mk).
RELEASE_COMPLETIONS := completions
include packaging/release.mk

# Regenerate the committed vmlinux.h: from this machine's kernel BTF, or
# for another arch (a cross build) from the BTF inside the image of
# Debian's kernel of that arch, VMLINUX_PKG (downloaded and unpacked, never
# installed, as make vm-test does: tests/vm/kernel.sh), which is what
# /sys/kernel/btf/vmlinux shows on a machine booted with it.
VMLINUX_PKG_arm64 := linux-image-arm64
VMLINUX_PKG ?= $(VMLINUX_PKG_$(ARCH))
vmlinux:
	$(call msg,GEN,vmlinux/$(ARCH)/vmlinux.h)
ifeq ($(CROSS),1)
	$(Q)[ -n "$(VMLINUX_PKG)" ] || { echo "make vmlinux: no kernel package for ARCH=$(ARCH) (VMLINUX_PKG=...)" >&2; exit 1; }
	$(Q)bash tests/vm/kernel.sh $(VMLINUX_PKG) $(OUTPUT)/vmlinux-kernel $(VM_DEBARCH)
	$(Q)python3 vmlinux/image-btf.py $(OUTPUT)/vmlinux-kernel/vmlinuz $(OUTPUT)/vmlinux.btf
	$(Q)$(BPFTOOL) btf dump file $(OUTPUT)/vmlinux.btf format c > vmlinux/$(ARCH)/vmlinux.h.tmp
else
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux.h.tmp
endif
	$(Q)mv vmlinux/$(ARCH)/vmlinux.h.tmp vmlinux/$(ARCH)/vmlinux.h

# Where make install puts things (all under DESTDIR). APP_PREFIX goes
# before every installed tool's name, its man page's and the name inside
# that page, so that the tools can stand beside others of the same name
# (Debian's libbpf-tools has an opensnoop in /usr/sbin too): with
# APP_PREFIX=tt- they are tt-opensnoop and man tt-opensnoop.
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
APP_PREFIX ?=

# The fleet units (contrib/systemd), their ExecStart= naming the tools
# where this install puts them: made here, from SBINDIR and APP_PREFIX.
# The unit names stay <tool>-metrics.service whatever APP_PREFIX is. For
# PREFIX=/usr (a package) where this system's systemd keeps its units;
# else under PREFIX, where systemd looks too (/usr/local/lib/systemd/
# system), never over a package's. None on a system without systemd.
SYSTEMD_PACKAGE_UNITDIR := $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null)
SYSTEMD_UNITDIR ?= $(if $(SYSTEMD_PACKAGE_UNITDIR),$(if $(filter /usr,$(PREFIX)),$(SYSTEMD_PACKAGE_UNITDIR),$(PREFIX)/lib/systemd/system))

INSTALLED_BINS := $(TOOLS:%=$(DESTDIR)$(SBINDIR)/$(APP_PREFIX)%)
INSTALLED_MANS := $(TOOLS:%=$(DESTDIR)$(MANDIR)/man8/$(APP_PREFIX)%.8)
INSTALLED_UNITS := $(if $(SYSTEMD_UNITDIR),$(TOOLS:%=$(DESTDIR)$(SYSTEMD_UNITDIR)/%-metrics.service))

# A page names its tool in .TH, in NAME (what whatis and apropos list),
# on the lines that are the command alone (.B tool), on those that start
# with it (examples, and the sentences whose subject it is) and in SEE
# ALSO (tool(8)); those carry the installed names, the rest of the text
# (metric names, messages) is the tool's own.
ifneq ($(shell printf %s '$(APP_PREFIX)' | tr -d 'A-Za-z0-9._-'),)
$(error APP_PREFIX=$(APP_PREFIX): letters, digits, '.', '_' and '-' only)
endif
MAN_REFS := $(foreach u,$(TOOLS),-e 's/\<$(u)(8)/$(APP_PREFIX)$(u)(8)/g')

install: $(BINS)
	$(Q)install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man8
	$(Q)for t in $(TOOLS); do \
		n=$(APP_PREFIX)$$t; N=$$(printf %s "$$n" | tr a-z A-Z); \
		install -m 0755 $(OUTPUT)/$$t $(DESTDIR)$(SBINDIR)/$$n && \
		sed -e "s/^\.TH [^ ]* /.TH $$N /" -e "/^\.SH NAME/{n;s/^$$t /$$n /;}" \
			-e "s/^\.B $$t\$$/.B $$n/" -e "s/^$$t /$$n /" $(MAN_REFS) \
			man/$$t.8 > $(DESTDIR)$(MANDIR)/man8/$$n.8 && \
		chmod 0644 $(DESTDIR)$(MANDIR)/man8/$$n.8 || exit 1; \
	done
ifneq ($(SYSTEMD_UNITDIR),)
	$(Q)install -d $(DESTDIR)$(SYSTEMD_UNITDIR)
	$(Q)for t in $(TOOLS); do \
		n=$(APP_PREFIX)$$t; u=$(DESTDIR)$(SYSTEMD_UNITDIR)/$$t-metrics.service; \
		sed -e "s|/usr/local/sbin/$$t |$(SBINDIR)/$$n |" -e "s|man:$$t(8)|man:$$n(8)|" \
			contrib/systemd/$$t-metrics.service > $$u && \
		chmod 0644 $$u || exit 1; \
	done
endif

# Removes what install put there, with the same variables; the
# directories stay (they are the system's: /usr/local/sbin, man8).
uninstall:
	$(Q)rm -f $(INSTALLED_BINS) $(INSTALLED_MANS) $(INSTALLED_UNITS)

clean:
	$(call msg,CLEAN,$(OUTPUT))
	$(Q)rm -rf $(OUTPUT)

include tests/tests.mk
include packaging/deb.mk
include bench/bench.mk
include completion/completion.mk
