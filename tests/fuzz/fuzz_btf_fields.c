// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: common/btf_fields.c on any bytes as a --btf file.
 * Every input must end in an answer or an error after bounded work (the
 * run's -timeout catches a hang), never read out of bounds (ASan), and
 * keep the promises of btf_fields.h about what is filled in.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/types.h>
#include "btf_fields.h"
#include "kernel_layout.h"

/* The kinds kernel_layout_wants does not use, on names the seeds have. */
struct other {
	__u32 enum_write, enum_any, params, size, nested, signed_pid;
};
#define OTHER(kind, type, path, f, ...) \
	BTF_WANT(kind, type, path, struct other, f, false, __VA_ARGS__)
static const struct btf_want other_wants[] = {
	OTHER(BTF_WANT_ENUM, "req_op", "REQ_OP_WRITE", enum_write, BTF_NOREAD),
	OTHER(BTF_WANT_ENUM, NULL, "TCP_ESTABLISHED", enum_any, BTF_NOREAD),
	OTHER(BTF_WANT_PARAMS, "btf_trace_block_rq_issue", NULL, params, BTF_NOREAD),
	OTHER(BTF_WANT_SIZE, "sock", NULL, size, BTF_NOREAD),
	OTHER(BTF_WANT_OFFSET, "sock", "__sk_common.skc_num", nested, BTF_U16),
	OTHER(BTF_WANT_OFFSET, "task_struct", "pid", signed_pid, BTF_S32),
};

#define UNFILLED 0xa5a5a5a5U

static int memfd = -1;

/* What btf_fields.h promises of @out after btf_fields_load() gave @err. */
static void check(const struct btf_want *w, size_t n, const __u32 *out, int err)
{
	const char *why = btf_fields_error();

	if (strnlen(why, 256) == 256)
		abort();
	if (err > 0 || (err && !why[0]))
		abort();	/* an error always says why */
	for (size_t i = 0; i < n; i++) {
		__u32 v = out[w[i].field / sizeof(__u32)];

		switch (-err) {
		case 0:		/* answered: a required want has a value */
			if (v == UNFILLED || (!w[i].optional && v == BTF_FIELD_NONE))
				abort();
			break;
		case ENOENT:
		case BTF_FIELDS_MISMATCH:	/* every field filled all the same */
			if (v == UNFILLED)
				abort();
			break;
		case BTF_FIELDS_TOO_COMPLEX:	/* nothing filled in */
			if (v != UNFILLED)
				abort();
			break;
		}
	}
}

static void run(const struct btf_want *w, size_t n, __u32 *out, size_t words)
{
	for (size_t i = 0; i < words; i++)
		out[i] = UNFILLED;
	check(w, n, out, btf_fields_load(w, n, out, memfd));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	__u32 layout[sizeof(struct kernel_layout) / sizeof(__u32)];
	__u32 other[sizeof(struct other) / sizeof(__u32)];

	if (memfd < 0 && (memfd = memfd_create("fuzz_btf", MFD_CLOEXEC)) < 0)
		abort();
	if (ftruncate(memfd, 0) || pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	run(kernel_layout_wants, kernel_layout_nwants, layout, sizeof(layout) / sizeof(__u32));
	run(other_wants, sizeof(other_wants) / sizeof(other_wants[0]), other,
	    sizeof(other) / sizeof(__u32));
	return 0;
}
