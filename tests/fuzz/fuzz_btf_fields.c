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

/* An enumerator no file has, optional: it keeps the type pass going to
 * the end, where the wants alone let it stop once they are answered. */
#define FULL_PASS_WANT(o)                                                   \
	BTF_WANT(BTF_WANT_ENUM, NULL, "FUZZ_NO_SUCH_ENUMERATOR", o, full_pass, \
		 true, BTF_NOREAD)

/* The kinds kernel_layout_wants does not use, on names the seeds have. */
struct other {
	__u32 enum_write, enum_any, params, size, nested, signed_pid;
	__u32 full_pass;
};
struct layout_and_full {
	struct kernel_layout l;
	__u32 full_pass;
};
static const struct btf_want full_pass_other = FULL_PASS_WANT(struct other);
static const struct btf_want full_pass_layout = FULL_PASS_WANT(struct layout_and_full);
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

/* @w's answers, and the same with the pass made to read every type:
 * stopping early must change no answer the whole file gives. */
static void run(const struct btf_want *w, size_t n, __u32 *out, size_t words,
		const struct btf_want *full_pass)
{
	struct btf_want all[64];
	__u32 full[64];
	int err, err_full;

	if (n + 1 > sizeof(all) / sizeof(all[0]) || words + 1 > sizeof(full) / sizeof(full[0]))
		abort();
	for (size_t i = 0; i < words; i++)
		out[i] = full[i] = UNFILLED;
	err = btf_fields_load(w, n, out, memfd);
	check(w, n, out, err);
	memcpy(all, w, n * sizeof(*w));
	all[n] = *full_pass;
	err_full = btf_fields_load(all, n + 1, full, memfd);
	/* But for what only the rest of the file shows: that it is cut
	 * short (-EIO), or too complex (-ELOOP: over MAX_TYPES, say). */
	if (err_full == -EIO || err_full == -BTF_FIELDS_TOO_COMPLEX)
		return;
	if (err_full != err || memcmp(full, out, words * sizeof(*out)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	__u32 layout[sizeof(struct kernel_layout) / sizeof(__u32)];
	__u32 other[sizeof(struct other) / sizeof(__u32)];

	if (memfd < 0 && (memfd = memfd_create("fuzz_btf", MFD_CLOEXEC)) < 0)
		abort();
	if (ftruncate(memfd, 0) || pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	run(kernel_layout_wants, kernel_layout_nwants, layout, sizeof(layout) / sizeof(__u32),
	    &full_pass_layout);
	run(other_wants, sizeof(other_wants) / sizeof(other_wants[0]), other,
	    sizeof(other) / sizeof(__u32) - 1, &full_pass_other);
	return 0;
}
