# SPDX-License-Identifier: GPL-2.0-only
# The same static binaries, tested on another kernel: Debian's cloud kernel
# (6.1: kprobes, fentry, BTF) booted under qemu without KVM, from an
# initramfs holding busybox, the binaries and the guest tests of
# tests/vm/guest/. See tests/vm/README.md. Included by tests/tests.mk.
#
#   make vm-test                 fetch the kernel once, build, boot, test
#   make vm-test VM_TESTS=readlat    only the guest tests of readlat.sh
#   make vm-test VM_TIMEOUT=600      hard bound on the VM run (seconds)

VM_DIR := $(OUTPUT)/vm
VM_KERNEL_PKG ?= linux-image-cloud-amd64
VM_TIMEOUT ?= 300
VM_TESTS ?=
BUSYBOX ?= /bin/busybox
VM_KERNEL := $(VM_DIR)/kernel/vmlinuz
VM_INITRD := $(VM_DIR)/initramfs.cpio.gz
# Every binary the build makes, at the same path under /build in the guest.
VM_BINS := $(BINS) $(WORKLOADS) $(TEST_TOOLS) $(VM_DIR)/bpfls
VM_GUEST := $(wildcard tests/vm/guest/*)
# The list itself, rewritten only when it changes: a binary or guest file
# that goes away rebuilds the initramfs too (as does the directory's mtime).
VM_LIST := $(VM_DIR)/initramfs.list

.PHONY: vm-test vm-kernel vm-initramfs vm-force

$(VM_DIR):
	$(Q)mkdir -p $@

# Downloaded once: only a missing $(VM_KERNEL) runs kernel.sh, which also
# reuses a .deb already in $(VM_DIR)/kernel.
$(VM_KERNEL): | $(VM_DIR)
	$(call msg,KERNEL,$(VM_KERNEL_PKG))
	$(Q)bash tests/vm/kernel.sh $(VM_KERNEL_PKG) $(VM_DIR)/kernel

$(VM_DIR)/bpfls: tests/vm/bpfls.c | $(VM_DIR)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -static $< -o $@

$(VM_LIST): vm-force | $(VM_DIR)
	$(Q)echo '$(BUSYBOX) $(VM_BINS) $(VM_GUEST)' | cmp -s - $@ || \
		echo '$(BUSYBOX) $(VM_BINS) $(VM_GUEST)' > $@

$(VM_INITRD): $(VM_BINS) $(VM_GUEST) $(VM_LIST) tests/vm/guest tests/vm/mkinitramfs.sh $(wildcard $(BUSYBOX)) | $(VM_DIR)
	$(call msg,INITRD,$@)
	$(Q)bash tests/vm/mkinitramfs.sh $@ $(OUTPUT) $(BUSYBOX) $(VM_BINS)

vm-kernel: $(VM_KERNEL)
vm-initramfs: $(VM_INITRD)

vm-test: $(VM_KERNEL) $(VM_INITRD)
	$(Q)VM_TIMEOUT=$(VM_TIMEOUT) VM_TESTS='$(VM_TESTS)' \
		bash tests/vm/run.sh $(VM_KERNEL) $(VM_INITRD) $(VM_DIR)/console.log
