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

/* Every byte 1..255 survives a write and a strict read unchanged. */
static void test_escape_roundtrip(void **state)
{
	char all[256], key[] = "\x02weird\"key\\\n";
	const struct jv *got;
	struct jv *v;
	struct sink s;
	char *out;

	(void)state;
	for (int i = 1; i < 256; i++)
		all[i - 1] = (char)i;
	all[255] = '\0';
	sink_open(&s);
	json_str(&s.j, key, all);
	out = sink_close(&s);
	/* no raw control character reaches the output */
	for (char *p = out; *p && p[1]; p++)
		assert_true((unsigned char)*p >= 0x20);
	v = parse_line(out);
	got = jv_get(v, key);
	assert_non_null(got);
	assert_int_equal(got->type, JV_STR);
	/* 0x7f is written as \u007f, which decodes to the same byte */
	assert_string_equal(got->str, all);
	jv_free(v);
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
	};
	static const char *good[] = {
		"{}", "[]", "{\"a\":[1,-2,3.5e-3,true,false,null,\"\\u00e9\"]}\n", " 0 ",
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
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_numbers_valid),
		cmocka_unit_test(test_numbers_large_integral),
		cmocka_unit_test(test_nesting_commas),
		cmocka_unit_test(test_reuse),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
