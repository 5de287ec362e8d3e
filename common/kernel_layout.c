// SPDX-License-Identifier: GPL-2.0-only
/* Field offsets of kernel structs, read from kernel BTF (kernel_layout.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include "kernel_layout.h"

/* Member @name of struct or union @id, looking inside anonymous structs
 * and unions: its byte offset in *off and its type in *type; -1 if absent. */
static int find_member(const struct btf *btf, __u32 id, const char *name, long *off, __u32 *type)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, id));
	const struct btf_member *m;

	if (!t || (!btf_is_struct(t) && !btf_is_union(t)))
		return -1;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *mname = btf__name_by_offset(btf, m->name_off);
		long inner;

		if (btf_member_bitfield_size(t, i))
			continue;
		if (mname && *mname) {
			if (strcmp(mname, name))
				continue;
			*off = btf_member_bit_offset(t, i) / 8;
			*type = m->type;
			return 0;
		}
		if (find_member(btf, m->type, name, &inner, type) == 0) {
			*off = btf_member_bit_offset(t, i) / 8 + inner;
			return 0;
		}
	}
	return -1;
}

/* "member" or "member.member" of struct @type: its offset in @out. */
static int field(const struct btf *btf, const char *type, const char *path, __u32 *out)
{
	char buf[64], *save = NULL, *part;
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	__u32 at;
	long total = 0, off;

	if (id < 0)
		return -ENOENT;
	at = (__u32)id;
	snprintf(buf, sizeof(buf), "%s", path);
	for (part = strtok_r(buf, ".", &save); part; part = strtok_r(NULL, ".", &save)) {
		if (find_member(btf, at, part, &off, &at))
			return -ENOENT;
		total += off;
	}
	*out = (__u32)total;
	return 0;
}

int kernel_layout_load(struct kernel_layout *l, const char *btf_path)
{
	struct btf *btf = btf_path ? btf__parse(btf_path, NULL) : btf__load_vmlinux_btf();
	int err;

	memset(l, 0, sizeof(*l));
	if (!btf)
		return -errno;
	err = field(btf, "task_struct", "group_leader", &l->task_group_leader) ||
	      field(btf, "task_struct", "comm", &l->task_comm) ||
	      field(btf, "task_struct", "files", &l->task_files) ||
	      field(btf, "files_struct", "fdt", &l->files_fdt) ||
	      field(btf, "fdtable", "max_fds", &l->fdt_max_fds) ||
	      field(btf, "fdtable", "fd", &l->fdt_fd) ||
	      field(btf, "file", "f_path", &l->file_path) ||
	      field(btf, "file", "f_inode", &l->file_inode) ||
	      field(btf, "path", "mnt", &l->path_mnt) ||
	      field(btf, "path", "dentry", &l->path_dentry) ||
	      field(btf, "dentry", "d_parent", &l->dentry_parent) ||
	      field(btf, "dentry", "d_name.name", &l->dentry_name) ||
	      field(btf, "vfsmount", "mnt_root", &l->vfsmount_root) ||
	      field(btf, "mount", "mnt", &l->mount_mnt) ||
	      field(btf, "mount", "mnt_parent", &l->mount_parent) ||
	      field(btf, "mount", "mnt_mountpoint", &l->mount_mountpoint) ||
	      field(btf, "inode", "i_ino", &l->inode_ino) ||
	      field(btf, "inode", "i_sb", &l->inode_sb) ||
	      field(btf, "super_block", "s_dev", &l->sb_dev) ||
	      field(btf, "super_block", "s_magic", &l->sb_magic);
	btf__free(btf);
	if (err) {
		memset(l, 0, sizeof(*l));
		return -ENOENT;
	}
	l->valid = 1;
	return 0;
}
