/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Offsets of the few kernel struct fields that programs follow by pointer
 * (a task's files and group leader, a file's path and inode), read once
 * from kernel BTF by user space and handed to the programs as read-only
 * data. The programs then walk with bpf_probe_read_kernel() and carry no
 * CO-RE relocation, so libbpf never parses the 5 MB kernel BTF for them
 * (~12 MiB and ~9 ms); only a tool mode that needs the walk pays for it.
 * Shared by the BPF side (bpf/kernel.bpf.h) and user space.
 */
#ifndef KERNEL_LAYOUT_H
#define KERNEL_LAYOUT_H

/* Byte offsets; valid = 0 when the kernel BTF was not available. */
struct kernel_layout {
	__u32 valid;
	__u32 task_group_leader, task_comm, task_files, task_fs;
	__u32 fs_pwd;
	__u32 files_fdt, fdt_max_fds, fdt_fd;
	__u32 file_path, file_inode;
	__u32 path_mnt, path_dentry;
	__u32 dentry_parent, dentry_name;	/* d_name.name */
	__u32 vfsmount_root, mount_mnt, mount_parent, mount_mountpoint;
	__u32 inode_ino, inode_sb, sb_dev, sb_magic;
	__u32 task_in_iowait;		/* in bits; KERNEL_LAYOUT_NONE if absent */
};

#define KERNEL_LAYOUT_NONE 0xffffffffU	/* an optional field the kernel lacks */

#define FILE_NAME_DEPTH 16	/* path components kept, leaf first */
#define FILE_NAME_COMP 64	/* bytes kept of one component, with its NUL */

/* A file as the kernel saw it: its identity and its path, component by
 * component from the leaf up to the root of the reader's mount tree. */
struct file_name {
	__u64 ino;
	__u64 magic;		/* the filesystem's s_magic (pipefs, sockfs, ...) */
	__u32 dev;		/* kernel dev_t of the filesystem */
	__u32 depth;		/* components filled in comp[] */
	__u32 truncated;	/* the path had more than FILE_NAME_DEPTH components */
	__u32 cut;		/* bit i: comp[i] was longer than FILE_NAME_COMP - 1
				 * bytes, and is its first FILE_NAME_COMP - 1 */
	char comp[FILE_NAME_DEPTH][FILE_NAME_COMP];
};

#ifndef __bpf__
#include "btf_fields.h"
/* The wants behind kernel_layout_load(), for a tool that reads its own
 * offsets in the same pass (btf_wants_into()); then set valid itself. */
extern const struct btf_want kernel_layout_wants[];
extern const size_t kernel_layout_nwants;
/* Fill @l from the BTF open at @btf_fd (--btf), or the running kernel's
 * when < 0. Returns 0; -BTF_FIELDS_MISMATCH with l->valid = 1 when only
 * an optional member (task_in_iowait) has another size than is read, and
 * it is KERNEL_LAYOUT_NONE; else a negative errno with l->valid = 0. */
int kernel_layout_load(struct kernel_layout *l, int btf_fd);
/* Where a task's name and its group leader are in the running kernel's
 * task_struct, from its own BTF (a program may then read them in place);
 * both 0 without that BTF. */
void kernel_task_name_offsets(__u32 *comm, __u32 *leader);
#endif

#endif /* KERNEL_LAYOUT_H */
