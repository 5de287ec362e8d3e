// SPDX-License-Identifier: GPL-2.0-only
/*
 * Facts about kernel types, read from BTF by streaming it (btf_fields.h).
 *
 * The raw BTF is read once, in two sequential passes: the strings, to find
 * where the few names wanted are; the types, to index where each type
 * starts, note the structs and typedefs so named and take the values of the
 * enumerators wanted. The structs are then read by offset. Each pass stops
 * as soon as what it looks for is in: all the names, or, when no
 * enumerator is wanted, the types every answer reads (task_struct is type
 * 114 of 126,700 on 6.18: its comm is found in 0.2 ms, not 4.5). Peak
 * memory is the index (4 bytes per type) and one read buffer. A --btf file that is
 * not raw BTF (an ELF file with a .BTF section) goes through libbpf.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <linux/btf.h>
#include <linux/types.h>
#include "btf_fields.h"
#include "diag.h"

#define CHUNK (64 * 1024)
#define INDEX_START (1 << 16)	/* types indexed before the first growth */
#define MEMBER_BATCH 64		/* struct members read at once */
#define MAX_CHAIN 16		/* typedefs and qualifiers followed */
#define MAX_NESTING 8		/* anonymous members inside each other */
#define FILTER_BITS 4096	/* of the quick "not a name wanted" filters */
/* BTF_KIND_ENUM64 (6.0+): older uapi headers lack it and its struct. */
#define KIND_ENUM64 19
struct enum64 {
	__u32 name_off, lo32, hi32;
};

/* A distinct name in the wants (a type, a path part, an enumerator). */
struct name {
	const char *s;		/* in a want; not NUL-terminated at len */
	size_t len;
	__u32 off;		/* in the string section; 0 (the empty string): absent */
	__u32 struct_id;	/* the first struct or union so named, with members */
	__u32 typedef_id;	/* the first typedef so named */
};

/* What an enumerator want found in the type pass. */
struct enum_found {
	__u32 value;
	bool found;
};

/* Sequential reads of a section through one buffer. */
struct chunk {
	int fd;
	off_t base;		/* the section's offset in the file */
	__u32 len;		/* the section's length */
	__u32 start, have;	/* buf holds section bytes [start, start + have) */
	char buf[CHUNK];
};

struct btf_file {
	int fd;
	struct btf_header hdr;
	off_t types;		/* where the type section starts in the file */
	struct chunk *chunk;
	__u32 *type_at;		/* type id -> offset in the type section */
	__u32 ntypes;
	struct name *names;	/* sorted by text, distinct */
	struct name **by_off;	/* the names found, sorted by string offset */
	size_t nnames, nfound;
	/* A bit per hash of a wanted name, by text and by string offset:
	 * most strings and types are none of ours, and this says so fast. */
	__u64 text_filter[FILTER_BITS / 64], off_filter[FILTER_BITS / 64];
	const struct btf_want *w;
	size_t n;
	struct enum_found *enums;	/* one per want */
	bool want_enums;
	__u32 noted;		/* struct and typedef ids noted so far */
	/* While the type pass is under way: set when an answer needed a
	 * type it has not reached yet. */
	bool *beyond;
};

static int read_at(int fd, void *buf, size_t len, off_t at)
{
	ssize_t n = pread(fd, buf, len, at);

	return n == (ssize_t)len ? 0 : -EIO;
}

static void chunk_open(struct chunk *c, int fd, off_t base, __u32 len)
{
	c->fd = fd;
	c->base = base;
	c->len = len;
	c->start = c->have = 0;
}

/* Make section bytes [at, at + n) available (n <= CHUNK); NULL past the
 * end. sysfs hands out a page a read: the buffer may hold no more. */
static const char *chunk_at(struct chunk *c, __u32 at, __u32 n)
{
	ssize_t got;

	if (at > c->len || n > c->len - at)
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

static int chunk_read(struct chunk *c, __u32 at, void *dst, __u32 n)
{
	const char *p = chunk_at(c, at, n);

	if (!p)
		return -EIO;
	memcpy(dst, p, n);
	return 0;
}

/* ---- the names wanted ------------------------------------------------ */

static void filter_add(__u64 *filter, unsigned int hash)
{
	filter[hash % FILTER_BITS / 64] |= 1ULL << (hash % 64);
}

static bool filter_has(const __u64 *filter, unsigned int hash)
{
	return filter[hash % FILTER_BITS / 64] & (1ULL << (hash % 64));
}

static unsigned int text_hash(const char *s, size_t len)
{
	return (unsigned int)len * 131 + (unsigned char)s[0] * 31 + (unsigned char)s[len - 1];
}

static int name_sort(const void *a, const void *b)
{
	const struct name *x = a, *y = b;
	int d = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);

	return d ? d : (x->len > y->len) - (x->len < y->len);
}

static int off_sort(const void *a, const void *b)
{
	__u32 x = (*(struct name *const *)a)->off, y = (*(struct name *const *)b)->off;

	return (x > y) - (x < y);
}

static struct name *name_find(const struct btf_file *b, const char *s, size_t len)
{
	struct name key = { .s = s, .len = len };

	if (!len || !filter_has(b->text_filter, text_hash(s, len)))
		return NULL;
	return bsearch(&key, b->names, b->nnames, sizeof(key), name_sort);
}

static struct name *name_at(const struct btf_file *b, __u32 off)
{
	struct name key = { .off = off }, *k = &key, **hit;

	if (!filter_has(b->off_filter, off))
		return NULL;
	hit = bsearch(&k, b->by_off, b->nfound, sizeof(k), off_sort);
	return hit ? *hit : NULL;
}

static void add_names(struct btf_file *b, const char *s, bool split)
{
	for (size_t len; s && *s; s += len + (s[len] == '.')) {
		len = split ? strcspn(s, ".") : strlen(s);
		if (len)
			b->names[b->nnames++] = (struct name){ .s = s, .len = len };
	}
}

/* Every distinct name in the wants, sorted for name_find(). */
static int collect_names(struct btf_file *b)
{
	size_t cap = 0, kept = 0;

	for (size_t i = 0; i < b->n; i++) {
		cap += 2;
		for (const char *p = b->w[i].path; p && *p; p++)
			cap += *p == '.';
	}
	b->names = calloc(cap + 1, sizeof(*b->names));	/* + 1: no wants */
	if (!b->names)
		return -ENOMEM;
	for (size_t i = 0; i < b->n; i++) {
		add_names(b, b->w[i].type, false);
		add_names(b, b->w[i].path, b->w[i].kind != BTF_WANT_ENUM);
	}
	qsort(b->names, b->nnames, sizeof(*b->names), name_sort);
	for (size_t i = 0; i < b->nnames; i++)
		if (!kept || name_sort(&b->names[kept - 1], &b->names[i]))
			b->names[kept++] = b->names[i];
	b->nnames = kept;
	for (size_t i = 0; i < b->nnames; i++)
		filter_add(b->text_filter, text_hash(b->names[i].s, b->names[i].len));
	return 0;
}

/* Pass 1: the offsets of the wanted names in the string section (BTF
 * strings are deduplicated: each is there once at most). */
static int find_strings(struct btf_file *b)
{
	struct chunk *c = b->chunk;
	bool too_long = false;
	size_t found = 0;
	struct name *nm;

	chunk_open(c, b->fd, (off_t)b->hdr.hdr_len + b->hdr.str_off, b->hdr.str_len);
	for (__u32 at = 0, room; at < c->len;) {
		const char *p = chunk_at(c, at, 1), *nul;

		if (!p)
			return -EIO;
		room = c->start + c->have - at;
		nul = memchr(p, '\0', room);
		if (!nul && at > c->start) {	/* read again from its start */
			c->have = 0;
			continue;
		}
		if (!nul) {			/* longer than CHUNK: not wanted */
			too_long = true;
			at += room;
			continue;
		}
		nm = too_long ? NULL : name_find(b, p, (size_t)(nul - p));
		if (nm && !nm->off)
			found++;
		if (nm)
			nm->off = at;
		if (found == b->nnames)
			break;
		too_long = false;
		at += (__u32)(nul - p) + 1;
	}
	b->by_off = malloc((b->nnames + 1) * sizeof(*b->by_off));
	if (!b->by_off)
		return -ENOMEM;
	for (size_t i = 0; i < b->nnames; i++)
		if (b->names[i].off) {
			b->by_off[b->nfound++] = &b->names[i];
			filter_add(b->off_filter, b->names[i].off);
		}
	qsort(b->by_off, b->nfound, sizeof(*b->by_off), off_sort);
	return 0;
}

/* ---- the types ------------------------------------------------------- */

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
	case BTF_KIND_DECL_TAG: return sizeof(struct btf_decl_tag);
	case KIND_ENUM64: return vlen * sizeof(struct enum64);
	default: return 0;
	}
}

static bool is_composite(const struct btf_type *t)
{
	int kind = BTF_INFO_KIND(t->info);

	return kind == BTF_KIND_STRUCT || kind == BTF_KIND_UNION;
}

/* Enumerator @nm with @value, in enum @t: the enumerator wants it answers. */
static void note_enumerator(struct btf_file *b, const struct btf_type *t,
			    const struct name *nm, __u32 value)
{
	for (size_t i = 0; i < b->n; i++) {
		const struct btf_want *w = &b->w[i];
		const struct name *in;

		if (w->kind != BTF_WANT_ENUM || b->enums[i].found ||
		    name_find(b, w->path, strlen(w->path)) != nm)
			continue;
		in = w->type ? name_find(b, w->type, strlen(w->type)) : NULL;
		if (w->type && (!t->name_off || !in || in->off != t->name_off))
			continue;
		b->enums[i] = (struct enum_found){ .value = value, .found = true };
	}
}

/* The enumerators of the enum at @at, read on through the chunk. */
static int scan_enum(struct btf_file *b, const struct btf_type *t, __u32 at)
{
	bool wide = BTF_INFO_KIND(t->info) == KIND_ENUM64;
	__u32 size = wide ? sizeof(struct enum64) : sizeof(struct btf_enum);
	struct name *nm;

	at += sizeof(*t);
	for (__u32 k = 0; k < BTF_INFO_VLEN(t->info); k++, at += size) {
		union {
			struct btf_enum e;
			struct enum64 e64;
		} e;

		if (chunk_read(b->chunk, at, &e, size))
			return -EIO;
		nm = name_at(b, e.e.name_off);
		if (nm)
			note_enumerator(b, t, nm, wide ? e.e64.lo32 : (__u32)e.e.val);
	}
	return 0;
}

/* Type @id, at @at: note it if it is a struct or typedef wanted by name,
 * or an enum that may hold the enumerators wanted. */
static int note_type(struct btf_file *b, const struct btf_type *t, __u32 id, __u32 at)
{
	int kind = BTF_INFO_KIND(t->info);
	struct name *nm;

	if (kind == BTF_KIND_ENUM || kind == KIND_ENUM64)
		return b->want_enums ? scan_enum(b, t, at) : 0;
	nm = t->name_off ? name_at(b, t->name_off) : NULL;
	if (!nm)
		return 0;
	if (is_composite(t) && BTF_INFO_VLEN(t->info) && !nm->struct_id) {
		nm->struct_id = id;
		b->noted++;
	}
	if (kind == BTF_KIND_TYPEDEF && !nm->typedef_id) {
		nm->typedef_id = id;
		b->noted++;
	}
	return 0;
}

static int answer(const struct btf_file *b, size_t i, __u32 *out);

/* Every struct and typedef that the wants name, and that the strings
 * have, is noted: no enumerator is wanted (any enum may hold one). */
static bool named_types_noted(const struct btf_file *b)
{
	if (b->want_enums)
		return false;
	for (size_t i = 0; i < b->n; i++) {
		const struct btf_want *w = &b->w[i];
		const struct name *nm = w->type ? name_find(b, w->type, strlen(w->type)) : NULL;

		if (nm && nm->off && !(w->kind == BTF_WANT_PARAMS ? nm->typedef_id : nm->struct_id))
			return false;
	}
	return true;
}

/* Every answer can be had from the types indexed so far. */
static bool answerable(struct btf_file *b)
{
	bool beyond = false;
	__u32 v;

	b->beyond = &beyond;
	for (size_t i = 0; i < b->n && !beyond; i++)
		answer(b, i, &v);
	b->beyond = NULL;
	return !beyond;
}

/* Pass 2: where each type starts, and what note_type() wants of it. */
static int index_types(struct btf_file *b)
{
	struct chunk *c = b->chunk;
	__u32 at = 0, cap = INDEX_START;
	struct btf_type t;
	int err = 0;

	chunk_open(c, b->fd, b->types, b->hdr.type_len);
	b->type_at = malloc(cap * sizeof(*b->type_at));
	if (!b->type_at)
		return -ENOMEM;
	b->ntypes = 1;			/* id 0 is void */
	for (__u32 noted = 0, next_try = 0; !err && at < c->len;) {
		if (noted != b->noted && named_types_noted(b))
			next_try = b->ntypes;	/* try now, then at twice as many */
		noted = b->noted;
		if (next_try && b->ntypes >= next_try) {
			if (answerable(b))
				break;
			next_try = 2 * b->ntypes;
		}
		if (chunk_read(c, at, &t, sizeof(t)))
			return -EIO;
		if (b->ntypes == cap) {
			__u32 *more = realloc(b->type_at, 2 * cap * sizeof(*more));

			if (!more)
				return -ENOMEM;
			b->type_at = more;
			cap *= 2;
		}
		b->type_at[b->ntypes] = at;
		err = note_type(b, &t, b->ntypes++, at);
		at += (__u32)(sizeof(t) + type_extra(&t));
	}
	return err;
}

static int type_of(const struct btf_file *b, __u32 id, struct btf_type *t)
{
	if (id >= b->ntypes && b->beyond)
		*b->beyond = true;
	if (!id || id >= b->ntypes)
		return -ENOENT;
	return read_at(b->fd, t, sizeof(*t), b->types + b->type_at[id]);
}

/* Through typedefs and qualifiers, and pointers if @deref, to the type
 * they stand for: its id (0 if none) and *t. */
static __u32 resolve(const struct btf_file *b, __u32 id, struct btf_type *t, bool deref)
{
	for (int depth = 0; depth < MAX_CHAIN && !type_of(b, id, t); depth++) {
		int kind = BTF_INFO_KIND(t->info);

		if (kind != BTF_KIND_TYPEDEF && kind != BTF_KIND_CONST &&
		    kind != BTF_KIND_VOLATILE && kind != BTF_KIND_RESTRICT &&
		    kind != BTF_KIND_TYPE_TAG && !(deref && kind == BTF_KIND_PTR))
			return id;
		id = t->type;
	}
	return 0;
}

/* Member with name offset @name in struct/union @id (inside anonymous
 * members too): its bit offset and type. */
static int find_member(const struct btf_file *b, __u32 id, __u32 name, int nesting,
		       __u32 *bits, __u32 *type)
{
	struct btf_member m[MEMBER_BATCH];
	struct btf_type t;
	__u32 vlen, inner;
	off_t at;

	id = resolve(b, id, &t, false);
	if (!id || !name || nesting > MAX_NESTING || !is_composite(&t))
		return -ENOENT;
	vlen = BTF_INFO_VLEN(t.info);
	at = b->types + b->type_at[id] + (off_t)sizeof(t);
	for (__u32 i = 0; i < vlen; i += MEMBER_BATCH) {
		__u32 n = vlen - i < MEMBER_BATCH ? vlen - i : MEMBER_BATCH;

		if (read_at(b->fd, m, n * sizeof(m[0]), at + (off_t)(i * sizeof(m[0]))))
			return -EIO;
		for (__u32 k = 0; k < n; k++) {
			__u32 off = BTF_INFO_KFLAG(t.info) ? BTF_MEMBER_BIT_OFFSET(m[k].offset)
							   : m[k].offset;

			if (m[k].name_off == name) {
				*bits = off;
				*type = m[k].type;
				return 0;
			}
			if (!m[k].name_off &&
			    !find_member(b, m[k].type, name, nesting + 1, &inner, type)) {
				*bits = off + inner;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* The bit offset of member path @path ("a.b.c") in struct @id. */
static int path_bits(const struct btf_file *b, __u32 id, const char *path, __u32 *out)
{
	__u32 total = 0, bits;
	const struct name *nm;

	for (size_t len; *path; path += len + (path[len] == '.')) {
		len = strcspn(path, ".");
		nm = name_find(b, path, len);
		if (!nm || find_member(b, id, nm->off, 0, &bits, &id))
			return -ENOENT;
		total += bits;
	}
	*out = total;
	return 0;
}

static int params(const struct btf_file *b, __u32 id, __u32 *out)
{
	struct btf_type t;

	id = resolve(b, id, &t, true);
	if (!id || BTF_INFO_KIND(t.info) != BTF_KIND_FUNC_PROTO)
		return -ENOENT;
	*out = BTF_INFO_VLEN(t.info);
	return 0;
}

static int struct_size(const struct btf_file *b, __u32 id, __u32 *out)
{
	struct btf_type t;

	if (type_of(b, id, &t))
		return -ENOENT;
	*out = t.size;
	return 0;
}

/* The answer to want @i; -ENOENT if this BTF has none. */
static int answer(const struct btf_file *b, size_t i, __u32 *out)
{
	const struct btf_want *w = &b->w[i];
	const struct name *type = w->type ? name_find(b, w->type, strlen(w->type)) : NULL;
	__u32 struct_id = type ? type->struct_id : 0;
	int err;

	switch (w->kind) {
	case BTF_WANT_OFFSET:
	case BTF_WANT_BIT_OFFSET:
		err = path_bits(b, struct_id, w->path, out);
		if (!err && w->kind == BTF_WANT_OFFSET)
			*out /= 8;
		return err;
	case BTF_WANT_ENUM:
		*out = b->enums[i].value;
		return b->enums[i].found ? 0 : -ENOENT;
	case BTF_WANT_PARAMS:
		return params(b, type ? type->typedef_id : 0, out);
	case BTF_WANT_SIZE:
		return struct_size(b, struct_id, out);
	}
	return -EINVAL;
}

static int fill(const struct btf_file *b, void *out)
{
	int err = 0;

	for (size_t i = 0; i < b->n; i++) {
		__u32 v = 0;
		int e = answer(b, i, &v);

		if (e == -ENOENT)
			v = BTF_FIELD_NONE;
		if (e == -ENOENT && b->w[i].optional)
			e = 0;
		memcpy((char *)out + b->w[i].field, &v, sizeof(v));
		if (!err)
			err = e;
	}
	return err;
}

static int load_raw(const struct btf_want *w, size_t n, void *out, int fd)
{
	struct btf_file b = { .fd = fd, .w = w, .n = n };
	int err;

	if (read_at(fd, &b.hdr, sizeof(b.hdr), 0) || b.hdr.magic != BTF_MAGIC)
		return -EINVAL;
	b.types = (off_t)b.hdr.hdr_len + b.hdr.type_off;
	for (size_t i = 0; i < n; i++)
		b.want_enums |= w[i].kind == BTF_WANT_ENUM;
	b.chunk = malloc(sizeof(*b.chunk));
	b.enums = calloc(n + 1, sizeof(*b.enums));	/* + 1: no wants */
	err = b.chunk && b.enums ? collect_names(&b) : -ENOMEM;
	if (!err)
		err = find_strings(&b);
	if (!err)
		err = index_types(&b);
	if (!err)
		err = fill(&b, out);
	free(b.chunk);
	free(b.enums);
	free(b.names);
	free(b.by_off);
	free(b.type_at);
	return err;
}

/* An ELF file with a .BTF section (only --btf can name one): libbpf
 * extracts it, into memory that the raw reader then reads. */
static int load_elf(const struct btf_want *w, size_t n, void *out, const char *path)
{
	struct btf *btf = btf__parse(path, NULL);
	const void *raw;
	__u32 size = 0;
	int fd, err;

	if (!btf)
		return -errno;
	raw = btf__raw_data(btf, &size);
	fd = memfd_create("btf", MFD_CLOEXEC);
	err = !raw || fd < 0 || write(fd, raw, size) != (ssize_t)size ? -EIO
								      : load_raw(w, n, out, fd);
	if (fd >= 0)
		close(fd);
	btf__free(btf);
	return err;
}

static bool want_valid(const struct btf_want *w)
{
	switch (w->kind) {
	case BTF_WANT_OFFSET:
	case BTF_WANT_BIT_OFFSET:
		return w->type && w->path;
	case BTF_WANT_ENUM:
		return w->path;
	case BTF_WANT_PARAMS:
	case BTF_WANT_SIZE:
		return w->type;
	}
	return false;
}

struct btf_want *btf_wants_into(struct btf_want *dst, const struct btf_want *src, size_t n,
				size_t base)
{
	for (size_t i = 0; i < n; i++) {
		dst[i] = src[i];
		dst[i].field += base;
	}
	return dst + n;
}

int btf_fields_load(const struct btf_want *w, size_t n, void *out, const char *btf_path)
{
	int fd, err;

	for (size_t i = 0; i < n; i++)
		if (!want_valid(&w[i]))
			return -EINVAL;
	fd = open(btf_path ? btf_path : KERNEL_BTF_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = load_raw(w, n, out, fd);
	close(fd);
	if (err == -EINVAL && btf_path)	/* not raw BTF */
		err = load_elf(w, n, out, btf_path);
	return err;
}
