// SPDX-License-Identifier: GPL-2.0-only
/* Field offsets of kernel structs, read from kernel BTF (kernel_layout.h). */
#include <stddef.h>
#include <string.h>
#include <linux/types.h>
#include "btf_fields.h"
#include "kernel_layout.h"

/* Each with what bpf/kernel.bpf.h reads there. */
#define WANT(t, p, f, ...) BTF_OFFSET(struct kernel_layout, f, t, p, __VA_ARGS__)
const struct btf_want kernel_layout_wants[] = {
	WANT("task_struct", "group_leader", task_group_leader, BTF_PTR),
	WANT("task_struct", "comm", task_comm, BTF_BYTES(16)),	/* TASK_COMM_LEN */
	WANT("task_struct", "files", task_files, BTF_PTR),
	WANT("task_struct", "fs", task_fs, BTF_PTR),
	WANT("fs_struct", "pwd", fs_pwd, BTF_NOREAD),	/* a struct path: its members are */
	WANT("files_struct", "fdt", files_fdt, BTF_PTR),
	WANT("fdtable", "max_fds", fdt_max_fds, BTF_U32),
	WANT("fdtable", "fd", fdt_fd, BTF_PTR),
	WANT("file", "f_path", file_path, BTF_NOREAD),
	WANT("file", "f_inode", file_inode, BTF_PTR),
	WANT("path", "mnt", path_mnt, BTF_PTR),
	WANT("path", "dentry", path_dentry, BTF_PTR),
	WANT("dentry", "d_parent", dentry_parent, BTF_PTR),
	WANT("dentry", "d_name.name", dentry_name, BTF_PTR),
	WANT("vfsmount", "mnt_root", vfsmount_root, BTF_PTR),
	WANT("mount", "mnt", mount_mnt, BTF_NOREAD),	/* a struct vfsmount */
	WANT("mount", "mnt_parent", mount_parent, BTF_PTR),
	WANT("mount", "mnt_mountpoint", mount_mountpoint, BTF_PTR),
	WANT("inode", "i_ino", inode_ino, BTF_U64),
	WANT("inode", "i_sb", inode_sb, BTF_PTR),
	WANT("super_block", "s_dev", sb_dev, BTF_U32),
	WANT("super_block", "s_magic", sb_magic, BTF_U64),
	/* readlat -B: a thread asleep in io_schedule() (a bitfield). */
	BTF_WANT(BTF_WANT_BIT_OFFSET, "task_struct", "in_iowait", struct kernel_layout,
		 task_in_iowait, true, BTF_BITS(1)),
};

const size_t kernel_layout_nwants = sizeof(kernel_layout_wants) / sizeof(kernel_layout_wants[0]);

/* Every required want answered (optional ones may be missing or, with
 * -BTF_FIELDS_MISMATCH, mismatched: the caller judges those). */
static bool required_found(const struct kernel_layout *l)
{
	for (size_t i = 0; i < kernel_layout_nwants; i++) {
		__u32 v;

		memcpy(&v, (const char *)l + kernel_layout_wants[i].field, sizeof(v));
		if (!kernel_layout_wants[i].optional && v == BTF_FIELD_NONE)
			return false;
	}
	return true;
}

int kernel_layout_load(struct kernel_layout *l, int btf_fd)
{
	int err;

	memset(l, 0, sizeof(*l));
	err = btf_fields_load(kernel_layout_wants, kernel_layout_nwants, l, btf_fd);
	if (err && (err != -BTF_FIELDS_MISMATCH || !required_found(l))) {
		memset(l, 0, sizeof(*l));
		return err;
	}
	l->valid = 1;
	return err;
}

/* The table's first two wants, alone: the pass then stops at task_struct. */
void kernel_task_name_offsets(__u32 *comm, __u32 *leader)
{
	struct kernel_layout l;

	*comm = *leader = 0;
	if (kernel_layout_wants[0].field != offsetof(struct kernel_layout, task_group_leader) ||
	    kernel_layout_wants[1].field != offsetof(struct kernel_layout, task_comm) ||
	    btf_fields_load(kernel_layout_wants, 2, &l, -1))
		return;
	*comm = l.task_comm;
	*leader = l.task_group_leader;
}
