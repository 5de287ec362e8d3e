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
 *		BTF_OFFSET(struct blk_layout, rq_len, "request", "__data_len", BTF_U32),
 *		BTF_WANT(BTF_WANT_OFFSET, "request", "rq_disk",
 *			 struct blk_layout, rq_disk, true, BTF_PTR),
 *		BTF_ENUM(struct blk_layout, op_write, "req_op", "REQ_OP_WRITE"),
 *	};
 *	err = btf_fields_load(wants, ARRAY_SIZE(wants), &layout, -1);
 *
 * Each member want says what the BPF code reads there (BTF_U32: 4 bytes,
 * unsigned): a kernel whose member has another size or sign is a
 * mismatch, not an offset to read garbage at.
 * (rq_disk is optional: kernel commit f3fa33acca9f removed it.)
 */
#ifndef COMMON_BTF_FIELDS_H
#define COMMON_BTF_FIELDS_H

#include <errno.h>
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

/* What the BPF code reads at a member: checked against the member's type
 * (through typedefs and qualifiers). */
enum btf_read {
	BTF_READ_NONE,		/* not read as a value: a struct crossed on the way */
	BTF_READ_BYTES,		/* @size bytes of anything (an array, a struct) */
	BTF_READ_UNSIGNED,	/* an unsigned integer (or enum) of @size bytes */
	BTF_READ_SIGNED,	/* a signed integer (or enum) of @size bytes */
	BTF_READ_PTR,		/* a pointer */
	BTF_READ_LOW,		/* the low @size bytes of an unsigned integer at
				 * least that wide (they come first: little-endian) */
	BTF_READ_BITS,		/* a bitfield @size bits wide (BTF_WANT_BIT_OFFSET) */
};
#define BTF_NOREAD .read = BTF_READ_NONE
#define BTF_PTR .read = BTF_READ_PTR, .size = 8
#define BTF_U8 .read = BTF_READ_UNSIGNED, .size = 1
#define BTF_U16 .read = BTF_READ_UNSIGNED, .size = 2
#define BTF_U32 .read = BTF_READ_UNSIGNED, .size = 4
#define BTF_U64 .read = BTF_READ_UNSIGNED, .size = 8
#define BTF_S32 .read = BTF_READ_SIGNED, .size = 4
#define BTF_LOW(n) .read = BTF_READ_LOW, .size = (n)
#define BTF_BYTES(n) .read = BTF_READ_BYTES, .size = (n)
#define BTF_BITS(n) .read = BTF_READ_BITS, .size = (n)

struct btf_want {
	enum btf_want_kind kind;
	const char *type, *path;
	size_t field;		/* offsetof() a __u32 in the caller's struct */
	bool optional;		/* missing: BTF_FIELD_NONE, not a failure */
	enum btf_read read;	/* of a member want: what is read there */
	unsigned int size;	/* bytes (BTF_READ_BITS: bits) read */
};

/* A want whose answer goes to member @field of the caller's @out_type;
 * @read (BTF_U32, ...) what the BPF code reads there. */
#define BTF_WANT(kind_, type_, path_, out_type, field_, optional_, ...)	\
	{ .kind = (kind_), .type = (type_), .path = (path_),			\
	  .field = offsetof(out_type, field_), .optional = (optional_), __VA_ARGS__ }
/* Required wants of each kind. */
#define BTF_OFFSET(o, f, type, path, ...)					\
	BTF_WANT(BTF_WANT_OFFSET, type, path, o, f, false, __VA_ARGS__)
#define BTF_BIT_OFFSET(o, f, type, path, ...)					\
	BTF_WANT(BTF_WANT_BIT_OFFSET, type, path, o, f, false, __VA_ARGS__)
#define BTF_ENUM(o, f, enum_type, name)						\
	BTF_WANT(BTF_WANT_ENUM, enum_type, name, o, f, false, BTF_NOREAD)
#define BTF_PARAMS(o, f, typedef_name)						\
	BTF_WANT(BTF_WANT_PARAMS, typedef_name, NULL, o, f, false, BTF_NOREAD)
#define BTF_SIZE(o, f, type)							\
	BTF_WANT(BTF_WANT_SIZE, type, NULL, o, f, false, BTF_NOREAD)

/* A member found with another size or sign than its want reads, or an
 * answer a __u32 cannot hold apart from BTF_FIELD_NONE (an enumerator of
 * -1: read, it would be taken for a want the kernel lacks). */
#define BTF_FIELDS_MISMATCH EPROTO
/* A file that nests its structs in a loop, or so deep or wide that
 * reading it would take more than a bounded amount of work. */
#define BTF_FIELDS_TOO_COMPLEX ELOOP

/*
 * Fill the __u32 fields of @out that the @n wants @w name, from the BTF
 * open at @btf_fd (raw BTF, or an ELF file with a .BTF section; read with
 * pread() only), or the running kernel's when @btf_fd < 0. Returns 0, or
 * a negative errno: -BTF_FIELDS_TOO_COMPLEX for a hostile file (nothing
 * is filled in); -BTF_FIELDS_MISMATCH when a member (required or
 * optional) has another size or sign than its want reads, or an answer
 * that would read as BTF_FIELD_NONE; -ENOENT when a
 * required want is missing or there is no BTF. On the last two every
 * field is filled all the same, the mismatched and missing ones with
 * BTF_FIELD_NONE, so the caller can name them and still use the rest.
 * -EINVAL for a malformed want; libbpf's error for a file that is
 * neither raw BTF nor ELF. The work is bounded whatever the file holds.
 */
int btf_fields_load(const struct btf_want *w, size_t n, void *out, int btf_fd);

/* After btf_fields_load(): one line on its first problem ("" if none):
 * the member that mismatched and how, the required one missing, or why
 * the file is too complex to read. */
const char *btf_fields_error(void);
/* Copy @n wants into @dst with their answers moved @base bytes on: to
 * read two tables (a struct inside a bigger one) in one pass of the
 * 5 MB file. Returns @dst + @n. */
struct btf_want *btf_wants_into(struct btf_want *dst, const struct btf_want *src, size_t n,
				size_t base);

#endif /* COMMON_BTF_FIELDS_H */
