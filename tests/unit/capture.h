/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the code under test writes to stdout or stderr, captured in a
 * temporary file and read back as text:
 *
 *	struct capture c;
 *
 *	capture_begin(&c, STDERR_FILENO);
 *	diag_error(...);
 *	capture_end(&c, text, sizeof(text));
 *
 * Include after <cmocka.h>.
 */
#ifndef TESTS_UNIT_CAPTURE_H
#define TESTS_UNIT_CAPTURE_H

#include <stdio.h>
#include <unistd.h>

struct capture {
	FILE *tmp;
	int fd, saved;
};

static FILE *capture_stream(int fd)
{
	return fd == STDOUT_FILENO ? stdout : stderr;
}

static void capture_begin(struct capture *c, int fd)
{
	c->tmp = tmpfile();
	assert_non_null(c->tmp);
	c->fd = fd;
	fflush(capture_stream(fd));
	c->saved = dup(fd);
	assert_true(c->saved >= 0);
	assert_true(dup2(fileno(c->tmp), fd) >= 0);
}

static void capture_end(struct capture *c, char *text, size_t len)
{
	size_t n;

	fflush(capture_stream(c->fd));
	assert_true(dup2(c->saved, c->fd) >= 0);
	close(c->saved);
	rewind(c->tmp);
	n = fread(text, 1, len - 1, c->tmp);
	text[n] = '\0';
	fclose(c->tmp);
}

#endif
