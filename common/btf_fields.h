/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A few facts about the running kernel's types, read from its BTF without
 * parsing all of it: member offsets, enumerator values, the arity of a
 * tracepoint, the size of a struct. A tool lists what it wants in a table
 * and gets each answer in a __u32 of its own struct, which it can hand to
 * its BPF programs as read-only data (see kernel_layout.h). libbpf's
 * btf__parse() of the 5 MB kernel BTF costs ~12 MiB and ~9 ms; this reads
 * it once, front to back, keeping 4 bytes a type.
 *
 *	struct blk_layout { __u32 rq_len, rq_disk, op_write; };
 *	static const struct btf_want wants[] = {
 *		BTF_OFFSET(struct blk_layout, rq_len, "request", "__data_len"),
 *		BTF_WANT(BTF_WANT_OFFSET, "request", "rq_disk",
 *			 struct blk_layout, rq_disk, true),
 *		BTF_ENUM(struct blk_layout, op_write, "req_op", "REQ_OP_WRITE"),
 *	};
 *	err = btf_fields_load(wants, ARRAY_SIZE(wants), &layout, NULL);
 *
 * (rq_disk is optional: kernel commit f3fa33acca9f removed it.)
 */
#ifndef COMMON_BTF_FIELDS_H
#define COMMON_BTF_FIELDS_H

#include <stdbool.h>
#include <stddef.h>

/* What a want the kernel lacks gets: an optional one, or (with -ENOENT)
 * a required one. */
#define BTF_FIELD_NONE 0xffffffffU

enum btf_want_kind {
	/* Byte offset of member path "a.b.c" in struct or union @type,
	 * anonymous members crossed on the way; of a bitfield, the byte
	 * holding its first bit. */
	BTF_WANT_OFFSET,
	/* Bit offset of member path @path in @type (bitfields). */
	BTF_WANT_BIT_OFFSET,
	/* Value (low 32 bits) of enumerator @path: in enum @type, or in any
	 * enum when @type is NULL. */
	BTF_WANT_ENUM,
	/* Parameters of the function prototype that typedef @type points to:
	 * for "btf_trace_<tracepoint>", 1 + the tracepoint's arguments. */
	BTF_WANT_PARAMS,
	/* Byte size of struct or union @type. */
	BTF_WANT_SIZE,
};

struct btf_want {
	enum btf_want_kind kind;
	const char *type, *path;
	size_t field;		/* offsetof() a __u32 in the caller's struct */
	bool optional;		/* missing: BTF_FIELD_NONE, not a failure */
};

/* A want whose answer goes to member @field of the caller's @out_type. */
#define BTF_WANT(kind_, type_, path_, out_type, field_, optional_)		\
	{ .kind = (kind_), .type = (type_), .path = (path_),			\
	  .field = offsetof(out_type, field_), .optional = (optional_) }
/* Required wants of each kind. */
#define BTF_OFFSET(o, f, type, path)						\
	BTF_WANT(BTF_WANT_OFFSET, type, path, o, f, false)
#define BTF_BIT_OFFSET(o, f, type, path)					\
	BTF_WANT(BTF_WANT_BIT_OFFSET, type, path, o, f, false)
#define BTF_ENUM(o, f, enum_type, name)						\
	BTF_WANT(BTF_WANT_ENUM, enum_type, name, o, f, false)
#define BTF_PARAMS(o, f, typedef_name)						\
	BTF_WANT(BTF_WANT_PARAMS, typedef_name, NULL, o, f, false)
#define BTF_SIZE(o, f, type)							\
	BTF_WANT(BTF_WANT_SIZE, type, NULL, o, f, false)

/*
 * Fill the __u32 fields of @out that the @n wants @w name, from the BTF at
 * @btf_path (raw BTF, or an ELF file with a .BTF section), or the running
 * kernel's when NULL. Returns 0, or a negative errno: -ENOENT when a
 * required want is missing (every field is filled all the same, the
 * missing ones with BTF_FIELD_NONE, so the caller can name them) or when
 * there is no @btf_path or no BTF in it; -EINVAL for a malformed want;
 * libbpf's error for a file that is neither raw BTF nor ELF.
 */
int btf_fields_load(const struct btf_want *w, size_t n, void *out, const char *btf_path);

/* Copy @n wants into @dst with their answers moved @base bytes on: to
 * read two tables (a struct inside a bigger one) in one pass of the
 * 5 MB file. Returns @dst + @n. */
struct btf_want *btf_wants_into(struct btf_want *dst, const struct btf_want *src, size_t n,
				size_t base);

#endif /* COMMON_BTF_FIELDS_H */
