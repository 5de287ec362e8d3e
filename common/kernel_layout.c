// SPDX-License-Identifier: GPL-2.0-only
/* Field offsets of kernel structs, read from kernel BTF (kernel_layout.h). */
#include <stddef.h>
#include <string.h>
#include <linux/types.h>
#include "btf_fields.h"
#include "kernel_layout.h"

#define WANT(t, p, f) BTF_OFFSET(struct kernel_layout, f, t, p)
const struct btf_want kernel_layout_wants[] = {
	WANT("task_struct", "group_leader", task_group_leader),
	WANT("task_struct", "comm", task_comm),
	WANT("task_struct", "files", task_files),
	WANT("task_struct", "fs", task_fs),
	WANT("fs_struct", "pwd", fs_pwd),
	WANT("files_struct", "fdt", files_fdt),
	WANT("fdtable", "max_fds", fdt_max_fds),
	WANT("fdtable", "fd", fdt_fd),
	WANT("file", "f_path", file_path),
	WANT("file", "f_inode", file_inode),
	WANT("path", "mnt", path_mnt),
	WANT("path", "dentry", path_dentry),
	WANT("dentry", "d_parent", dentry_parent),
	WANT("dentry", "d_name.name", dentry_name),
	WANT("vfsmount", "mnt_root", vfsmount_root),
	WANT("mount", "mnt", mount_mnt),
	WANT("mount", "mnt_parent", mount_parent),
	WANT("mount", "mnt_mountpoint", mount_mountpoint),
	WANT("inode", "i_ino", inode_ino),
	WANT("inode", "i_sb", inode_sb),
	WANT("super_block", "s_dev", sb_dev),
	WANT("super_block", "s_magic", sb_magic),
	/* readlat -B: a thread asleep in io_schedule() (a bitfield). */
	BTF_WANT(BTF_WANT_BIT_OFFSET, "task_struct", "in_iowait", struct kernel_layout,
		 task_in_iowait, true),
};

const size_t kernel_layout_nwants = sizeof(kernel_layout_wants) / sizeof(kernel_layout_wants[0]);

int kernel_layout_load(struct kernel_layout *l, const char *btf_path)
{
	int err;

	memset(l, 0, sizeof(*l));
	err = btf_fields_load(kernel_layout_wants, kernel_layout_nwants, l, btf_path);
	if (err) {
		memset(l, 0, sizeof(*l));
		return err;
	}
	l->valid = 1;
	return 0;
}

/* The one want of the table above, alone: the pass then stops at task_struct. */
__u32 kernel_task_comm_offset(void)
{
	struct kernel_layout l;

	for (size_t i = 0; i < kernel_layout_nwants; i++)
		if (kernel_layout_wants[i].field == offsetof(struct kernel_layout, task_comm))
			return btf_fields_load(&kernel_layout_wants[i], 1, &l, NULL) ? 0 : l.task_comm;
	return 0;
}
