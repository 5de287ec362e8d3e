/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Table-driven checks that report every failing case, not just the first:
 *
 *	CHECK(cond, "what goes wrong: %s", detail);
 *	...
 *	CHECKS_END();	fails the test if any CHECK() failed
 *
 * Include after <cmocka.h>.
 */
#ifndef TESTS_UNIT_CHECKS_H
#define TESTS_UNIT_CHECKS_H

static int checks_failed;

#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			checks_failed++;					\
			print_message("FAILED CHECK (%s:%d): ", __FILE__, __LINE__); \
			print_message(__VA_ARGS__);				\
			print_message("\n");					\
		}								\
	} while (0)

#define CHECKS_END()								\
	do {									\
		int failed_ = checks_failed;					\
										\
		checks_failed = 0;						\
		if (failed_)							\
			fail_msg("%d check(s) failed", failed_);		\
	} while (0)

#endif
