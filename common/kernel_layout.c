// SPDX-License-Identifier: GPL-2.0-only
/*
 * Field offsets of kernel structs, read from kernel BTF (kernel_layout.h).
 *
 * Loading the 5.5 MB vmlinux BTF with libbpf costs ~12 MiB of memory and
 * ~9 ms; this needs a handful of members, so it streams the raw BTF once
 * instead: the strings to find the few names it wants, the types to index
 * where each type starts, then reads the few structs it needs by offset.
 * Peak memory is the index (4 bytes per type). A --btf file that is not
 * raw BTF (an ELF file with a .BTF section) goes through libbpf.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <linux/btf.h>
#include <linux/types.h>
#include "diag.h"
#include "kernel_layout.h"

#define CHUNK (64 * 1024)
#define NAME_MAX_LEN 64		/* longer strings are none of the names wanted */

/* The fields wanted: struct, member path ("a.b"), where the offset goes. */
struct want {
	const char *type, *path;
	size_t field;		/* offsetof(struct kernel_layout, ...) */
};

#define WANT(t, p, f) { t, p, offsetof(struct kernel_layout, f) }
static const struct want wants[] = {
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
};
#define NWANTS (sizeof(wants) / sizeof(wants[0]))

/* Every distinct name in wants[] (types and path parts), and where the
 * string section has it (BTF strings are deduplicated: once at most). */
#define MAX_NAMES 64
struct names {
	char text[MAX_NAMES][NAME_MAX_LEN];
	__u32 off[MAX_NAMES];
	int n;
};

struct btf_file {
	int fd;
	struct btf_header hdr;
	__u32 *type_at;		/* type id -> offset in the type section */
	__u32 ntypes;
	struct names names;
};

static int name_index(const struct names *nm, const char *s, size_t len)
{
	for (int i = 0; i < nm->n; i++)
		if (!strncmp(nm->text[i], s, len) && !nm->text[i][len])
			return i;
	return -1;
}

static void add_name(struct names *nm, const char *s, size_t len)
{
	if (len >= NAME_MAX_LEN || nm->n >= MAX_NAMES || name_index(nm, s, len) >= 0)
		return;
	memcpy(nm->text[nm->n], s, len);
	nm->text[nm->n][len] = '\0';
	nm->off[nm->n] = 0;	/* 0 is the empty string: "not found" */
	nm->n++;
}

static void collect_names(struct names *nm)
{
	for (size_t i = 0; i < NWANTS; i++) {
		const char *p = wants[i].path;

		add_name(nm, wants[i].type, strlen(wants[i].type));
		for (size_t len; *p; p += len + (p[len] == '.')) {
			len = strcspn(p, ".");
			add_name(nm, p, len);
		}
	}
}

static __u32 name_off(const struct names *nm, const char *s, size_t len)
{
	int i = name_index(nm, s, len);

	return i < 0 ? 0 : nm->off[i];
}

static int read_at(int fd, void *buf, size_t len, off_t at)
{
	ssize_t n = pread(fd, buf, len, at);

	return n == (ssize_t)len ? 0 : -EIO;
}

/* Sequential reads of a section through one chunk. */
struct chunk {
	int fd;
	off_t base;		/* the section's offset in the file */
	__u32 len;		/* the section's length */
	__u32 start, have;	/* buf holds section bytes [start, start + have) */
	char buf[CHUNK];
};

/* Make section bytes [at, at + n) available; NULL past the end. */
static const char *chunk_at(struct chunk *c, __u32 at, __u32 n)
{
	ssize_t got;

	if (at + n > c->len)
		return NULL;
	if (at >= c->start && at + n <= c->start + c->have)
		return c->buf + (at - c->start);
	got = pread(c->fd, c->buf, c->len - at < CHUNK ? c->len - at : CHUNK, c->base + at);
	if (got < (ssize_t)n)
		return NULL;
	c->start = at;
	c->have = (__u32)got;
	return c->buf;
}

/* Pass 1: the offsets of the wanted names in the string section. */
static int find_strings(struct btf_file *b)
{
	static struct chunk c;
	char cur[NAME_MAX_LEN];
	size_t len = 0;
	bool too_long = false;
	__u32 from = 0;
	const char *p;

	c = (struct chunk){ .fd = b->fd, .base = (off_t)b->hdr.hdr_len + b->hdr.str_off,
			    .len = b->hdr.str_len };
	for (__u32 at = 0; at < c.len; at++) {
		p = chunk_at(&c, at, 1);
		if (!p)
			return -EIO;
		if (*p) {
			if (len < NAME_MAX_LEN)
				cur[len++] = *p;
			else
				too_long = true;
			continue;
		}
		if (!too_long && len) {
			int k = name_index(&b->names, cur, len);

			if (k >= 0)
				b->names.off[k] = from;
		}
		len = 0;
		too_long = false;
		from = at + 1;
	}
	return 0;
}

static size_t type_extra(const struct btf_type *t)
{
	__u32 vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT: return 4;
	case BTF_KIND_ARRAY: return sizeof(struct btf_array);
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: return vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM: return vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO: return vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR: return sizeof(struct btf_var);
	case BTF_KIND_DATASEC: return vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG: return 4;
	case 19: return vlen * 12;	/* BTF_KIND_ENUM64 (6.0+): name, lo32, hi32 */
	default: return 0;
	}
}

/* Pass 2: where each type starts. */
static int index_types(struct btf_file *b)
{
	static struct chunk c;
	__u32 at = 0, cap = 1 << 16;
	const struct btf_type *t;

	c = (struct chunk){ .fd = b->fd, .base = (off_t)b->hdr.hdr_len + b->hdr.type_off,
			    .len = b->hdr.type_len };
	b->type_at = malloc(cap * sizeof(*b->type_at));
	if (!b->type_at)
		return -ENOMEM;
	b->ntypes = 1;			/* id 0 is void */
	while (at < c.len) {
		t = (const struct btf_type *)chunk_at(&c, at, sizeof(*t));
		if (!t)
			return -EIO;
		if (b->ntypes == cap) {
			__u32 *more = realloc(b->type_at, 2 * cap * sizeof(*more));

			if (!more)
				return -ENOMEM;
			b->type_at = more;
			cap *= 2;
		}
		b->type_at[b->ntypes++] = at;
		at += (__u32)(sizeof(*t) + type_extra(t));
	}
	return 0;
}

static int type_of(const struct btf_file *b, __u32 id, struct btf_type *t)
{
	if (!id || id >= b->ntypes)
		return -ENOENT;
	return read_at(b->fd, t, sizeof(*t), (off_t)b->hdr.hdr_len + b->hdr.type_off + b->type_at[id]);
}

/* Through typedefs and qualifiers to the struct or union. */
static __u32 resolve(const struct btf_file *b, __u32 id, struct btf_type *t)
{
	for (int depth = 0; depth < 16 && !type_of(b, id, t); depth++) {
		int kind = BTF_INFO_KIND(t->info);

		if (kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION)
			return id;
		if (kind != BTF_KIND_TYPEDEF && kind != BTF_KIND_CONST &&
		    kind != BTF_KIND_VOLATILE && kind != BTF_KIND_RESTRICT &&
		    kind != BTF_KIND_TYPE_TAG)
			return 0;
		id = t->type;
	}
	return 0;
}

/* Member with name offset @name in struct/union @id (inside anonymous
 * members too): its byte offset and type. */
static int find_member(const struct btf_file *b, __u32 id, __u32 name, long *off, __u32 *type)
{
	struct btf_member m[64];
	struct btf_type t;
	__u32 vlen;
	off_t at;

	id = resolve(b, id, &t);
	if (!id || !name)
		return -ENOENT;
	vlen = BTF_INFO_VLEN(t.info);
	at = (off_t)b->hdr.hdr_len + b->hdr.type_off + b->type_at[id] + (off_t)sizeof(t);
	for (__u32 i = 0; i < vlen; i += 64) {
		__u32 n = vlen - i < 64 ? vlen - i : 64;

		if (read_at(b->fd, m, n * sizeof(m[0]), at + (off_t)(i * sizeof(m[0]))))
			return -EIO;
		for (__u32 k = 0; k < n; k++) {
			__u32 bits = BTF_INFO_KFLAG(t.info) ? BTF_MEMBER_BIT_OFFSET(m[k].offset) : m[k].offset;
			long inner;

			if (m[k].name_off == name) {
				*off = bits / 8;
				*type = m[k].type;
				return 0;
			}
			if (!m[k].name_off && !find_member(b, m[k].type, name, &inner, type)) {
				*off = bits / 8 + inner;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* The struct named @type (a definition, not a forward declaration). */
static __u32 find_struct(const struct btf_file *b, const char *type)
{
	static struct chunk c;
	__u32 name = name_off(&b->names, type, strlen(type));
	const struct btf_type *t;

	c = (struct chunk){ .fd = b->fd, .base = (off_t)b->hdr.hdr_len + b->hdr.type_off,
			    .len = b->hdr.type_len };
	for (__u32 id = 1; name && id < b->ntypes; id++) {
		t = (const struct btf_type *)chunk_at(&c, b->type_at[id], sizeof(*t));
		if (!t)
			return 0;
		if (t->name_off == name && BTF_INFO_KIND(t->info) == BTF_KIND_STRUCT &&
		    BTF_INFO_VLEN(t->info))
			return id;
	}
	return 0;
}

static int field_raw(const struct btf_file *b, const struct want *w, __u32 struct_id, __u32 *out)
{
	const char *p = w->path;
	__u32 at = struct_id;
	long total = 0, off;

	for (size_t len; *p; p += len + (p[len] == '.')) {
		len = strcspn(p, ".");
		if (find_member(b, at, name_off(&b->names, p, len), &off, &at))
			return -ENOENT;
		total += off;
	}
	*out = (__u32)total;
	return 0;
}

static int load_raw(struct kernel_layout *l, int fd)
{
	struct btf_file b = { .fd = fd };
	__u32 ids[NWANTS];
	int err = 0;

	if (read_at(b.fd, &b.hdr, sizeof(b.hdr), 0) || b.hdr.magic != BTF_MAGIC)
		return -EINVAL;
	collect_names(&b.names);
	err = find_strings(&b);
	if (!err)
		err = index_types(&b);
	for (size_t i = 0; !err && i < NWANTS; i++) {
		ids[i] = 0;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(wants[j].type, wants[i].type))
				ids[i] = ids[j];
		if (!ids[i])
			ids[i] = find_struct(&b, wants[i].type);
		err = ids[i] ? field_raw(&b, &wants[i], ids[i], (__u32 *)((char *)l + wants[i].field))
			     : -ENOENT;
	}
	free(b.type_at);
	return err;
}

/* An ELF file with a .BTF section (only --btf can name one): libbpf
 * extracts it, into memory that the raw reader then reads. */
static int load_elf(struct kernel_layout *l, const char *path)
{
	struct btf *btf = btf__parse(path, NULL);
	const void *raw;
	__u32 size = 0;
	int fd, err;

	if (!btf)
		return -errno;
	raw = btf__raw_data(btf, &size);
	fd = memfd_create("btf", MFD_CLOEXEC);
	err = !raw || fd < 0 || write(fd, raw, size) != (ssize_t)size ? -EIO : load_raw(l, fd);
	if (fd >= 0)
		close(fd);
	btf__free(btf);
	return err;
}

int kernel_layout_load(struct kernel_layout *l, const char *btf_path)
{
	int fd = open(btf_path ? btf_path : KERNEL_BTF_PATH, O_RDONLY | O_CLOEXEC);
	int err = fd < 0 ? -errno : 0;

	memset(l, 0, sizeof(*l));
	if (!err)
		err = load_raw(l, fd);
	if (fd >= 0)
		close(fd);
	if (err == -EINVAL && btf_path)
		err = load_elf(l, btf_path);
	if (err) {
		memset(l, 0, sizeof(*l));
		return err;
	}
	l->valid = 1;
	return 0;
}
