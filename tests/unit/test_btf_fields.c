// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for the streaming BTF reader, common/btf_fields.c, and the
 * table it reads for common/kernel_layout.c: every answer is checked
 * against libbpf's own parse of the running kernel's BTF. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <cmocka.h>
#include <gelf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include "btf_fields.h"
#include "diag.h"
#include "kernel_layout.h"
#include "checks.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_CHAIN 16

/* ---- libbpf's answers ------------------------------------------------- */

static struct btf *vmlinux;	/* NULL: no kernel BTF here, tests skip */

static const struct btf_type *lb_resolved(__u32 id, bool deref)
{
	const struct btf_type *t = btf__type_by_id(vmlinux, id);

	for (int i = 0; t && i < MAX_CHAIN; i++) {
		if (!btf_is_mod(t) && !btf_is_typedef(t) && !(deref && btf_is_ptr(t)))
			return t;
		t = btf__type_by_id(vmlinux, t->type);
	}
	return NULL;
}

static __u32 lb_struct(const char *name)
{
	__s32 id = btf__find_by_name_kind(vmlinux, name, BTF_KIND_STRUCT);

	if (id < 0)
		id = btf__find_by_name_kind(vmlinux, name, BTF_KIND_UNION);
	return id < 0 ? 0 : (__u32)id;
}

/* Bit offset of member @name (@len bytes) in @id, anonymous members
 * crossed; -1 if none. */
static long lb_member(__u32 id, const char *name, size_t len, __u32 *type)
{
	const struct btf_type *t = lb_resolved(id, false);
	const struct btf_member *m;

	if (!t || !btf_is_composite(t))
		return -1;
	m = btf_members(t);
	for (__u16 i = 0; i < btf_vlen(t); i++) {
		const char *mn = btf__name_by_offset(vmlinux, m[i].name_off);
		long at = btf_member_bit_offset(t, i), inner;

		if (*mn && strlen(mn) == len && !strncmp(mn, name, len)) {
			*type = m[i].type;
			return at;
		}
		if (!*mn && (inner = lb_member(m[i].type, name, len, type)) >= 0)
			return at + inner;
	}
	return -1;
}

static __u32 lb_path_bits(const char *type, const char *path)
{
	__u32 id = lb_struct(type);
	long total = 0, bits;

	for (size_t len; id && *path; path += len + (path[len] == '.')) {
		len = strcspn(path, ".");
		bits = lb_member(id, path, len, &id);
		if (bits < 0)
			return BTF_FIELD_NONE;
		total += bits;
	}
	return id ? (__u32)total : BTF_FIELD_NONE;
}

static __u32 lb_enum(const char *type, const char *name)
{
	for (__u32 id = 1; id < btf__type_cnt(vmlinux); id++) {
		const struct btf_type *t = btf__type_by_id(vmlinux, id);

		if (!btf_is_any_enum(t) ||
		    (type && strcmp(btf__name_by_offset(vmlinux, t->name_off), type)))
			continue;
		for (__u16 i = 0; i < btf_vlen(t); i++) {
			bool wide = btf_is_enum64(t);
			__u32 off = wide ? btf_enum64(t)[i].name_off : btf_enum(t)[i].name_off;

			if (strcmp(btf__name_by_offset(vmlinux, off), name))
				continue;
			return wide ? (__u32)btf_enum64_value(&btf_enum64(t)[i])
				    : (__u32)btf_enum(t)[i].val;
		}
	}
	return BTF_FIELD_NONE;
}

static __u32 lb_params(const char *type)
{
	__s32 id = btf__find_by_name_kind(vmlinux, type, BTF_KIND_TYPEDEF);
	const struct btf_type *t = id < 0 ? NULL : lb_resolved((__u32)id, true);

	return t && btf_is_func_proto(t) ? btf_vlen(t) : BTF_FIELD_NONE;
}

static __u32 lb_size(const char *type)
{
	__u32 id = lb_struct(type);

	return id ? btf__type_by_id(vmlinux, id)->size : BTF_FIELD_NONE;
}

/* What btf_fields_load() should answer to @w. */
static __u32 expected(const struct btf_want *w)
{
	__u32 bits;

	switch (w->kind) {
	case BTF_WANT_OFFSET:
		bits = lb_path_bits(w->type, w->path);
		return bits == BTF_FIELD_NONE ? bits : bits / 8;
	case BTF_WANT_BIT_OFFSET:
		return lb_path_bits(w->type, w->path);
	case BTF_WANT_ENUM:
		return lb_enum(w->type, w->path);
	case BTF_WANT_PARAMS:
		return lb_params(w->type);
	case BTF_WANT_SIZE:
		return lb_size(w->type);
	}
	return BTF_FIELD_NONE;
}

static __u32 field_of(const void *out, const struct btf_want *w)
{
	__u32 v;

	memcpy(&v, (const char *)out + w->field, sizeof(v));
	return v;
}

static int setup(void **state)
{
	(void)state;
	libbpf_set_print(NULL);		/* test_bad_wants() makes it complain */
	if (access(KERNEL_BTF_PATH, R_OK) == 0)
		vmlinux = btf__parse(KERNEL_BTF_PATH, NULL);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	btf__free(vmlinux);
	return 0;
}

#define NEED_VMLINUX()								\
	do {									\
		if (!vmlinux)							\
			skip();							\
	} while (0)

/* ---- every kind of want ------------------------------------------------ */

struct out {
	__u32 comm, group_leader, in_iowait, task_size;
	__u32 data_len, cmd_flags, rq_q, rq_disk, rq_size, q_disk, major, first_minor;
	__u32 d_name_name, i_nlink;	/* a path; through an anonymous union */
	__u32 skc_num;			/* both, and not first in the anonymous one */
	__u32 op_write, op_write_in_req_op, sync_in_req_op;
	__u32 req_sync, req_fua, req_preflush, req_meta, req_rahead, req_background;
	__u32 perf_context_kernel;	/* in an ENUM64 */
	__u32 issue_params, complete_params;
};

/* All optional, so that what this kernel lacks compares too. */
#define W(kind, type, path, f) BTF_WANT(kind, type, path, struct out, f, true)
static const struct btf_want all_kinds[] = {
	W(BTF_WANT_OFFSET, "task_struct", "comm", comm),
	W(BTF_WANT_OFFSET, "task_struct", "group_leader", group_leader),
	W(BTF_WANT_BIT_OFFSET, "task_struct", "in_iowait", in_iowait),
	W(BTF_WANT_SIZE, "task_struct", NULL, task_size),
	W(BTF_WANT_OFFSET, "request", "__data_len", data_len),
	W(BTF_WANT_OFFSET, "request", "cmd_flags", cmd_flags),
	W(BTF_WANT_OFFSET, "request", "q", rq_q),
	W(BTF_WANT_OFFSET, "request", "rq_disk", rq_disk),
	W(BTF_WANT_SIZE, "request", NULL, rq_size),
	W(BTF_WANT_OFFSET, "request_queue", "disk", q_disk),
	W(BTF_WANT_OFFSET, "gendisk", "major", major),
	W(BTF_WANT_OFFSET, "gendisk", "first_minor", first_minor),
	W(BTF_WANT_OFFSET, "dentry", "d_name.name", d_name_name),
	W(BTF_WANT_OFFSET, "inode", "i_nlink", i_nlink),
	W(BTF_WANT_OFFSET, "sock", "__sk_common.skc_num", skc_num),
	W(BTF_WANT_ENUM, NULL, "REQ_OP_WRITE", op_write),
	W(BTF_WANT_ENUM, "req_op", "REQ_OP_WRITE", op_write_in_req_op),
	W(BTF_WANT_ENUM, "req_op", "__REQ_SYNC", sync_in_req_op),
	W(BTF_WANT_ENUM, NULL, "__REQ_SYNC", req_sync),
	W(BTF_WANT_ENUM, NULL, "__REQ_FUA", req_fua),
	W(BTF_WANT_ENUM, NULL, "__REQ_PREFLUSH", req_preflush),
	W(BTF_WANT_ENUM, NULL, "__REQ_META", req_meta),
	W(BTF_WANT_ENUM, NULL, "__REQ_RAHEAD", req_rahead),
	W(BTF_WANT_ENUM, NULL, "__REQ_BACKGROUND", req_background),
	W(BTF_WANT_ENUM, "perf_callchain_context", "PERF_CONTEXT_KERNEL", perf_context_kernel),
	W(BTF_WANT_PARAMS, "btf_trace_block_rq_issue", NULL, issue_params),
	W(BTF_WANT_PARAMS, "btf_trace_block_rq_complete", NULL, complete_params),
};

/* Absent from some kernels: kernel commit f3fa33acca9f removed rq->rq_disk,
 * d152c682f03c added q->disk. __REQ_SYNC is never in enum req_op. */
static bool may_lack(const struct btf_want *w)
{
	return w->field == offsetof(struct out, rq_disk) ||
	       w->field == offsetof(struct out, q_disk) ||
	       w->field == offsetof(struct out, sync_in_req_op);
}

static void check_against_libbpf(const struct out *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(all_kinds); i++) {
		const struct btf_want *w = &all_kinds[i];
		__u32 want = expected(w), got = field_of(out, w);

		CHECK(got == want, "%s %s: %u, libbpf says %u", w->type ? w->type : "(any enum)",
		      w->path ? w->path : "", got, want);
		CHECK(want != BTF_FIELD_NONE || may_lack(w), "%s %s: libbpf lacks it too",
		      w->type ? w->type : "(any enum)", w->path ? w->path : "");
	}
}

static void test_every_kind(void **state)
{
	struct out out;

	(void)state;
	NEED_VMLINUX();
	memset(&out, 0xab, sizeof(out));
	assert_int_equal(btf_fields_load(all_kinds, ARRAY_SIZE(all_kinds), &out, -1), 0);
	check_against_libbpf(&out);
	CHECK(out.op_write == 1, "REQ_OP_WRITE is %u", out.op_write);
	CHECK(out.sync_in_req_op == BTF_FIELD_NONE, "__REQ_SYNC found in enum req_op");
	CHECKS_END();
}

/* The passes stop once the wants are answered (an enumerator's once it
 * is found): each want alone (most stop within the first few thousand
 * types), and all of them together, answer as the whole file does. Those
 * this kernel may lack stay out of the set: a want never found keeps the
 * pass going to the end, and the set would test nothing early. */
static void test_stops_early(void **state)
{
	struct btf_want some[ARRAY_SIZE(all_kinds)];
	size_t n = 0;
	struct out out;

	(void)state;
	NEED_VMLINUX();
	for (size_t i = 0; i < ARRAY_SIZE(all_kinds); i++) {
		const struct btf_want *w = &all_kinds[i];
		__u32 want = expected(w);

		if (!may_lack(w))
			some[n++] = *w;
		memset(&out, 0xab, sizeof(out));
		assert_int_equal(btf_fields_load(w, 1, &out, -1), 0);
		CHECK(field_of(&out, w) == want, "%s %s alone: %u, libbpf says %u", w->type,
		      w->path ? w->path : "", field_of(&out, w), want);
	}
	memset(&out, 0xab, sizeof(out));
	assert_int_equal(btf_fields_load(some, n, &out, -1), 0);
	for (size_t i = 0; i < n; i++)
		CHECK(field_of(&out, &some[i]) == expected(&some[i]), "%s %s: %u, libbpf says %u",
		      some[i].type, some[i].path ? some[i].path : "", field_of(&out, &some[i]),
		      expected(&some[i]));
	CHECKS_END();
}

/* ---- what is missing ----------------------------------------------------- */

struct few {
	__u32 comm, member, inner, type, enumerator, params, size;
};

#define R(kind, type, path, f) BTF_WANT(kind, type, path, struct few, f, false)
static const struct btf_want some_missing[] = {
	R(BTF_WANT_OFFSET, "task_struct", "comm", comm),
	R(BTF_WANT_OFFSET, "request", "no_such_member", member),
	R(BTF_WANT_OFFSET, "dentry", "d_name.no_such_member", inner),
	R(BTF_WANT_OFFSET, "no_such_struct", "comm", type),
	R(BTF_WANT_ENUM, NULL, "NO_SUCH_ENUMERATOR", enumerator),
	R(BTF_WANT_PARAMS, "btf_trace_no_such_tracepoint", NULL, params),
	R(BTF_WANT_SIZE, "no_such_struct", NULL, size),
};

static void test_missing(void **state)
{
	struct btf_want optional[ARRAY_SIZE(some_missing)];
	struct few out;

	(void)state;
	NEED_VMLINUX();
	memset(&out, 0, sizeof(out));
	assert_int_equal(btf_fields_load(some_missing, ARRAY_SIZE(some_missing), &out, -1),
			 -ENOENT);
	CHECK(out.comm == lb_path_bits("task_struct", "comm") / 8, "comm: %u", out.comm);
	for (size_t i = 1; i < ARRAY_SIZE(some_missing); i++) {
		const struct btf_want *w = &some_missing[i];

		CHECK(field_of(&out, w) == BTF_FIELD_NONE, "%s %s not marked missing",
		      w->type ? w->type : "(any enum)", w->path ? w->path : "");
	}

	memcpy(optional, some_missing, sizeof(optional));
	for (size_t i = 0; i < ARRAY_SIZE(optional); i++)
		optional[i].optional = true;
	memset(&out, 0, sizeof(out));
	assert_int_equal(btf_fields_load(optional, ARRAY_SIZE(optional), &out, -1), 0);
	CHECK(out.member == BTF_FIELD_NONE && out.size == BTF_FIELD_NONE, "optional not marked");
	CHECKS_END();
}

static void test_bad_wants(void **state)
{
	const struct btf_want no_path = R(BTF_WANT_OFFSET, "task_struct", NULL, comm);
	const struct btf_want no_enumerator = R(BTF_WANT_ENUM, "req_op", NULL, enumerator);
	const struct btf_want no_type = R(BTF_WANT_SIZE, NULL, NULL, size);
	struct few out;
	int fd;

	(void)state;
	assert_int_equal(btf_fields_load(&no_path, 1, &out, -1), -EINVAL);
	assert_int_equal(btf_fields_load(&no_enumerator, 1, &out, -1), -EINVAL);
	assert_int_equal(btf_fields_load(&no_type, 1, &out, -1), -EINVAL);
	/* Neither raw BTF nor ELF. */
	fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(btf_fields_load(some_missing, 1, &out, fd) < 0);
	close(fd);
}

/* ---- an ELF file with a .BTF section (--btf) ------------------------------ */

/* @path: a relocatable ELF file holding the raw BTF @data in .BTF. */
static void write_elf(const char *path, void *data, size_t size)
{
	static char shstrtab[] = "\0.shstrtab\0.BTF";
	bool little_endian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	Elf_Scn *names, *btf;
	Elf64_Ehdr *eh;
	Elf_Data *d;
	Elf *e;

	assert_true(fd >= 0);
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	assert_non_null(e = elf_begin(fd, ELF_C_WRITE, NULL));
	assert_non_null(eh = elf64_newehdr(e));
	eh->e_ident[EI_DATA] = little_endian ? ELFDATA2LSB : ELFDATA2MSB;
	eh->e_type = ET_REL;
	eh->e_machine = EM_BPF;
	eh->e_version = EV_CURRENT;
	assert_non_null(names = elf_newscn(e));
	assert_non_null(d = elf_newdata(names));
	*d = (Elf_Data){ .d_buf = shstrtab, .d_size = sizeof(shstrtab), .d_type = ELF_T_BYTE,
			 .d_align = 1, .d_version = EV_CURRENT };
	*elf64_getshdr(names) = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_STRTAB };
	eh->e_shstrndx = (Elf64_Half)elf_ndxscn(names);
	assert_non_null(btf = elf_newscn(e));
	assert_non_null(d = elf_newdata(btf));
	*d = (Elf_Data){ .d_buf = data, .d_size = size, .d_type = ELF_T_BYTE, .d_align = 4,
			 .d_version = EV_CURRENT };
	*elf64_getshdr(btf) = (Elf64_Shdr){ .sh_name = 11, .sh_type = SHT_PROGBITS };
	assert_true(elf_update(e, ELF_C_WRITE) > 0);
	elf_end(e);
	close(fd);
}

static void test_elf_file(void **state)
{
	char path[] = "/tmp/test_btf_fields.XXXXXX";
	struct kernel_layout layout;
	const void *raw;
	struct out out;
	__u32 size = 0;
	int fd;

	(void)state;
	NEED_VMLINUX();
	raw = btf__raw_data(vmlinux, &size);
	assert_non_null(raw);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_elf(path, (void *)raw, size);

	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	memset(&out, 0xab, sizeof(out));
	assert_int_equal(btf_fields_load(all_kinds, ARRAY_SIZE(all_kinds), &out, fd), 0);
	check_against_libbpf(&out);
	assert_int_equal(kernel_layout_load(&layout, fd), 0);
	CHECK(layout.valid && layout.task_comm == out.comm, "kernel_layout from ELF");
	close(fd);
	unlink(path);
	CHECKS_END();
}

/* ---- kernel_layout.c's table ---------------------------------------------- */

static void test_kernel_layout(void **state)
{
	struct kernel_layout l;
	__u32 comm_at, leader_at;
	int fd;

	(void)state;
	NEED_VMLINUX();
	assert_int_equal(kernel_layout_load(&l, -1), 0);
	CHECK(l.valid == 1, "not valid");
	CHECK(l.task_comm == lb_path_bits("task_struct", "comm") / 8, "task_comm %u", l.task_comm);
	CHECK(l.dentry_name == lb_path_bits("dentry", "d_name.name") / 8, "dentry_name %u",
	      l.dentry_name);
	CHECK(l.sb_magic == lb_path_bits("super_block", "s_magic") / 8, "sb_magic %u", l.sb_magic);
	for (size_t i = 0; i < kernel_layout_nwants; i++) {
		const struct btf_want *w = &kernel_layout_wants[i];

		CHECK(field_of(&l, w) == expected(w), "%s %s: %u, libbpf says %u", w->type, w->path,
		      field_of(&l, w), expected(w));
	}
	kernel_task_name_offsets(&comm_at, &leader_at);
	CHECK(comm_at == l.task_comm && leader_at == l.task_group_leader,
	      "kernel_task_name_offsets() %u %u", comm_at, leader_at);

	memset(&l, 0xab, sizeof(l));
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_true(kernel_layout_load(&l, fd) < 0);
	close(fd);
	CHECK(l.valid == 0 && l.task_comm == 0, "failed load leaves values");
	CHECKS_END();
}

/* ---- hostile and changed BTF ---------------------------------------------- */

#define HOSTILE_MEMBERS 40
#define HOSTILE_DEPTH 8		/* MAX_NESTING in btf_fields.c */
/* Bounded work: far less than a second natively; UNIT_TIME_SCALE (a
 * cross build's tests under qemu-user, some 10x slower) stretches it. */
#define HOSTILE_SECS (1.0 * time_scale())

static double time_scale(void)
{
	const char *s = getenv("UNIT_TIME_SCALE");
	double k = s ? atof(s) : 1.0;

	return k >= 1.0 ? k : 1.0;
}

/* @btf's raw data in a memfd, for btf_fields_load(). */
static int btf_fd(struct btf *btf)
{
	__u32 size = 0;
	const void *raw = btf__raw_data(btf, &size);
	int fd = memfd_create("test_btf", MFD_CLOEXEC);

	assert_non_null(raw);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, raw, size), (ssize_t)size);
	btf__free(btf);
	return fd;
}

/* The CPU time this process has used: the work done, whatever else the
 * machine runs meanwhile (a loaded CI host, a slower one). */
static double now_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The names the wants below look for, so that the search does run. */
static struct btf *hostile_start(void)
{
	struct btf *btf = btf__new_empty();

	assert_non_null(btf);
	assert_true(btf__add_int(btf, "int", 4, BTF_INT_SIGNED) > 0);
	assert_true(btf__add_str(btf, "comm") > 0);
	return btf;
}

struct one {
	__u32 comm;
};
static const struct btf_want want_comm =
	BTF_OFFSET(struct one, comm, "task_struct", "comm", BTF_BYTES(16));

/* libbpf accepts a struct made of 40 anonymous members of its own type
 * (1 KB of BTF); a reader that walks into them spins for 40^8 steps. */
static void test_struct_inside_itself(void **state)
{
	struct btf *btf = hostile_start();
	struct one out;
	double t0;
	int id, fd;

	(void)state;
	id = btf__add_struct(btf, "task_struct", 8);
	assert_true(id > 0);
	for (int i = 0; i < HOSTILE_MEMBERS; i++)
		assert_int_equal(btf__add_field(btf, NULL, id, 0, 0), 0);
	fd = btf_fd(btf);
	t0 = now_secs();
	assert_int_equal(btf_fields_load(&want_comm, 1, &out, fd), -BTF_FIELDS_TOO_COMPLEX);
	CHECK(now_secs() - t0 < HOSTILE_SECS, "took %.3f s", now_secs() - t0);
	CHECK(strstr(btf_fields_error(), "contains itself, looking for task_struct.comm"),
	      "error: %s", btf_fields_error());
	close(fd);
	CHECKS_END();
}

/* A want answered before the one that meets the loop: the header's
 * "nothing is filled in" holds for it too (found by fuzz_btf_fields). */
static void test_hostile_fills_nothing(void **state)
{
	struct btf *btf = hostile_start();
	struct two {
		__u32 x, comm;
	} out = { 0xa5a5a5a5U, 0xa5a5a5a5U };
	static const struct btf_want wants[] = {
		BTF_OFFSET(struct two, x, "task_struct", "x", BTF_S32),
		BTF_OFFSET(struct two, comm, "task_struct", "comm", BTF_BYTES(16)),
	};
	int id, fd;

	(void)state;
	assert_true(btf__add_str(btf, "x") > 0);
	id = btf__add_struct(btf, "task_struct", 8);
	assert_true(id > 0);
	assert_int_equal(btf__add_field(btf, "x", 1, 0, 0), 0);
	for (int i = 0; i < HOSTILE_MEMBERS; i++)
		assert_int_equal(btf__add_field(btf, NULL, id, 32, 0), 0);
	fd = btf_fd(btf);
	assert_int_equal(btf_fields_load(wants, ARRAY_SIZE(wants), &out, fd),
			 -BTF_FIELDS_TOO_COMPLEX);
	assert_int_equal(out.x, 0xa5a5a5a5U);
	assert_int_equal(out.comm, 0xa5a5a5a5U);
	close(fd);
}

/* No loop, but 40 anonymous members of the next struct down, 8 deep:
 * 40^8 members to look at, and the budget stops it. */
static void test_work_budget(void **state)
{
	struct btf *btf = hostile_start();
	struct one out;
	int id, next, fd;
	double t0;

	(void)state;
	next = btf__add_struct(btf, "leaf", 4);
	assert_true(next > 0 && btf__add_field(btf, "x", 1, 0, 0) == 0);
	for (int depth = HOSTILE_DEPTH; depth >= 0; depth--, next = id) {
		id = btf__add_struct(btf, depth ? NULL : "task_struct", 8);
		assert_true(id > 0);
		for (int i = 0; i < HOSTILE_MEMBERS; i++)
			assert_int_equal(btf__add_field(btf, NULL, next, 0, 0), 0);
	}
	fd = btf_fd(btf);
	t0 = now_secs();
	assert_int_equal(btf_fields_load(&want_comm, 1, &out, fd), -BTF_FIELDS_TOO_COMPLEX);
	CHECK(now_secs() - t0 < HOSTILE_SECS, "took %.3f s", now_secs() - t0);
	CHECK(strstr(btf_fields_error(), "finding task_struct.comm takes more than"),
	      "error: %s", btf_fields_error());
	close(fd);
	CHECKS_END();
}

/* The type pass tries the answers as it goes, all tries from one budget.
 * Here each try walks 20^4 anonymous members before it needs a struct
 * not indexed yet, so the third try runs out: the pass must then read
 * the whole file and answer as if it had never tried (it stopped, and
 * answered "not in this BTF", where the whole file has it). */
static void test_tries_spend_their_own_budget(void **state)
{
	struct btf *btf = hostile_start();
	struct one out = { 0xa5a5a5a5U };
	int chr, arr, late, id, next, fd, top;

	(void)state;
	chr = btf__add_int(btf, "char", 1, BTF_INT_SIGNED);
	arr = btf__add_array(btf, 1, chr, 16);
	next = btf__add_struct(btf, "leaf", 4);
	assert_true(chr > 0 && arr > 0 && next > 0 && btf__add_field(btf, "x", 1, 0, 0) == 0);
	for (int depth = 3; depth >= 0; depth--, next = id) {
		id = btf__add_struct(btf, NULL, 8);
		assert_true(id > 0);
		for (int i = 0; i < 20; i++)
			assert_int_equal(btf__add_field(btf, NULL, next, 0, 0), 0);
	}
	top = next;
	id = btf__add_struct(btf, "task_struct", 24);
	late = id + 1 + 200;	/* after 200 ints */
	assert_true(id > 0 && btf__add_field(btf, NULL, top, 0, 0) == 0);
	assert_int_equal(btf__add_field(btf, NULL, late, 64, 0), 0);
	for (int i = 0; i < 200; i++)
		assert_true(btf__add_int(btf, "pad", 4, 0) > 0);
	assert_int_equal(btf__add_struct(btf, "late", 16), late);
	assert_int_equal(btf__add_field(btf, "comm", arr, 0, 0), 0);
	fd = btf_fd(btf);
	assert_int_equal(btf_fields_load(&want_comm, 1, &out, fd), 0);
	assert_int_equal(out.comm, 8);
	close(fd);
}

struct shapes {
	__u32 len, flags, q, bits, comm, name, low;
};
#define S(f, path, read) BTF_OFFSET(struct shapes, f, "request", path, read)
static const struct btf_want shape_wants[] = {
	S(len, "__data_len", BTF_U32),		/* an 8-byte unsigned long here */
	S(flags, "cmd_flags", BTF_U32),		/* a signed int here */
	S(q, "q", BTF_PTR),			/* as read */
	BTF_WANT(BTF_WANT_BIT_OFFSET, "request", "iowait", struct shapes, bits, true,
		 BTF_BITS(1)),			/* 2 bits here: optional, still a mismatch */
	S(comm, "comm", BTF_BYTES(16)),		/* char[16] through a typedef: as read */
	S(name, "name", BTF_PTR),		/* in an anonymous union: as read */
	S(low, "tcp_flags", BTF_LOW(1)),	/* the low byte of a __u16: as read */
};

/* A member found by name is not enough: each want says what it reads. */
static void test_size_and_sign(void **state)
{
	struct btf *btf = btf__new_empty();
	int u64, s32, u16, chr, arr, td, ptr, inner, req, fd;
	struct shapes out;

	(void)state;
	assert_non_null(btf);
	u64 = btf__add_int(btf, "long unsigned int", 8, 0);
	s32 = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	u16 = btf__add_int(btf, "short unsigned int", 2, 0);
	chr = btf__add_int(btf, "char", 1, BTF_INT_SIGNED);
	arr = btf__add_array(btf, s32, chr, 16);
	td = btf__add_typedef(btf, "comm_t", arr);
	ptr = btf__add_ptr(btf, 0);
	inner = btf__add_union(btf, NULL, 8);
	assert_true(btf__add_field(btf, "name", ptr, 0, 0) == 0);
	req = btf__add_struct(btf, "request", 64);
	assert_true(u64 > 0 && s32 > 0 && td > 0 && inner > 0 && req > 0);
	assert_int_equal(btf__add_field(btf, "__data_len", u64, 0, 0), 0);
	assert_int_equal(btf__add_field(btf, "cmd_flags", s32, 64, 0), 0);
	assert_int_equal(btf__add_field(btf, "q", ptr, 128, 0), 0);
	assert_int_equal(btf__add_field(btf, "iowait", s32, 192, 2), 0);
	assert_int_equal(btf__add_field(btf, "comm", td, 224, 0), 0);
	assert_int_equal(btf__add_field(btf, NULL, inner, 384, 0), 0);
	assert_int_equal(btf__add_field(btf, "tcp_flags", u16, 448, 0), 0);
	fd = btf_fd(btf);
	memset(&out, 0xab, sizeof(out));
	assert_int_equal(btf_fields_load(shape_wants, ARRAY_SIZE(shape_wants), &out, fd),
			 -BTF_FIELDS_MISMATCH);
	CHECK(out.len == BTF_FIELD_NONE && out.flags == BTF_FIELD_NONE &&
	      out.bits == BTF_FIELD_NONE, "mismatched answers: %u %u %u", out.len, out.flags,
	      out.bits);
	CHECK(out.q == 16 && out.comm == 28 && out.name == 48 && out.low == 56,
	      "the others: %u %u %u %u", out.q, out.comm, out.name, out.low);
	CHECK(!strcmp(btf_fields_error(), "request.__data_len is an 8-byte unsigned integer in "
		      "this BTF, where the BPF programs read a 4-byte unsigned integer"),
	      "error: %s", btf_fields_error());
	close(fd);
	CHECKS_END();
}

struct nones {
	__u32 op, any, bits, size, ok;
};
#define N(kind, type, path, f, ...) BTF_WANT(kind, type, path, struct nones, f, false, __VA_ARGS__)
static const struct btf_want none_wants[] = {
	N(BTF_WANT_ENUM, "req_op", "REQ_OP_WRITE", op, BTF_NOREAD),	/* -1 here */
	BTF_WANT(BTF_WANT_ENUM, NULL, "REQ_OP_READ", struct nones, any, true,
		 BTF_NOREAD),					/* optional: the same */
	N(BTF_WANT_BIT_OFFSET, "request", "flag", bits, BTF_NOREAD),	/* past 2^32 */
	N(BTF_WANT_SIZE, "huge", NULL, size, BTF_NOREAD),		/* 0xffffffff */
	N(BTF_WANT_ENUM, "req_op", "REQ_OP_FLUSH", ok, BTF_NOREAD),	/* 0xfffffffe */
};

/* An answer a __u32 holds only as BTF_FIELD_NONE would read as "the
 * kernel lacks it", required or not: a mismatch, never a 0 (found by
 * fuzz_btf_fields: a required enumerator of -1 answered with 0). */
static void test_answer_of_none(void **state)
{
	struct btf *btf = btf__new_empty();
	int u32, op, inner, req, huge, fd;
	struct nones out;

	(void)state;
	assert_non_null(btf);
	u32 = btf__add_int(btf, "unsigned int", 4, 0);
	op = btf__add_enum(btf, "req_op", 4);
	assert_true(u32 > 0 && op > 0);
	assert_int_equal(btf__add_enum_value(btf, "REQ_OP_READ", -1), 0);
	assert_int_equal(btf__add_enum_value(btf, "REQ_OP_WRITE", -1), 0);
	assert_int_equal(btf__add_enum_value(btf, "REQ_OP_FLUSH", -2), 0);
	inner = btf__add_struct(btf, NULL, 8);
	assert_true(inner > 0 && btf__add_field(btf, "flag", u32, 0x80, 0) == 0);
	req = btf__add_struct(btf, "request", 16);
	assert_true(req > 0 && btf__add_field(btf, NULL, inner, 0xffffffc0, 0) == 0);
	huge = btf__add_struct(btf, "huge", 0xffffffff);
	assert_true(huge > 0 && btf__add_field(btf, "x", u32, 0, 0) == 0);
	fd = btf_fd(btf);
	memset(&out, 0xab, sizeof(out));
	assert_int_equal(btf_fields_load(none_wants, ARRAY_SIZE(none_wants), &out, fd),
			 -BTF_FIELDS_MISMATCH);
	CHECK(out.op == BTF_FIELD_NONE && out.any == BTF_FIELD_NONE &&
	      out.bits == BTF_FIELD_NONE && out.size == BTF_FIELD_NONE,
	      "answers of none: %#x %#x %#x %#x", out.op, out.any, out.bits, out.size);
	CHECK(out.ok == 0xfffffffe, "REQ_OP_FLUSH: %#x", out.ok);
	CHECK(!strcmp(btf_fields_error(), "req_op.REQ_OP_WRITE is 0xffffffff in this BTF: a value "
		      "the tools cannot tell from none"), "error: %s", btf_fields_error());
	close(fd);
	CHECKS_END();
}

/* A type section that ends near 4 GiB (sparse): the last struct's
 * members end past it. With 32-bit offsets the pass wrapped to the start
 * and went round for ever; it must end, and find nothing. */
static void test_near_4gib(void **state)
{
	static const char strs[] = "\0x";
	struct btf_header h = {
		.magic = BTF_MAGIC, .version = 1, .hdr_len = sizeof(h),
		.type_len = UINT32_MAX, .str_off = UINT32_MAX, .str_len = sizeof(strs),
	};
	/* 12 + 65535 * 12 = 3 << 18 bytes: 5462 of them end past 4 GiB. */
	const struct btf_type big = { .info = BTF_KIND_STRUCT << 24 | 0xffff, .size = 8 };
	const __u64 step = sizeof(big) + 0xffffULL * sizeof(struct btf_member);
	const struct btf_want w = BTF_ENUM(struct one, comm, NULL, "NO_SUCH_ENUMERATOR");
	char path[] = "/tmp/test_btf_big.XXXXXX";
	struct one out;
	double t0;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	for (__u64 at = 0; at + sizeof(big) <= h.type_len; at += step)
		assert_int_equal(pwrite(fd, &big, sizeof(big), (off_t)(h.hdr_len + at)), sizeof(big));
	assert_int_equal(pwrite(fd, strs, sizeof(strs), (off_t)h.hdr_len + h.str_off), sizeof(strs));
	t0 = now_secs();
	assert_int_equal(btf_fields_load(&w, 1, &out, fd), -ENOENT);
	/* 5462 types spread over 4 GiB of a sparse file: 0.13 s of CPU on a
	 * quiet host, 1.3 s while it builds (the kernel's zero pages): what
	 * this guards against is minutes. */
	CHECK(now_secs() - t0 < 5 * HOSTILE_SECS, "took %.3f s", now_secs() - t0);
	close(fd);
	CHECKS_END();
}

/* More types than the kernel allows (BTF_MAX_TYPE, 2^20 - 1): refused,
 * and the index does not grow with the file. */
static void test_too_many_types(void **state)
{
	static const char strs[] = "\0x";
	const __u32 types = 1U << 20;
	struct btf_header h = {
		.magic = BTF_MAGIC, .version = 1, .hdr_len = sizeof(h),
		.type_len = types * sizeof(struct btf_type), .str_off = types * sizeof(struct btf_type),
		.str_len = sizeof(strs),
	};
	const struct btf_want w = BTF_ENUM(struct one, comm, NULL, "NO_SUCH_ENUMERATOR");
	struct one out;
	int fd = memfd_create("test_btf", MFD_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	assert_int_equal(pwrite(fd, strs, sizeof(strs), (off_t)h.hdr_len + h.str_off), sizeof(strs));
	assert_int_equal(btf_fields_load(&w, 1, &out, fd), -BTF_FIELDS_TOO_COMPLEX);
	CHECK(strstr(btf_fields_error(), "types: a malformed BTF file"), "error: %s",
	      btf_fields_error());
	close(fd);
	CHECKS_END();
}

/* Every want of kernel_layout.c states what bpf/kernel.bpf.h reads, and
 * this kernel has it so (test_kernel_layout: it loads with 0). */
static void test_layout_reads_stated(void **state)
{
	(void)state;
	for (size_t i = 0; i < kernel_layout_nwants; i++)
		CHECK(kernel_layout_wants[i].read != BTF_READ_NONE ||
		      kernel_layout_wants[i].field == offsetof(struct kernel_layout, fs_pwd) ||
		      kernel_layout_wants[i].field == offsetof(struct kernel_layout, file_path) ||
		      kernel_layout_wants[i].field == offsetof(struct kernel_layout, mount_mnt),
		      "%s.%s states no read", kernel_layout_wants[i].type, kernel_layout_wants[i].path);
	CHECKS_END();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind),
		cmocka_unit_test(test_stops_early),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_bad_wants),
		cmocka_unit_test(test_elf_file),
		cmocka_unit_test(test_kernel_layout),
		cmocka_unit_test(test_struct_inside_itself),
		cmocka_unit_test(test_hostile_fills_nothing),
		cmocka_unit_test(test_work_budget),
		cmocka_unit_test(test_tries_spend_their_own_budget),
		cmocka_unit_test(test_size_and_sign),
		cmocka_unit_test(test_answer_of_none),
		cmocka_unit_test(test_near_4gib),
		cmocka_unit_test(test_too_many_types),
		cmocka_unit_test(test_layout_reads_stated),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
