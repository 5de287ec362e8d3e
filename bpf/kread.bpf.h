/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reads of kernel memory at offsets user space found in BTF
 * (common/btf_fields.h): bpf_probe_read_kernel(), so a wrong or missing
 * offset reads as 0, never a verifier rejection. Shared by kernel.bpf.h
 * and the tools that walk kernel structs of their own (biolat).
 */
#ifndef KREAD_BPF_H
#define KREAD_BPF_H

static __always_inline void *read_ptr(const void *base, __u32 off)
{
	void *p = NULL;

	bpf_probe_read_kernel(&p, sizeof(p), (const char *)base + off);
	return p;
}

static __always_inline __u32 read_u32(const void *base, __u32 off)
{
	__u32 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (const char *)base + off);
	return v;
}

#endif /* KREAD_BPF_H */
