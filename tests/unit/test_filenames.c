// SPDX-License-Identifier: GPL-2.0-only
/* common/filenames.c: names kept by file, and the bound under churn. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "filenames.h"

#define PIPEFS_MAGIC 0x50495045

static struct file_name pipe_name(__u64 ino)
{
	struct file_name n = { .magic = PIPEFS_MAGIC, .ino = ino, .dev = 12 };

	return n;
}

static void add(struct filenames *f, __u64 from, __u64 to)
{
	for (__u64 ino = from; ino < to; ino++) {
		struct file_name n = pipe_name(ino);

		assert_int_equal(filenames_add(f, &n), 0);
	}
}

/* A trim with at most @max names drops none; above, those neither added
 * nor used since the last trim, and it keeps what was. */
static void test_trim(void **state)
{
	struct filenames f = {};
	char want[64];

	(void)state;
	add(&f, 1, 101);			/* report 0: 100 names */
	assert_int_equal(filenames_trim(&f, 1000), 0);
	add(&f, 101, 151);			/* report 1: 50 more */
	assert_non_null(filenames_get(&f, 12, 7));	/* one old name used */
	assert_int_equal(filenames_trim(&f, 1000), 0);	/* under the bound */
	assert_int_equal(f.used, 150);
	add(&f, 151, 161);			/* report 2: 10 more */
	assert_non_null(filenames_get(&f, 12, 120));
	/* Over a bound of 100: names neither added nor used in report 2
	 * go, 7 too (used in report 1 only): all of reports 0 and 1 but 120. */
	assert_int_equal(filenames_trim(&f, 100), 150 - 1);
	assert_int_equal(f.used, 11);
	for (__u64 ino = 1; ino < 161; ino++) {
		bool kept = ino == 120 || ino >= 151;

		assert_int_equal(filenames_known(&f, 12, ino), kept);
		if (kept) {
			snprintf(want, sizeof(want), "pipe:[%llu]", (unsigned long long)ino);
			assert_string_equal(filenames_get(&f, 12, ino), want);
		}
	}
	assert_false(filenames_known(&f, 13, 7));	/* another filesystem */
	/* Gone names come back when the kernel sends them again. */
	add(&f, 1, 2);
	assert_string_equal(filenames_get(&f, 12, 1), "pipe:[1]");
	filenames_free(&f);
}

/* Churn: 100 reports of 1,000 new names each, a bound of 8,192: the table
 * never holds more than the bound and one report's names. */
static void test_churn_bounded(void **state)
{
	struct filenames f = {};
	size_t most = 0;

	(void)state;
	for (__u64 r = 0; r < 100; r++) {
		add(&f, 1 + r * 1000, 1 + (r + 1) * 1000);
		if (f.used > most)
			most = f.used;
		filenames_trim(&f, 8192);
	}
	assert_true(most <= 8192 + 1000);
	assert_true(f.cap <= 4 * (8192 + 1000));
	assert_true(filenames_known(&f, 12, 100000));
	filenames_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trim),
		cmocka_unit_test(test_churn_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
