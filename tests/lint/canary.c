/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Bugs planted for make lint to find (tests/lint.mk, lint-canary): a
 * change to either checker's configuration (.clang-tidy, tests/lint/)
 * that stopped it from seeing them would let make lint pass having
 * checked nothing. Never compiled into anything.
 */
#include <stdlib.h>

void lint_canary_use_after_free(void);
int lint_canary_null_deref(const int *q);

void lint_canary_use_after_free(void)
{
	char *p = malloc(16);

	free(p);
	*p = 'x';
}

int lint_canary_null_deref(const int *q)
{
	const int *p = NULL;

	if (q)
		return 0;
	return *p;
}
