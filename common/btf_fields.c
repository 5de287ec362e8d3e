// SPDX-License-Identifier: GPL-2.0-only
/*
 * Facts about kernel types, read from BTF by streaming it (btf_fields.h).
 *
 * The raw BTF is read once, in two sequential passes: the strings, to find
 * where the few names wanted are; the types, to index where each type
 * starts, note the structs and typedefs so named and take the values of the
 * enumerators wanted. The structs are then read by offset. Each pass stops
 * as soon as what it looks for is in: all the names, or the types every
 * answer reads and every enumerator wanted (task_struct is type 114 of
 * 126,700 on 6.18: its comm is found in 0.2 ms, not 4.5). Peak
 * memory is the index (4 bytes per type) and one read buffer. A --btf file that is
 * not raw BTF (an ELF file with a .BTF section) goes through libbpf.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
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
/* Members looked at and types read per load. Every want of tcprcv (the
 * most) takes ~4,400 on 6.18; a file that nests 40 anonymous structs in
 * each other 8 deep would take 40^8 without a bound. */
#define WORK_BUDGET (1L << 20)
/* The kernel's own bound on type ids (BTF_MAX_TYPE in kernel/bpf/btf.c):
 * more types than this is no kernel's BTF, and the index stays < 4 MiB. */
#define MAX_TYPES 0x000fffffU
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

/* Sequential reads of a section through one buffer. Offsets are 64-bit:
 * a section may end near 4 GiB, where a __u32 sum would wrap. */
struct chunk {
	int fd;
	off_t base;		/* the section's offset in the file */
	__u64 len;		/* the section's length */
	__u64 start, have;	/* buf holds section bytes [start, start + have) */
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
	__u32 noted;		/* struct and typedef ids noted, enumerators found so far */
	/* While the type pass is under way: set when an answer needed a
	 * type it has not reached yet. */
	bool *beyond;
	long budget;		/* of WORK_BUDGET, what is left */
	__u32 loop_id;		/* a struct found inside itself, if any */
};

/* What the last load found wrong first (btf_fields_error()). */
static char last_error[256];

static int read_at(int fd, void *buf, size_t len, off_t at)
{
	ssize_t n = pread(fd, buf, len, at);

	return n == (ssize_t)len ? 0 : -EIO;
}

static void chunk_open(struct chunk *c, int fd, off_t base, __u64 len)
{
	c->fd = fd;
	c->base = base;
	c->len = len;
	c->start = c->have = 0;
}

/* Make section bytes [at, at + n) available (n <= CHUNK); NULL past the
 * end. sysfs hands out a page a read: the buffer may hold no more. */
static const char *chunk_at(struct chunk *c, __u64 at, __u32 n)
{
	ssize_t got;

	if (at > c->len || n > c->len - at)
		return NULL;
	if (at >= c->start && at + n <= c->start + c->have)
		return c->buf + (at - c->start);
	got = pread(c->fd, c->buf, c->len - at < CHUNK ? c->len - at : CHUNK,
		    c->base + (off_t)at);	/* at < len, a __u32 of the header */
	if (got < (ssize_t)n)
		return NULL;
	c->start = at;
	c->have = (__u64)got;
	return c->buf;
}

static int chunk_read(struct chunk *c, __u64 at, void *dst, __u32 n)
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
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): by_off holds pointers */
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
	for (__u64 at = 0, room; at < c->len;) {
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
		/* The first of a name written twice (BTF's strings are
		 * deduplicated; a file that repeats one is answered as the
		 * pass that stops at it would: the same whatever follows).
		 * Offset 0 is the empty string, whatever a file has there: a
		 * name found at 0 would be absent (off 0) and counted found. */
		if (nm && !nm->off && at) {
			found++;
			nm->off = at;
		}
		if (found == b->nnames)
			break;
		too_long = false;
		at += (__u64)(nul - p) + 1;
	}
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): by_off holds pointers */
	b->by_off = malloc((b->nnames + 1) * sizeof(*b->by_off));
	if (!b->by_off)
		return -ENOMEM;
	for (size_t i = 0; i < b->nnames; i++)
		if (b->names[i].off) {
			b->by_off[b->nfound++] = &b->names[i];
			filter_add(b->off_filter, b->names[i].off);
		}
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): by_off holds pointers */
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
		b->noted++;	/* the first found is the answer: settled */
	}
}

/* The enumerators of the enum at @at, read on through the chunk. */
static int scan_enum(struct btf_file *b, const struct btf_type *t, __u64 at)
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
static int note_type(struct btf_file *b, const struct btf_type *t, __u32 id, __u64 at)
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

static int answer(struct btf_file *b, size_t i, __u32 *out, char *why, size_t len);

/* Every struct and typedef that the wants name, and that the strings
 * have, is noted, and every enumerator wanted is found (the first one
 * found is the answer, so a later enum cannot change it; one not found
 * may be in any enum yet, and keeps the pass going to the end). */
static bool named_types_noted(const struct btf_file *b)
{
	for (size_t i = 0; i < b->n; i++) {
		const struct btf_want *w = &b->w[i];
		const struct name *nm;

		if (w->kind == BTF_WANT_ENUM) {
			if (!b->enums[i].found)
				return false;
			continue;
		}
		nm = w->type ? name_find(b, w->type, strlen(w->type)) : NULL;
		if (nm && nm->off && !(w->kind == BTF_WANT_PARAMS ? nm->typedef_id : nm->struct_id))
			return false;
	}
	return true;
}

/* Whether every answer can be had from the types indexed so far, which
 * are what the same answers over the whole file read: TRY_STOP, when no
 * answer needed a type not indexed yet (one that found a struct inside
 * itself ends them all: so would the whole file's, at the same member);
 * TRY_LATER, when one did; TRY_NO_MORE, when the tries have spent their
 * budget (b->budget, shared by all tries): the pass then reads every type
 * and the answers get a budget of their own, as if it had never tried. */
enum try { TRY_LATER, TRY_STOP, TRY_NO_MORE };
static enum try answerable(struct btf_file *b)
{
	bool beyond = false;
	int e = 0;
	__u32 v;

	b->beyond = &beyond;
	for (size_t i = 0; i < b->n && !beyond && e != -BTF_FIELDS_TOO_COMPLEX; i++)
		e = answer(b, i, &v, NULL, 0);
	b->beyond = NULL;
	if (b->budget < 0)
		return TRY_NO_MORE;
	return beyond ? TRY_LATER : TRY_STOP;
}

/* Pass 2: where each type starts, and what note_type() wants of it. */
static int index_types(struct btf_file *b)
{
	struct chunk *c = b->chunk;
	__u32 cap = INDEX_START;
	struct btf_type t;
	__u64 at = 0;
	int err = 0;

	chunk_open(c, b->fd, b->types, b->hdr.type_len);
	b->type_at = malloc(cap * sizeof(*b->type_at));
	if (!b->type_at)
		return -ENOMEM;
	b->ntypes = 1;			/* id 0 is void */
	for (__u32 noted = 0, next_try = 0; !err && at < c->len;) {
		if (noted != b->noted && named_types_noted(b) && b->budget >= 0)
			next_try = b->ntypes;	/* try now, then at twice as many */
		noted = b->noted;
		if (next_try && b->ntypes >= next_try) {
			enum try tried = answerable(b);

			if (tried == TRY_STOP)
				break;
			next_try = tried == TRY_LATER ? 2 * b->ntypes : 0;
		}
		if (chunk_read(c, at, &t, sizeof(t)))
			return -EIO;
		if (b->ntypes > MAX_TYPES) {
			snprintf(last_error, sizeof(last_error), "more than %u types: a malformed "
				 "BTF file", MAX_TYPES);
			return -BTF_FIELDS_TOO_COMPLEX;
		}
		if (b->ntypes == cap) {
			__u32 *more = realloc(b->type_at, 2 * (size_t)cap * sizeof(*more));

			if (!more)
				return -ENOMEM;
			b->type_at = more;
			cap *= 2;
		}
		b->type_at[b->ntypes] = (__u32)at;	/* at < type_len, a __u32 */
		err = note_type(b, &t, b->ntypes++, at);
		at += sizeof(t) + type_extra(&t);
	}
	return err;
}

/* Type @id into *t, and the one __u32 that follows it (an int's
 * encoding, an array's element type) into *extra if asked. */
static int type_of(struct btf_file *b, __u32 id, struct btf_type *t, __u32 *extra)
{
	struct {
		struct btf_type t;
		__u32 extra;
	} rec;
	int err;

	if (id >= b->ntypes && b->beyond)
		*b->beyond = true;
	if (!id || id >= b->ntypes)
		return -ENOENT;
	if (--b->budget < 0)
		return -BTF_FIELDS_TOO_COMPLEX;
	err = read_at(b->fd, &rec, extra ? sizeof(rec) : sizeof(rec.t), b->types + b->type_at[id]);
	*t = rec.t;
	if (extra)
		*extra = rec.extra;
	return err;
}

/* Through typedefs and qualifiers, and pointers if @deref, to the type
 * they stand for: its id (0 if none, or *err) and *t. */
static __u32 resolve(struct btf_file *b, __u32 id, struct btf_type *t, bool deref, int *err)
{
	for (int depth = 0; depth < MAX_CHAIN; depth++) {
		int kind, e = type_of(b, id, t, NULL);

		if (e) {
			if (err && e != -ENOENT)
				*err = e;
			return 0;
		}
		kind = BTF_INFO_KIND(t->info);
		if (kind != BTF_KIND_TYPEDEF && kind != BTF_KIND_CONST &&
		    kind != BTF_KIND_VOLATILE && kind != BTF_KIND_RESTRICT &&
		    kind != BTF_KIND_TYPE_TAG && !(deref && kind == BTF_KIND_PTR))
			return id;
		id = t->type;
	}
	return 0;
}

/* A member found: where it is, its type, its width if a bitfield. */
struct member {
	__u64 bits;		/* bit offset in the struct searched (a hostile
				 * file's nesting may sum past 32 bits) */
	__u32 type;
	__u32 bitfield;		/* bits; 0: not a bitfield (or an old-style one) */
};

/* Member with name offset @name in struct/union @id (inside anonymous
 * members too, @depth of them on the way, their ids in @path). A struct
 * met again on its own path is a loop: no kernel's BTF has one. */
static int find_member(struct btf_file *b, __u32 id, __u32 name, __u32 *path, int depth,
		       struct member *out)
{
	struct btf_member m[MEMBER_BATCH];
	struct btf_type t;
	int err = 0;
	__u32 vlen;
	off_t at;

	id = resolve(b, id, &t, false, &err);
	if (err)
		return err;
	if (!id || !name || depth > MAX_NESTING || !is_composite(&t))
		return -ENOENT;
	for (int i = 0; i < depth; i++)
		if (path[i] == id) {
			b->loop_id = id;
			return -BTF_FIELDS_TOO_COMPLEX;
		}
	path[depth] = id;
	vlen = BTF_INFO_VLEN(t.info);
	at = b->types + b->type_at[id] + (off_t)sizeof(t);
	for (__u32 i = 0; i < vlen; i += MEMBER_BATCH) {
		__u32 n = vlen - i < MEMBER_BATCH ? vlen - i : MEMBER_BATCH;

		b->budget -= n;
		if (b->budget < 0)
			return -BTF_FIELDS_TOO_COMPLEX;
		if (read_at(b->fd, m, n * sizeof(m[0]), at + (off_t)i * (off_t)sizeof(m[0])))
			return -EIO;
		for (__u32 k = 0; k < n; k++) {
			bool kflag = BTF_INFO_KFLAG(t.info);
			__u32 off = kflag ? BTF_MEMBER_BIT_OFFSET(m[k].offset) : m[k].offset;

			if (m[k].name_off == name) {
				*out = (struct member){ .bits = off, .type = m[k].type,
					.bitfield = kflag ? BTF_MEMBER_BITFIELD_SIZE(m[k].offset) : 0 };
				return 0;
			}
			if (m[k].name_off)
				continue;
			err = find_member(b, m[k].type, name, path, depth + 1, out);
			if (!err)
				out->bits += off;
			if (err != -ENOENT)
				return err;
		}
	}
	return -ENOENT;
}

/* Member path @path ("a.b.c") in struct @id: its bit offset from the
 * start of @id, its type and width. */
static int path_member(struct btf_file *b, __u32 id, const char *path, struct member *out)
{
	__u32 on_path[MAX_NESTING + 1];
	const struct name *nm;
	__u64 total = 0;
	int err;

	for (size_t len; *path; path += len + (path[len] == '.')) {
		len = strcspn(path, ".");
		nm = name_find(b, path, len);
		if (!nm)
			return -ENOENT;
		err = find_member(b, id, nm->off, on_path, 0, out);
		if (err)
			return err;
		total += out->bits;
		id = out->type;
	}
	out->bits = total;
	return 0;
}

/* ---- what a member is, against what is read there -------------------- */

/* A member's type as the checks see it: read = BTF_READ_BYTES for what
 * is neither an integer nor a pointer; size 0 when it has none. */
struct shape {
	enum btf_read read;
	__u32 size;
};

/* The size of type @id, through typedefs, qualifiers and arrays. */
static int type_size(struct btf_file *b, __u32 id, __u64 *size)
{
	__u64 mult = 1;
	struct btf_type t;
	int err = 0;

	for (int depth = 0; depth < MAX_CHAIN; depth++) {
		struct btf_array a;

		id = resolve(b, id, &t, false, &err);
		if (!id)
			return err ? err : -ENOENT;
		if (BTF_INFO_KIND(t.info) == BTF_KIND_PTR) {
			*size = mult * sizeof(void *);
			return 0;
		}
		if (BTF_INFO_KIND(t.info) != BTF_KIND_ARRAY) {
			*size = mult * t.size;
			return 0;
		}
		if (read_at(b->fd, &a, sizeof(a), b->types + b->type_at[id] + (off_t)sizeof(t)))
			return -EIO;
		mult *= a.nelems;
		id = a.type;
	}
	return -ENOENT;
}

static int member_shape(struct btf_file *b, const struct member *m, struct shape *out)
{
	struct btf_type t;
	__u32 id, enc = 0;
	__u64 size;
	int err = 0, kind;

	id = resolve(b, m->type, &t, false, &err);
	if (!id)
		return err ? err : -ENOENT;
	kind = BTF_INFO_KIND(t.info);
	if (kind == BTF_KIND_INT && (err = type_of(b, id, &t, &enc)))
		return err;
	if (m->bitfield || (kind == BTF_KIND_INT && BTF_INT_BITS(enc) != t.size * 8)) {
		*out = (struct shape){ BTF_READ_BITS, m->bitfield ? m->bitfield : BTF_INT_BITS(enc) };
		return 0;
	}
	if (kind == BTF_KIND_PTR) {
		*out = (struct shape){ BTF_READ_PTR, sizeof(void *) };
		return 0;
	}
	if (kind == BTF_KIND_INT || kind == BTF_KIND_ENUM || kind == KIND_ENUM64) {
		bool sign = kind == BTF_KIND_INT ? BTF_INT_ENCODING(enc) & BTF_INT_SIGNED
						 : BTF_INFO_KFLAG(t.info);

		*out = (struct shape){ sign ? BTF_READ_SIGNED : BTF_READ_UNSIGNED, t.size };
		return 0;
	}
	err = type_size(b, id, &size);
	*out = (struct shape){ BTF_READ_BYTES, err || size > UINT32_MAX ? 0 : (__u32)size };
	return err == -ENOENT ? 0 : err;
}

/* "an 8-byte", "a 4-byte". */
static const char *an(__u32 n)
{
	return n == 8 || n == 11 || n == 18 || (n >= 80 && n < 90) ? "an" : "a";
}

static void shape_name(const struct shape *s, char *buf, size_t len)
{
	switch (s->read) {
	case BTF_READ_PTR: snprintf(buf, len, "a pointer"); break;
	case BTF_READ_UNSIGNED:
	case BTF_READ_SIGNED:
		snprintf(buf, len, "%s %u-byte %s integer", an(s->size), s->size,
			 s->read == BTF_READ_SIGNED ? "signed" : "unsigned");
		break;
	case BTF_READ_BITS: snprintf(buf, len, "%s %u-bit bitfield", an(s->size), s->size); break;
	case BTF_READ_LOW:
		snprintf(buf, len, "the low %u byte%s of an unsigned integer", s->size,
			 s->size == 1 ? "" : "s");
		break;
	default: snprintf(buf, len, s->size ? "%u bytes" : "of no size", s->size); break;
	}
}

static bool matches(const struct shape *have, const struct shape *want)
{
	switch (want->read) {
	case BTF_READ_BYTES:
		return have->read != BTF_READ_BITS && have->size == want->size;
	case BTF_READ_LOW:
		return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ &&
		       have->read == BTF_READ_UNSIGNED && have->size >= want->size;
	default:
		return have->read == want->read && have->size == want->size;
	}
}

/* Whether member @m is what want @w reads; if not, why into @why. */
static int check_member(struct btf_file *b, const struct btf_want *w, const struct member *m,
			char *why, size_t len)
{
	struct shape have, want = { w->read, w->size };
	char h[64], r[64];
	int err;

	if (w->read == BTF_READ_NONE)
		return 0;
	err = member_shape(b, m, &have);
	if (err)
		return err;
	if (matches(&have, &want))
		return 0;
	if (why) {
		shape_name(&have, h, sizeof(h));
		shape_name(&want, r, sizeof(r));
		snprintf(why, len, "%s.%s is %s in this BTF, where the BPF programs read %s",
			 w->type, w->path, h, r);
	}
	return -BTF_FIELDS_MISMATCH;
}

static int params(struct btf_file *b, __u32 id, __u32 *out)
{
	struct btf_type t;
	int err = 0;

	id = resolve(b, id, &t, true, &err);
	if (err)
		return err;
	if (!id || BTF_INFO_KIND(t.info) != BTF_KIND_FUNC_PROTO)
		return -ENOENT;
	*out = BTF_INFO_VLEN(t.info);
	return 0;
}

static int struct_size(struct btf_file *b, __u32 id, __u32 *out)
{
	struct btf_type t;
	int err = type_of(b, id, &t, NULL);

	if (err)
		return err;
	*out = t.size;
	return 0;
}

static void want_name(const struct btf_want *w, char *buf, size_t len);

/* The answer to want @i as this BTF has it, 64 bits wide. */
static int raw_answer(struct btf_file *b, size_t i, __u64 *out, char *why, size_t len)
{
	const struct btf_want *w = &b->w[i];
	const struct name *type = w->type ? name_find(b, w->type, strlen(w->type)) : NULL;
	__u32 struct_id = type ? type->struct_id : 0, v = 0;
	struct member m = { 0 };
	int err;

	switch (w->kind) {
	case BTF_WANT_OFFSET:
	case BTF_WANT_BIT_OFFSET:
		err = path_member(b, struct_id, w->path, &m);
		if (!err)
			err = check_member(b, w, &m, why, len);
		*out = w->kind == BTF_WANT_OFFSET ? m.bits / 8 : m.bits;
		return err;
	case BTF_WANT_ENUM:
		*out = b->enums[i].value;
		return b->enums[i].found ? 0 : -ENOENT;
	case BTF_WANT_PARAMS:
		err = params(b, type ? type->typedef_id : 0, &v);
		break;
	case BTF_WANT_SIZE:
		err = struct_size(b, struct_id, &v);
		break;
	default:
		return -EINVAL;
	}
	*out = v;
	return err;
}

/* The answer to want @i; -ENOENT if this BTF has none, a mismatch
 * (described in @why, if given) if it has another size or sign, or a
 * value that a __u32 answer cannot hold apart from BTF_FIELD_NONE (an
 * enumerator of -1, an offset past 4 GiB): read as a value, it would be
 * taken for "none"; the BPF programs could not use it. */
static int answer(struct btf_file *b, size_t i, __u32 *out, char *why, size_t len)
{
	char name[160];
	__u64 v = 0;
	int err = raw_answer(b, i, &v, why, len);

	if (!err && v >= BTF_FIELD_NONE) {
		if (why) {
			want_name(&b->w[i], name, sizeof(name));
			snprintf(why, len, "%s is %#llx in this BTF: a value the tools cannot "
				 "tell from none", name, (unsigned long long)v);
		}
		err = -BTF_FIELDS_MISMATCH;
	}
	*out = (__u32)v;
	return err;
}

/* "task_struct.comm", "REQ_OP_WRITE", "btf_trace_block_rq_issue". */
static void want_name(const struct btf_want *w, char *buf, size_t len)
{
	if (w->type && w->path)
		snprintf(buf, len, "%s.%s", w->type, w->path);
	else
		snprintf(buf, len, "%s", w->path ? w->path : w->type);
}

static void note_problem(const struct btf_file *b, const struct btf_want *w, int e)
{
	char name[160];

	want_name(w, name, sizeof(name));
	if (e == -BTF_FIELDS_TOO_COMPLEX && b->loop_id)
		snprintf(last_error, sizeof(last_error), "a struct (type %u) contains itself, looking "
			 "for %s: a malformed BTF file", b->loop_id, name);
	else if (e == -BTF_FIELDS_TOO_COMPLEX)
		snprintf(last_error, sizeof(last_error), "finding %s takes more than %ld steps: "
			 "a malformed BTF file", name, WORK_BUDGET);
	else if (e == -ENOENT)
		snprintf(last_error, sizeof(last_error), "%s is not in this BTF", name);
	else
		snprintf(last_error, sizeof(last_error), "cannot read %s: %s", name, strerror(-e));
}

/* The answers go to @out only once they all stand: a file found hostile
 * (or unreadable) at the last want leaves @out as it was. */
static int fill(struct btf_file *b, void *out)
{
	char why[sizeof(last_error)];
	__u32 *vals = calloc(b->n + 1, sizeof(*vals));	/* + 1: no wants */
	int err = 0;

	if (!vals)
		return -ENOMEM;
	for (size_t i = 0; i < b->n; i++) {
		const struct btf_want *w = &b->w[i];
		__u32 v = 0;
		int e = answer(b, i, &v, why, sizeof(why));

		if (e == -BTF_FIELDS_TOO_COMPLEX || e == -EIO) {
			note_problem(b, w, e);
			free(vals);
			return e;
		}
		if (e == -ENOENT || e == -BTF_FIELDS_MISMATCH)
			v = BTF_FIELD_NONE;
		if (e == -ENOENT && w->optional)
			e = 0;
		vals[i] = v;
		/* The first mismatch outranks a missing member: it says more. */
		if (e == -BTF_FIELDS_MISMATCH && err != e)
			snprintf(last_error, sizeof(last_error), "%s", why);
		else if (e && !err)
			note_problem(b, w, e);
		if (e && (!err || e == -BTF_FIELDS_MISMATCH))
			err = e;
	}
	for (size_t i = 0; i < b->n; i++)
		memcpy((char *)out + b->w[i].field, &vals[i], sizeof(vals[i]));
	free(vals);
	return err;
}

static int load_raw(const struct btf_want *w, size_t n, void *out, int fd)
{
	struct btf_file b = { .fd = fd, .w = w, .n = n, .budget = WORK_BUDGET };
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
	/* The answers get the whole budget, whatever the pass's tries of
	 * them spent (the work is then bounded by twice it). */
	b.budget = WORK_BUDGET;
	b.loop_id = 0;		/* a try's loop says nothing of the answers' */
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
 * extracts it (through the descriptor: the file is not opened again by
 * name), into memory that the raw reader then reads. */
static int load_elf(const struct btf_want *w, size_t n, void *out, int btf_fd)
{
	char path[64];
	struct btf *btf;
	const void *raw;
	__u32 size = 0;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", btf_fd);
	btf = btf__parse(path, NULL);
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

int btf_fields_load(const struct btf_want *w, size_t n, void *out, int btf_fd)
{
	int fd = btf_fd, err;

	last_error[0] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!want_valid(&w[i]))
			return -EINVAL;
	if (btf_fd < 0)
		fd = open(KERNEL_BTF_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(last_error, sizeof(last_error), "cannot read %s: %s", KERNEL_BTF_PATH,
			 strerror(-err));
		return err;
	}
	err = load_raw(w, n, out, fd);
	if (btf_fd < 0)
		close(fd);
	else if (err == -EINVAL)	/* not raw BTF */
		err = load_elf(w, n, out, btf_fd);
	if (err && !last_error[0])
		snprintf(last_error, sizeof(last_error), "cannot read the BTF: %s", strerror(-err));
	return err;
}

const char *btf_fields_error(void)
{
	return last_error;
}
