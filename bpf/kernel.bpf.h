/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Walks through kernel structs without CO-RE: the offsets come from user
 * space (common/kernel_layout.h), read from kernel BTF only by the tool
 * modes that need them. Every read is bpf_probe_read_kernel(), so a wrong
 * or missing offset yields "unknown", never a verifier rejection.
 */
#ifndef KERNEL_BPF_H
#define KERNEL_BPF_H

#include "kernel_layout.h"
#include "process_key.h"
#include "kread.bpf.h"

const volatile struct kernel_layout layout = {};

/* The name of the current process: its group leader's comm. Without the
 * layout, the current thread's name. The leader itself (every
 * single-threaded process) needs no walk: its comm is the current one. */
static __always_inline void process_comm(char *comm, __u32 len)
{
	__u64 id = bpf_get_current_pid_tgid();
	void *leader;

	if (layout.valid && (__u32)id != id >> 32) {
		leader = read_ptr((void *)bpf_get_current_task(), layout.task_group_leader);
		if (leader && bpf_probe_read_kernel_str(comm, len, (char *)leader + layout.task_comm) > 0)
			return;
	}
	bpf_get_current_comm(comm, len);
}

/* @k for the current process: @pid (as the user's namespace numbers it,
 * 0 to key by name alone) and its name now; the rest of @k is zero. */
static __always_inline void process_key_fill(struct process_key *k, __u32 pid)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->pid = pid;
	process_comm(k->comm, sizeof(k->comm));
}

/* The struct file behind the current task's @fd, or NULL. */
static __always_inline void *task_fd_file(int fd)
{
	void *files, *fdt, *fds;
	unsigned int max = 0;

	if (!layout.valid || fd < 0)
		return NULL;
	files = read_ptr((void *)bpf_get_current_task(), layout.task_files);
	fdt = files ? read_ptr(files, layout.files_fdt) : NULL;
	if (!fdt)
		return NULL;
	bpf_probe_read_kernel(&max, sizeof(max), (char *)fdt + layout.fdt_max_fds);
	if ((unsigned int)fd >= max)
		return NULL;
	fds = read_ptr(fdt, layout.fdt_fd);
	return fds ? read_ptr(fds, (__u32)fd * sizeof(void *)) : NULL;
}

/* The file's filesystem and inode: what tells two files apart. */
static __always_inline bool file_identity(void *file, __u32 *dev, __u64 *ino)
{
	void *inode = file ? read_ptr(file, layout.file_inode) : NULL;
	void *sb;

	if (!inode)
		return false;
	sb = read_ptr(inode, layout.inode_sb);
	bpf_probe_read_kernel(ino, sizeof(*ino), (char *)inode + layout.inode_ino);
	bpf_probe_read_kernel(dev, sizeof(*dev), (char *)sb + layout.sb_dev);
	return true;
}

/* The path of (@vfsmnt, @dentry) up to the root of the mount tree, leaf
 * first, one slot per step of the walk: a step that crosses from a mount's
 * root to where it is mounted leaves its slot empty. out->truncated when
 * the walk did not reach the root in FILE_NAME_DEPTH steps. */
static __always_inline void path_name_fill(void *vfsmnt, void *dentry, struct file_name *out)
{
	void *mnt, *parent, *d_parent, *root, *name;
	int i;

	mnt = (char *)vfsmnt - layout.mount_mnt;
	root = read_ptr(vfsmnt, layout.vfsmount_root);
	for (i = 0; i < FILE_NAME_DEPTH; i++) {
		out->comp[i][0] = '\0';
		if (dentry == root) {
			/* The root of this mount: go on from where it is mounted. */
			parent = read_ptr(mnt, layout.mount_parent);
			if (!parent || parent == mnt)
				break;
			dentry = read_ptr(mnt, layout.mount_mountpoint);
			mnt = parent;
			root = read_ptr((char *)mnt + layout.mount_mnt, layout.vfsmount_root);
			continue;
		}
		d_parent = dentry ? read_ptr(dentry, layout.dentry_parent) : NULL;
		if (!d_parent || d_parent == dentry)
			break;
		name = read_ptr(dentry, layout.dentry_name);
		/* A whole buffer: the name may go on (a NAME_MAX of 255) */
		if (bpf_probe_read_kernel_str(out->comp[i], FILE_NAME_COMP, name) == FILE_NAME_COMP) {
			char more = 0;

			bpf_probe_read_kernel(&more, 1, (char *)name + FILE_NAME_COMP - 1);
			if (more)
				out->cut |= 1U << i;
		}
		dentry = d_parent;
	}
	out->depth = i;
	out->truncated = i == FILE_NAME_DEPTH;
}

/* @file's identity and path (see path_name_fill). */
static __always_inline void file_name_fill(void *file, struct file_name *out)
{
	void *inode, *sb;

	out->depth = 0;
	out->truncated = 0;
	out->cut = 0;
	if (!file_identity(file, &out->dev, &out->ino))
		return;
	inode = read_ptr(file, layout.file_inode);
	sb = read_ptr(inode, layout.inode_sb);
	bpf_probe_read_kernel(&out->magic, sizeof(out->magic), (char *)sb + layout.sb_magic);
	path_name_fill(read_ptr(file, layout.file_path + layout.path_mnt),
		       read_ptr(file, layout.file_path + layout.path_dentry), out);
}

/* The current task's working directory, as a path (ino 0 if unknown). */
static __always_inline void cwd_name_fill(struct file_name *out)
{
	void *fs;

	out->depth = 0;
	out->truncated = 0;
	out->cut = 0;
	out->ino = 0;
	if (!layout.valid)
		return;
	fs = read_ptr((void *)bpf_get_current_task(), layout.task_fs);
	if (!fs)
		return;
	out->ino = 1;		/* known; the walk fills the name */
	path_name_fill(read_ptr(fs, layout.fs_pwd + layout.path_mnt),
		       read_ptr(fs, layout.fs_pwd + layout.path_dentry), out);
}

#endif /* KERNEL_BPF_H */
