// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for the streaming JSON writer, common/json.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "json.h"
#include "minijson.h"
#include "checks.h"

struct sink {
	char *buf;
	size_t len;
	FILE *f;
	struct json j;
};

static void sink_open(struct sink *s)
{
	s->buf = NULL;
	s->len = 0;
	s->f = open_memstream(&s->buf, &s->len);
	assert_non_null(s->f);
	json_begin(&s->j, s->f);
}

/* End the object and return what was written (the caller frees it). */
static char *sink_close(struct sink *s)
{
	json_end(&s->j);
	assert_int_equal(fclose(s->f), 0);
	assert_non_null(s->buf);
	return s->buf;
}

/* @text is one line holding one valid JSON object. */
static struct jv *parse_line(const char *text)
{
	struct jv *v;

	assert_true(strlen(text) > 0);
	assert_int_equal(text[strlen(text) - 1], '\n');
	assert_ptr_equal(strchr(text, '\n'), text + strlen(text) - 1);
	v = jv_parse(text);
	if (!v)
		fail_msg("not valid JSON: %s", text);
	assert_int_equal(v->type, JV_OBJ);
	return v;
}

static void test_empty_object(void **state)
{
	struct sink s;
	char *out;

	(void)state;
	sink_open(&s);
	out = sink_close(&s);
	assert_string_equal(out, "{}\n");
	free(out);
}

static void test_escape_exact(void **state)
{
	struct sink s;
	char *out;

	(void)state;
	sink_open(&s);
	json_str(&s.j, "q", "say \"hi\"");
	json_str(&s.j, "b", "C:\\dir\\");
	json_str(&s.j, "nl", "a\nb");
	json_str(&s.j, "tab", "a\tb");
	json_str(&s.j, "ctl", "\x01\x1f\x7f");
	json_str(&s.j, "cr", "\r\b\f");
	json_str(&s.j, "k\"e\\y", "");
	json_str(&s.j, "utf8", "caf\xc3\xa9 /");
	out = sink_close(&s);
	assert_string_equal(out,
		"{\"q\":\"say \\\"hi\\\"\","
		"\"b\":\"C:\\\\dir\\\\\","
		"\"nl\":\"a\\nb\","
		"\"tab\":\"a\\tb\","
		"\"ctl\":\"\\u0001\\u001f\\u007f\","
		"\"cr\":\"\\u000d\\u0008\\u000c\","
		"\"k\\\"e\\\\y\":\"\","
		"\"utf8\":\"caf\xc3\xa9 /\"}\n");
	free(out);
}

/* The exact bytes of a "<key>_hex" field; returns their number. */
static size_t unhex(const struct jv *hex, char *out, size_t size)
{
	size_t n = 0;
	unsigned int byte;

	assert_non_null(hex);
	assert_int_equal(hex->type, JV_STR);
	assert_int_equal(strspn(hex->str, "0123456789abcdef"), strlen(hex->str));
	assert_int_equal(strlen(hex->str) % 2, 0);
	for (const char *p = hex->str; *p; p += 2, n++) {
		assert_true(n < size);
		assert_int_equal(sscanf(p, "%2x", &byte), 1);
		out[n] = (char)byte;
	}
	return n;
}

/* Every byte 1..255 is written as valid JSON: ASCII unchanged, the bytes
 * that are not UTF-8 as U+FFFD, and all of them exactly in the _hex field. */
static void test_escape_roundtrip(void **state)
{
	char all[256], want[128 + 128 * 3 + 1], back[256];
	char key[] = "\x02weird\"key\\\n", hex_key[sizeof(key) + 4];
	const struct jv *got;
	struct jv *v;
	struct sink s;
	char *out;

	(void)state;
	for (int i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = '\0';
	memcpy(want, all, 127);
	for (int i = 0; i < 128; i++)
		memcpy(want + 127 + 3 * i, "\xef\xbf\xbd", 3);
	want[127 + 128 * 3] = '\0';
	snprintf(hex_key, sizeof(hex_key), "%s_hex", key);
	sink_open(&s);
	json_str(&s.j, key, all);
	out = sink_close(&s);
	/* no raw control character, nothing but ASCII reaches the output */
	for (char *p = out; *p && p[1]; p++)
		assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
	v = parse_line(out);
	got = jv_get(v, key);
	assert_non_null(got);
	assert_int_equal(got->type, JV_STR);
	/* 0x7f is written as \u007f, which decodes to the same byte */
	assert_string_equal(got->str, want);
	assert_int_equal(unhex(jv_get(v, hex_key), back, sizeof(back)), 255);
	assert_memory_equal(back, all, 255);
	assert_int_equal(v->n, 2);
	jv_free(v);
	free(out);
}

#define E_ACUTE "\xc3\xa9"
#define E7 E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE E_ACUTE

struct str_case {
	const char *in;
	size_t len;		/* 0: strlen(in) */
	const char *json;	/* exactly what is written after the "{" */
	const char *str;	/* the string decoded */
};

static const struct str_case str_cases[] = {
	{ "ab\xff", 0, "\"comm\":\"ab\\ufffd\",\"comm_hex\":\"6162ff\"}\n", "ab\xef\xbf\xbd" },
	/* comm cut by the kernel at 15 bytes, mid-character */
	{ E7 "\xc3", 0, "\"comm\":\"" E7 "\\ufffd\",\"comm_hex\":\"c3a9c3a9c3a9c3a9c3a9c3a9c3a9c3\"}\n",
	  E7 "\xef\xbf\xbd" },
	{ "\xc0\xaf", 0, "\"comm\":\"\\ufffd\\ufffd\",\"comm_hex\":\"c0af\"}\n",
	  "\xef\xbf\xbd\xef\xbf\xbd" },
	{ "\xed\xa0\x80", 0, "\"comm\":\"\\ufffd\\ufffd\\ufffd\",\"comm_hex\":\"eda080\"}\n",
	  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
	{ "\xf4\x90\x80\x80", 0,
	  "\"comm\":\"\\ufffd\\ufffd\\ufffd\\ufffd\",\"comm_hex\":\"f4908080\"}\n",
	  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
	{ "\"\\\xfe\n", 0, "\"comm\":\"\\\"\\\\\\ufffd\\n\",\"comm_hex\":\"225cfe0a\"}\n",
	  "\"\\\xef\xbf\xbd\n" },
	/* valid UTF-8: as is, no _hex */
	{ E7, 0, "\"comm\":\"" E7 "\"}\n", E7 },
	{ "\xf0\x9f\x98\x80", 0, "\"comm\":\"\xf0\x9f\x98\x80\"}\n", "\xf0\x9f\x98\x80" },
	{ "\x1b[31m", 0, "\"comm\":\"\\u001b[31m\"}\n", "\x1b[31m" },
	/* C1 controls are valid UTF-8, escaped for terminals */
	{ "\xc2\x85\xc2\x9b", 0, "\"comm\":\"\\u0085\\u009b\"}\n", "\xc2\x85\xc2\x9b" },
	{ "\xc2\xa0", 0, "\"comm\":\"\xc2\xa0\"}\n", "\xc2\xa0" },
	/* a fixed-size field: stops at the first NUL, or at its size */
	{ "a\xff\0\xff", 4, "\"comm\":\"a\\ufffd\",\"comm_hex\":\"61ff\"}\n", "a\xef\xbf\xbd" },
	{ "abcd\xff", 4, "\"comm\":\"abcd\"}\n", "abcd" },
	{ "\xc3\xa9", 1, "\"comm\":\"\\ufffd\",\"comm_hex\":\"c3\"}\n", "\xef\xbf\xbd" },
};

static void test_invalid_utf8(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(str_cases) / sizeof(str_cases[0]); i++) {
		const struct str_case *c = &str_cases[i];
		size_t len = c->len ? c->len : strlen(c->in), n;
		const struct jv *hex;
		char back[64];
		struct sink s;
		struct jv *v;
		char *out;

		sink_open(&s);
		json_strn(&s.j, "comm", c->in, len);
		out = sink_close(&s);
		CHECK(!strcmp(out + 1, c->json), "case %zu: wrote %s", i, out);
		v = jv_parse(out);
		CHECK(v, "case %zu: not valid JSON: %s", i, out);
		if (!v) {
			free(out);
			continue;
		}
		CHECK(jv_get(v, "comm") && !strcmp(jv_get(v, "comm")->str, c->str),
		      "case %zu: comm decodes wrong", i);
		hex = jv_get(v, "comm_hex");
		if (hex) {
			n = unhex(hex, back, sizeof(back));
			CHECK(n == strnlen(c->in, len) && !memcmp(back, c->in, n),
			      "case %zu: comm_hex does not give the bytes back", i);
		} else {
			n = strnlen(c->in, len);
			CHECK(strlen(jv_get(v, "comm")->str) == n && !memcmp(jv_get(v, "comm")->str, c->in, n),
			      "case %zu: no comm_hex", i);
		}
		jv_free(v);
		free(out);
	}
	CHECKS_END();
}

/* In an array there is no key to pair a _hex field with: U+FFFD only. */
static void test_invalid_utf8_in_array(void **state)
{
	struct sink s;
	char *out;

	(void)state;
	sink_open(&s);
	json_open(&s.j, "a", '[');
	json_str(&s.j, NULL, "x\xff");
	json_close(&s.j, ']');
	out = sink_close(&s);
	assert_string_equal(out, "{\"a\":[\"x\\ufffd\"]}\n");
	free(out);
}

/* Python's reader agrees that every line is JSON (decoding the line as
 * strict UTF-8 first: json.loads(bytes) would let encoded surrogates
 * through), and every _hex field is hex. */
static void test_python_reads_it(void **state)
{
	static const char script[] =
		"import json,sys\n"
		"n = 0\n"
		"for line in sys.stdin.buffer:\n"
		"    o = json.loads(line.decode('utf-8'))\n"
		"    bytes.fromhex(o.get('comm_hex', ''))\n"
		"    n += 1\n"
		"sys.exit(0 if n == int(sys.argv[1]) else 1)\n";
	char cmd[64];
	struct sink s;
	FILE *py;
	char *out;
	size_t n = 0;

	(void)state;
	if (system("python3 -c '' 2>/dev/null") != 0)
		skip();
	sink_open(&s);
	json_end(&s.j);
	for (size_t i = 0; i < sizeof(str_cases) / sizeof(str_cases[0]); i++, n++) {
		const struct str_case *c = &str_cases[i];

		json_begin(&s.j, s.f);
		json_strn(&s.j, "comm", c->in, c->len ? c->len : strlen(c->in));
		json_end(&s.j);
	}
	json_begin(&s.j, s.f);
	out = sink_close(&s);
	assert_int_equal(setenv("TEST_JSON_SCRIPT", script, 1), 0);
	snprintf(cmd, sizeof(cmd), "python3 -c \"$TEST_JSON_SCRIPT\" %zu", n + 2);
	py = popen(cmd, "w");
	assert_non_null(py);
	fputs(out, py);
	if (pclose(py) != 0)
		fail_msg("python3 json.loads rejected: %s", out);
	free(out);
}

static void test_integers(void **state)
{
	struct sink s;
	char *out;

	(void)state;
	sink_open(&s);
	json_u64(&s.j, "z", 0);
	json_u64(&s.j, "umax", ULLONG_MAX);
	json_i64(&s.j, "neg", -1);
	json_i64(&s.j, "imin", LLONG_MIN);
	json_i64(&s.j, "imax", LLONG_MAX);
	json_bool(&s.j, "t", true);
	json_bool(&s.j, "f", false);
	out = sink_close(&s);
	assert_string_equal(out,
		"{\"z\":0,\"umax\":18446744073709551615,\"neg\":-1,"
		"\"imin\":-9223372036854775808,\"imax\":9223372036854775807,"
		"\"t\":true,\"f\":false}\n");
	free(out);
}

static void test_numbers(void **state)
{
	struct sink s;
	char *out;

	(void)state;
	sink_open(&s);
	json_num(&s.j, "int", 3.0);
	json_num(&s.j, "negint", -2.0);
	json_num(&s.j, "zero", 0.0);
	json_num(&s.j, "negzero", -0.0);
	json_num(&s.j, "big", 1e15);
	json_num(&s.j, "max53", 9007199254740992.0);
	json_num(&s.j, "half", 0.5);
	json_num(&s.j, "frac", 1234.5678);
	json_num(&s.j, "negfrac", -0.25);
	json_num(&s.j, "nan", NAN);
	json_num(&s.j, "inf", INFINITY);
	json_num(&s.j, "ninf", -INFINITY);
	out = sink_close(&s);
	assert_string_equal(out,
		"{\"int\":3,\"negint\":-2,\"zero\":0,\"negzero\":0,"
		"\"big\":1000000000000000,\"max53\":9007199254740992,"
		"\"half\":0.500,\"frac\":1234.568,\"negfrac\":-0.250,"
		"\"nan\":null,\"inf\":null,\"ninf\":null}\n");
	free(out);
}

/* Below 1, three significant digits, not three decimals: 0.0017 msecs
 * (1700 ns) printed 0.002 before; json_decimal() is exact. */
static void test_numbers_small(void **state)
{
	struct sink s;
	char *out;

	(void)state;
	sink_open(&s);
	json_num(&s.j, "a", 0.301);
	json_num(&s.j, "b", 0.0017);
	json_num(&s.j, "c", 0.000134);
	json_num(&s.j, "d", -0.0000123);
	json_num(&s.j, "e", 2.5e-12);
	json_decimal(&s.j, "us", 128, 3);
	json_decimal(&s.j, "ms", 159, 6);
	json_decimal(&s.j, "big", 3145727, 3);
	json_decimal(&s.j, "whole", 2000000, 6);
	json_decimal(&s.j, "umax", UINT64_MAX, 3);
	json_decimal(&s.j, "ns", 7, 0);
	out = sink_close(&s);
	assert_string_equal(out,
		"{\"a\":0.301,\"b\":0.00170,\"c\":0.000134,\"d\":-0.0000123,\"e\":0.000000000,"
		"\"us\":0.128,\"ms\":0.000159,\"big\":3145.727,\"whole\":2,"
		"\"umax\":18446744073709551.615,\"ns\":7}\n");
	free(out);
}

/* Whatever json_num() writes is a JSON number (or null) of that value. */
static void test_numbers_valid(void **state)
{
	static const double vals[] = {
		0, 1, -1, 0.001, 0.0004, 1e-300, 123456.789, 4294967296.5,
		1e18, -1e18, 9.2e18, 1e19, 1.8446744073709552e19, 1e20, -1e20, 1e300,
		-1e300, DBL_MAX, -DBL_MAX, DBL_MIN,
	};
	char key[32];
	struct jv *v;
	struct sink s;
	char *out;

	(void)state;
	sink_open(&s);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		snprintf(key, sizeof(key), "v%zu", i);
		json_num(&s.j, key, vals[i]);
	}
	out = sink_close(&s);
	v = parse_line(out);
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		const struct jv *n;
		double want = vals[i], tol;

		snprintf(key, sizeof(key), "v%zu", i);
		n = jv_get(v, key);
		assert_non_null(n);
		assert_int_equal(n->type, JV_NUM);
		/* three decimals for fractions, else exact */
		tol = fabs(want) < 1e15 ? 0.0005 : fabs(want) * 1e-15;
		if (!(fabs(n->num - want) <= tol))
			fail_msg("%s: wrote %s for %g", key, n->raw, want);
	}
	jv_free(v);
	free(out);
}

/*
 * Regression (was a bug): json_num() tests integrality with (double)(long long)val, which
 * is undefined for |val| >= 2^63 (x86 gives LLONG_MIN), so such integral
 * values are written with ".000".
 */
static void test_numbers_large_integral(void **state)
{
	static const double vals[] = { 9223372036854775808.0, 1e19, 1.8446744073709552e19, 1e20, -1e20 };

	(void)state;
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		struct sink s;
		char *out;

		sink_open(&s);
		json_num(&s.j, "v", vals[i]);
		out = sink_close(&s);
		CHECK(!strchr(out, '.'), "json_num(%.17g) wrote %.*s", vals[i],
			  (int)strlen(out) - 1, out);
		free(out);
	}
	CHECKS_END();
}

static void test_nesting_commas(void **state)
{
	struct sink s;
	struct jv *v;
	const struct jv *arr;
	char *out;

	(void)state;
	sink_open(&s);
	json_str(&s.j, "a", "s");
	json_open(&s.j, "o", '{');
	json_u64(&s.j, "x", 1);
	json_open(&s.j, "arr", '[');
	json_open(&s.j, NULL, '{');
	json_u64(&s.j, "y", 2);
	json_close(&s.j, '}');
	json_open(&s.j, NULL, '{');
	json_close(&s.j, '}');
	json_u64(&s.j, NULL, 5);
	json_str(&s.j, NULL, "e");
	json_open(&s.j, NULL, '[');
	json_close(&s.j, ']');
	json_close(&s.j, ']');
	json_close(&s.j, '}');
	json_bool(&s.j, "z", true);
	json_open(&s.j, "e", '[');
	json_close(&s.j, ']');
	json_open(&s.j, "f", '{');
	json_close(&s.j, '}');
	out = sink_close(&s);
	assert_string_equal(out,
		"{\"a\":\"s\",\"o\":{\"x\":1,\"arr\":[{\"y\":2},{},5,\"e\",[]]},"
		"\"z\":true,\"e\":[],\"f\":{}}\n");
	v = parse_line(out);
	arr = jv_get(jv_get(v, "o"), "arr");
	assert_non_null(arr);
	assert_int_equal(arr->type, JV_ARR);
	assert_int_equal(arr->n, 5);
	jv_free(v);
	free(out);
}

/* json_begin() resets the comma state, so a writer can be reused. */
static void test_reuse(void **state)
{
	struct sink s;
	char *out;

	(void)state;
	sink_open(&s);
	json_u64(&s.j, "a", 1);
	json_end(&s.j);
	json_begin(&s.j, s.f);
	json_u64(&s.j, "b", 2);
	out = sink_close(&s);
	assert_string_equal(out, "{\"a\":1}\n{\"b\":2}\n");
	free(out);
}

/* The test's own reader must reject what is not JSON, or the output tests
 * prove nothing. */
static void test_reader_is_strict(void **state)
{
	static const char *bad[] = {
		"", "{", "{\"a\":1,}", "{\"a\" 1}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}",
		"{\"a\":\"x\ty\"}", "{\"a\":\"\\x\"}", "{\"a\":nan}", "{\"a\":inf}", "{a:1}",
		"{\"a\":1}{", "[1 2]", "{\"a\":\"\\u12\"}", "{\"a\":tru}",
		/* JSON text is UTF-8 */
		"[\"\xff\"]", "[\"\xc3\"]", "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]",
		"[\"\xf4\x90\x80\x80\"]",
	};
	static const char *good[] = {
		"{}", "[]", "{\"a\":[1,-2,3.5e-3,true,false,null,\"\\u00e9\"]}\n", " 0 ",
		"[\"\xc3\xa9\xf0\x9f\x98\x80\"]",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct jv *v = jv_parse(bad[i]);

		if (v)
			fail_msg("accepted %s", bad[i]);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct jv *v = jv_parse(good[i]);

		if (!v)
			fail_msg("rejected %s", good[i]);
		jv_free(v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_is_strict),
		cmocka_unit_test(test_empty_object),
		cmocka_unit_test(test_escape_exact),
		cmocka_unit_test(test_escape_roundtrip),
		cmocka_unit_test(test_invalid_utf8),
		cmocka_unit_test(test_invalid_utf8_in_array),
		cmocka_unit_test(test_python_reads_it),
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_numbers_small),
		cmocka_unit_test(test_numbers_valid),
		cmocka_unit_test(test_numbers_large_integral),
		cmocka_unit_test(test_nesting_commas),
		cmocka_unit_test(test_reuse),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
