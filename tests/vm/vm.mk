# SPDX-License-Identifier: GPL-2.0-only
# The same static binaries, tested on other kernels: Debian 12's 6.1 cloud
# kernel (kprobes, fentry, BTF), its PREEMPT_RT build and Debian 11's 5.10
# (no BPF atomics but add: the programs built without them), each booted
# in turn under qemu without KVM, from one initramfs holding busybox, the
# binaries and the guest tests of tests/vm/guest/. See tests/vm/README.md.
# Included by tests/tests.mk.
#
#   make vm-test                     fetch the kernels once, build, boot each, test
#   make vm-test VM_JOBS=1           one guest at a time (default: one per CPU)
#   make vm-test VM_KERNELS=rt       only one kernel (cloud, rt, 5.10, or a package name)
#   make vm-test VM_KERNEL_PKG=linux-image-rt-amd64    the same (older spelling)
#   make vm-test VM_TESTS=readlat    only the guest tests of readlat.sh
#   make vm-test VM_TIMEOUT=600      hard bound on each VM run (seconds)
#   make vm-test VM_DISK_MB=128      size of the guest's test disk (run.sh)
#   make vm-smp-test ARCH=arm64      only the interval tests on 4 vCPUs, multi-threaded TCG

VM_DIR := $(OUTPUT)/vm
# The guest is the build's ARCH, its kernels Debian's packages of that
# architecture: x86 (amd64) under qemu-system-x86_64, arm64 under
# qemu-system-aarch64 (make vm-test ARCH=arm64, a cross build's binaries).
VM_DEBARCH_x86 := amd64
VM_DEBARCH_arm64 := arm64
VM_DEBARCH := $(VM_DEBARCH_$(ARCH))
# Kernel packages, started in this order (the slowest first: rt, whose
# guest takes three times the others', ends the run when it starts
# last). A word without the linux-image- prefix is short for
# linux-image-WORD-amd64 (cloud, rt; -arm64 for ARCH=arm64).
# VM_KERNEL_PKG, if set, is the default list (one package). arm64's
# default is Debian's generic arm64 kernel (linux-image-arm64).
VM_KERNEL_PKG ?=
VM_DEFAULT_KERNELS_x86 := rt cloud 5.10
VM_DEFAULT_KERNELS_arm64 := linux-image-arm64
VM_KERNELS ?= $(or $(VM_KERNEL_PKG),$(VM_DEFAULT_KERNELS_$(ARCH)))
# Another Debian release's kernel, by a word of its own: 5.10 is Debian
# 11's cloud kernel (the 5.10 LTS), from its suite (bullseye) through a
# private apt configuration in VM_DIR (apt-suite.sh): the machine's own
# apt sources and lists are not touched.
VM_SUITE_5.10 := bullseye
VM_PKG_5.10 := linux-image-cloud-$(VM_DEBARCH)
vm_pkg = $(or $(VM_PKG_$(1)),$(if $(filter linux-image-%,$(1)),$(1),linux-image-$(1)-$(VM_DEBARCH)))
vm_apt = $(if $(VM_SUITE_$(1)),$(VM_DIR)/apt-$(VM_SUITE_$(1))/apt.conf)
VM_TIMEOUT ?= 600
VM_TESTS ?=
# The guest's shell and tools: this machine's static busybox, or for a
# cross build busybox-static of the guest's architecture, downloaded
# (never installed) into VM_DIR.
BUSYBOX ?= $(if $(filter 1,$(CROSS)),$(VM_DIR)/busybox,/bin/busybox)
# Drivers the guest loads, from each kernel's own package (Debian builds
# them as modules): the test disk's (virtio-blk over PCI), with what they
# depend on. See modules.sh.
VM_MODULES ?= virtio_pci virtio_blk
# A kernel's short name (cloud, rt, 5.10, 6.1.0-57-rt, arm64): its
# directory, its log.
vm_name = $(patsubst %-$(VM_DEBARCH),%,$(patsubst linux-image-%,%,$(1)))
VM_KERNEL_DIRS := $(foreach k,$(VM_KERNELS),$(VM_DIR)/kernel-$(call vm_name,$(k)))
VM_INITRD := $(VM_DIR)/initramfs.cpio.gz
# Every binary the build makes, at the same path under /build in the guest.
VM_BINS := $(BINS) $(WORKLOADS) $(TEST_TOOLS) $(VM_DIR)/bpfls $(VM_DIR)/unitexec
# The guest scripts, and the systemd units (contrib/systemd) whose
# settings a guest test applies (unitexec: the guest has no systemd).
VM_GUEST := $(wildcard tests/vm/guest/*) $(wildcard contrib/systemd/*.service)
# The list itself, rewritten only when it changes: a binary or guest file
# that goes away rebuilds the initramfs too (as does the directory's mtime).
VM_LIST := $(VM_DIR)/initramfs.list

.PHONY: vm-test vm-smp-test vm-kernel vm-initramfs vm-force vm-runs

$(VM_DIR):
	$(Q)mkdir -p $@

# Each downloaded once: only a missing vmlinuz runs kernel.sh, which also
# reuses a .deb already in the kernel's directory.
define VM_KERNEL_RULE
$(VM_DIR)/kernel-$(call vm_name,$(1))/vmlinuz: $(call vm_apt,$(1)) | $(VM_DIR)
	$$(call msg,KERNEL,$(call vm_pkg,$(1)))
	$$(Q)$(if $(call vm_apt,$(1)),APT_CONFIG=$(abspath $(call vm_apt,$(1))) )bash tests/vm/kernel.sh \
		$(call vm_pkg,$(1)) $$(@D) $(VM_DEBARCH)
endef
$(foreach k,$(sort $(VM_KERNELS)),$(eval $(call VM_KERNEL_RULE,$(k))))

# Another release's apt: its lists fetched once (removing its directory
# fetches them again).
$(VM_DIR)/apt-%/apt.conf: tests/vm/apt-suite.sh | $(VM_DIR)
	$(call msg,APT,Debian $*)
	$(Q)bash tests/vm/apt-suite.sh $* $(@D)

# Each kernel's modules: rebuilt when its package, the list or the script
# changes (the list is kept in modules.want, rewritten only when it differs).
%/modules.want: vm-force | %/vmlinuz
	$(Q)echo '$(VM_MODULES)' | cmp -s - $@ || echo '$(VM_MODULES)' > $@

%/modules.cpio.gz: %/vmlinuz %/modules.want tests/vm/modules.sh
	$(call msg,MODULES,$@)
	$(Q)bash tests/vm/modules.sh $(@D) $(VM_MODULES)

$(VM_DIR)/busybox: tests/vm/busybox.sh | $(VM_DIR)
	$(call msg,BUSYBOX,$@)
	$(Q)bash tests/vm/busybox.sh $(VM_DEBARCH) $@

$(VM_DIR)/bpfls $(VM_DIR)/unitexec: $(VM_DIR)/%: tests/vm/%.c | $(VM_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(PLAIN_CFLAGS) -static $< -o $@

$(VM_LIST): vm-force | $(VM_DIR)
	$(Q)echo '$(BUSYBOX) $(VM_BINS) $(VM_GUEST)' | cmp -s - $@ || \
		echo '$(BUSYBOX) $(VM_BINS) $(VM_GUEST)' > $@

$(VM_INITRD): $(VM_BINS) $(VM_GUEST) $(VM_LIST) tests/vm/guest tests/vm/mkinitramfs.sh \
		$(if $(filter $(VM_DIR)/busybox,$(BUSYBOX)),$(BUSYBOX),$(wildcard $(BUSYBOX))) | $(VM_DIR)
	$(call msg,INITRD,$@)
	$(Q)bash tests/vm/mkinitramfs.sh $@ $(OUTPUT) $(BUSYBOX) $(VM_BINS)

vm-kernel: $(VM_KERNEL_DIRS:%=%/vmlinuz) $(VM_KERNEL_DIRS:%=%/modules.cpio.gz)
vm-initramfs: $(VM_INITRD)

# VM_JOBS guests at a time (each TCG guest runs on one host thread), each
# kernel's output whole under its header; then one summary line per
# kernel. Fails if any kernel's run failed (the others still run).
# VM_RUNS is what run-all.sh is given: make vm-runs prints it, for a run
# that boots this build's guests beside another ARCH's (make test's).
VM_JOBS ?= $(NPROC)
# arm64: the interval tests once more on VM_SMP_CPUS vCPUs under
# multi-threaded TCG (run-all.sh --smp), where programs and reports really
# run at once and the gates' adds must order them (bpf/interval.bpf.h). Not
# on x86, whose guests hang there (README). In a full run only (no
# VM_TESTS); make vm-smp-test runs it alone.
VM_SMP_CPUS ?= 4
VM_SMP_TESTS_arm64 := readlat.short_intervals,biolat.intervals
VM_SMP_TESTS ?= $(VM_SMP_TESTS_$(ARCH))
VM_SMP_RUNS = $(if $(VM_SMP_TESTS),--smp $(VM_SMP_CPUS) --tests $(VM_SMP_TESTS) $(VM_KERNEL_DIRS))
VM_RUNS = --arch $(ARCH) --initrd $(VM_INITRD) $(VM_KERNEL_DIRS) $(if $(VM_TESTS),,$(VM_SMP_RUNS))
vm-test: vm-kernel vm-initramfs
	$(Q)VM_TIMEOUT=$(VM_TIMEOUT) VM_TESTS='$(VM_TESTS)' VM_JOBS=$(VM_JOBS) bash tests/vm/run-all.sh $(VM_RUNS)

vm-smp-test: vm-kernel vm-initramfs
	$(Q)$(if $(VM_SMP_TESTS),,echo "vm-smp-test: no VM_SMP_TESTS for ARCH=$(ARCH)" >&2; exit 1;) \
	VM_TIMEOUT=$(VM_TIMEOUT) VM_JOBS=$(VM_JOBS) bash tests/vm/run-all.sh \
		--arch $(ARCH) --initrd $(VM_INITRD) $(VM_SMP_RUNS)

# The kernels and the initramfs made, then run-all.sh's arguments for them.
vm-runs: vm-kernel vm-initramfs
	@echo '$(VM_RUNS)'

