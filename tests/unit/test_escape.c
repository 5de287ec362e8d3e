// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for the escaping of traced and user strings, common/escape.c,
 * and of the error messages that echo them, diag_error() in common/diag.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "escape.h"
#include "diag.h"
#include "tool.h"
#include "capture.h"
#include "checks.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define E_ACUTE "\xc3\xa9"

/* escape_text() of buf[0..len) as a malloc'd string. */
static char *esc(const char *buf, size_t len)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);

	assert_non_null(f);
	escape_text(f, buf, len);
	assert_int_equal(fclose(f), 0);
	assert_non_null(out);
	return out;
}

/* The inverse of the text rule; returns the length, -1 if @s is not
 * something escape_text() writes. */
static int unescape(const char *s, char *out, size_t size)
{
	size_t n = 0;
	unsigned int byte;

	for (; *s; s++) {
		char c = *s;

		if (c == '\\') {
			s++;
			if (*s == '\\' || *s == 'n' || *s == 't' || *s == 'r')
				c = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s == 'r' ? '\r' : '\\';
			else if (*s == 'x' && sscanf(s + 1, "%2x", &byte) == 1 && s[1] && s[2])
				c = (char)byte, s += 2;
			else
				return -1;
		}
		if (n + 1 >= size)
			return -1;
		out[n++] = c;
	}
	out[n] = '\0';
	return (int)n;
}

/* Neither a control byte nor a byte of a C1 control reaches the output. */
static bool printable(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return false;
	return true;
}

struct text_case {
	const char *in;
	size_t len;		/* 0: strlen(in) */
	const char *want;
	bool valid;		/* well-formed UTF-8 */
};

static const struct text_case text_cases[] = {
	{ "plain ascii /usr/bin/cat-1_2.3", 0, "plain ascii /usr/bin/cat-1_2.3", true },
	{ "", 0, "", true },
	{ "caf" E_ACUTE, 0, "caf" E_ACUTE, true },
	/* comm is 15 bytes: the 8th "é" is cut after its first byte */
	{ E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE "\xc3", 0,
	  E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE "\\xc3", false },
	{ "a\xff" "b", 0, "a\\xffb", false },
	{ "\x80", 0, "\\x80", false },				/* stray continuation */
	{ "\xc0\xaf", 0, "\\xc0\\xaf", false },			/* overlong '/' */
	{ "\xe0\x80\xaf", 0, "\\xe0\\x80\\xaf", false },	/* overlong, 3 bytes */
	{ "\xf0\x80\x80\xaf", 0, "\\xf0\\x80\\x80\\xaf", false },
	{ "\xed\xa0\x80", 0, "\\xed\\xa0\\x80", false },	/* surrogate U+D800 */
	{ "\xed\x9f\xbf", 0, "\xed\x9f\xbf", true },		/* U+D7FF */
	{ "\xf4\x8f\xbf\xbf", 0, "\xf4\x8f\xbf\xbf", true },	/* U+10FFFF */
	{ "\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80", false }, /* U+110000 */
	{ "\xf5\x80\x80\x80", 0, "\\xf5\\x80\\x80\\x80", false },
	{ "\xf0\x9f\x98\x80 ok", 0, "\xf0\x9f\x98\x80 ok", true }, /* U+1F600 */
	{ "\xe2\x82", 0, "\\xe2\\x82", false },			/* cut short */
	{ "\xe2\x82" "A", 0, "\\xe2\\x82A", false },
	{ "\x1b[31mred\x1b[0m", 0, "\\x1b[31mred\\x1b[0m", true },
	{ "a\nb\tc\rd", 0, "a\\nb\\tc\\rd", true },
	{ "C:\\dir\\", 0, "C:\\\\dir\\\\", true },
	{ "\\x41", 0, "\\\\x41", true },			/* not a forged escape */
	{ "\x01\x1f", 0, "\\x01\\x1f", true },
	{ "del\x7f", 0, "del\\x7f", true },
	{ "nel\xc2\x85!", 0, "nel\\xc2\\x85!", true },		/* C1 U+0085 */
	{ "\xc2\x80\xc2\x9f", 0, "\\xc2\\x80\\xc2\\x9f", true }, /* C1 bounds */
	{ "nbsp\xc2\xa0", 0, "nbsp\xc2\xa0", true },		/* U+00A0 is not C1 */
	{ "ab\0cd", 5, "ab", true },				/* stops at NUL */
	{ "abcdef", 4, "abcd", true },				/* not NUL-terminated */
	{ "\xc3\xa9", 1, "\\xc3", false },			/* cut by len */
};

static void test_text_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(text_cases); i++) {
		const struct text_case *c = &text_cases[i];
		size_t len = c->len ? c->len : strlen(c->in);
		char *out = esc(c->in, len);
		char back[64];

		CHECK(!strcmp(out, c->want), "case %zu: got \"%s\", want \"%s\"", i, out, c->want);
		CHECK(printable(out), "case %zu: control byte in \"%s\"", i, out);
		CHECK(utf8_valid(c->in, len) == c->valid, "case %zu: utf8_valid() is %d", i, !c->valid);
		CHECK(utf8_valid(out, strlen(out)), "case %zu: output is not UTF-8", i);
		CHECK(unescape(out, back, sizeof(back)) == (int)strnlen(c->in, len) &&
		      !memcmp(back, c->in, strnlen(c->in, len)), "case %zu: does not reverse", i);
		free(out);
	}
	CHECKS_END();
}

/* A fixed-size field with no NUL in it is read to its end, not beyond
 * (ASan and valgrind see the over-read this would be). */
static void test_fixed_field(void **state)
{
	char *comm = malloc(4);
	char *out;

	(void)state;
	assert_non_null(comm);
	memcpy(comm, "ab\ncd", 4);
	out = esc(comm, 4);
	assert_string_equal(out, "ab\\nc");
	assert_false(utf8_valid("a\xc3", 2));
	assert_true(utf8_valid(comm, 4));
	free(out);
	free(comm);
}

/* Every byte 1..255, alone and after each other: reversible, printable. */
static void test_all_bytes(void **state)
{
	char all[256], back[1024], *out;

	(void)state;
	for (int i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = '\0';
	out = esc(all, sizeof(all));
	assert_true(printable(out));
	assert_true(utf8_valid(out, strlen(out)));
	assert_int_equal(unescape(out, back, sizeof(back)), 255);
	assert_memory_equal(back, all, 255);
	free(out);
}

/* Every code point is decoded back from its encoding; the decoder is the
 * one both escapers use. */
static void test_decode_all_code_points(void **state)
{
	unsigned char s[4];
	unsigned int got;
	size_t n;

	(void)state;
	for (unsigned int cp = 0; cp <= 0x10ffff; cp++) {
		if (cp < 0x80) {
			s[0] = (unsigned char)cp;
			n = 1;
		} else if (cp < 0x800) {
			s[0] = (unsigned char)(0xc0 | cp >> 6);
			s[1] = (unsigned char)(0x80 | (cp & 0x3f));
			n = 2;
		} else if (cp < 0x10000) {
			s[0] = (unsigned char)(0xe0 | cp >> 12);
			s[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
			s[2] = (unsigned char)(0x80 | (cp & 0x3f));
			n = 3;
		} else {
			s[0] = (unsigned char)(0xf0 | cp >> 18);
			s[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
			s[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
			s[3] = (unsigned char)(0x80 | (cp & 0x3f));
			n = 4;
		}
		if (cp >= 0xd800 && cp <= 0xdfff) {
			CHECK(utf8_decode((char *)s, n, &got) == 0, "surrogate U+%04X accepted", cp);
			continue;
		}
		CHECK(utf8_decode((char *)s, n, &got) == n && got == cp, "U+%04X", cp);
		CHECK(n == 1 || utf8_decode((char *)s, n - 1, &got) == 0, "U+%04X cut short", cp);
	}
	CHECKS_END();
}

struct buf_case {
	const char *in;
	size_t size;
	const char *want;
	size_t need;
};

static void test_buf(void **state)
{
	static const struct buf_case cases[] = {
		{ "ab\ncd", 64, "ab\\ncd", 6 },
		{ "ab\ncd", 7, "ab\\ncd", 6 },
		{ "ab\ncd", 6, "ab\\nc", 6 },		/* one byte short */
		{ "ab\ncd", 4, "ab", 6 },		/* never half an escape */
		{ "ab\ncd", 3, "ab", 6 },
		{ "a\xff", 4, "a", 5 },
		{ E_ACUTE E_ACUTE, 4, E_ACUTE, 4 },	/* never half a character */
		{ E_ACUTE, 2, "", 2 },
		{ "x", 1, "", 1 },
		{ "", 1, "", 0 },
	};
	char dst[80];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct buf_case *c = &cases[i];
		size_t need;

		memset(dst, '#', sizeof(dst));
		need = escape_text_buf(dst, c->size, c->in, strlen(c->in));
		CHECK(need == c->need, "case %zu: needs %zu, want %zu", i, need, c->need);
		CHECK(!strcmp(dst, c->want), "case %zu: got \"%s\", want \"%s\"", i, dst, c->want);
		CHECK(dst[c->size] == '#', "case %zu: wrote past size", i);
	}
	/* size 0: nothing written, not even a NUL */
	dst[0] = '#';
	assert_int_equal(escape_text_buf(dst, 0, "a\n", 2), 3);
	assert_int_equal(dst[0], '#');
	/* room for the whole output, in composition as with snprintf */
	{
		char comm[] = "bad\x1b]0;pwned\x07";
		char name[3 * sizeof(comm)], line[128];

		escape_text_buf(name, sizeof(name), comm, sizeof(comm));
		snprintf(line, sizeof(line), "%-16s|", name);
		assert_string_equal(line, "bad\\x1b]0;pwned\\x07|");
	}
	CHECKS_END();
}

/* ---- diag_error --------------------------------------------------- */

/* What fn() writes to stderr. */
static char *capture_stderr(void (*fn)(void))
{
	static char text[8192];
	struct capture c;

	capture_begin(&c, STDERR_FILENO);
	fn();
	capture_end(&c, text, sizeof(text));
	return text;
}

static void forged_error(void)
{
	diag_set_tool("readlat");
	diag_error("no process named '%s'", "x\nreadlat: fake\x1b[2J\\" E_ACUTE "\xff");
}

static void test_diag_error(void **state)
{
	(void)state;
	assert_string_equal(capture_stderr(forged_error),
		"readlat: no process named 'x\\nreadlat: fake\\x1b[2J\\\\" E_ACUTE "\\xff'\n");
}

static const struct tool cli_tool = { .name = "readlat", .shared = SHARED_FILTERS };

/* The command line's errors are printed by diag_error(), as tool_run()
 * does: -p $'12\nreadlat: fake' stays on one line. */
static void cli_forged_pid(void)
{
	char a0[] = "readlat", a1[] = "-p", a2[] = "12\nreadlat: fake";
	char *argv[] = { a0, a1, a2, NULL };
	struct run_config rc;

	diag_set_tool("readlat");
	assert_int_equal(cli_parse(&cli_tool, 3, argv, &rc), CLI_USAGE);
	diag_error("%s", rc.err);
}

static void test_diag_cli_error(void **state)
{
	(void)state;
	assert_string_equal(capture_stderr(cli_forged_pid),
		"readlat: invalid PID '12\\nreadlat: fake': expected a positive integer\n");
}

static void long_error(void)
{
	char big[5000];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	diag_set_tool("readlat");
	diag_error("%s\n", big);
}

static void test_diag_long(void **state)
{
	const char *out;

	(void)state;
	out = capture_stderr(long_error);
	assert_ptr_equal(strchr(out, '\n'), out + strlen(out) - 1);
	assert_true(strlen(out) > 4000);
	assert_string_equal(out + strlen(out) - 5, "a...\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_cases),
		cmocka_unit_test(test_fixed_field),
		cmocka_unit_test(test_all_bytes),
		cmocka_unit_test(test_decode_all_code_points),
		cmocka_unit_test(test_buf),
		cmocka_unit_test(test_diag_error),
		cmocka_unit_test(test_diag_cli_error),
		cmocka_unit_test(test_diag_long),
	};

	return cmocka_run_group_tests_name("escape", tests, NULL, NULL);
}
