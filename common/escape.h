/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Escaping of every string that comes from the traced system (process
 * names, file paths, disk names) or from the user (echoed in errors),
 * before it reaches a terminal. JSON strings use the same UTF-8 decoder,
 * in json.c.
 *
 * Text rule, reversible: well-formed printable UTF-8 is written as is;
 * "\" becomes "\\"; newline, tab and CR become "\n", "\t", "\r"; every
 * other byte that is a C0 control, DEL, part of a C1 control (U+0080 to
 * U+009F) or not part of well-formed UTF-8 becomes "\xNN" (lowercase hex).
 *
 * Every function reads buf[0..len) and stops early at the first NUL, so a
 * fixed-size kernel field (char comm[16]) can be passed with its sizeof.
 */
#ifndef COMMON_ESCAPE_H
#define COMMON_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The length (1 to 4) of the well-formed UTF-8 sequence at s[0..n), its
 * code point in *cp; 0 if s[0] does not begin one (stray continuation
 * byte, overlong form, surrogate, above U+10FFFF, or cut short). */
size_t utf8_decode(const char *s, size_t n, unsigned int *cp);
/* buf[0..len), up to the first NUL, is well-formed UTF-8. */
bool utf8_valid(const char *buf, size_t len);

/* Write buf escaped to f. */
void escape_text(FILE *f, const char *buf, size_t len);
/* Write buf escaped into dst (size bytes, always NUL-terminated when size
 * > 0), truncated before an escape or a character that would not fit
 * whole. Returns the length the whole escaped text needs, as snprintf
 * does: the output was truncated if that is >= size. */
size_t escape_text_buf(char *dst, size_t size, const char *buf, size_t len);

/*
 * The same for a label value of the Prometheus text formats (OpenMetrics
 * and 0.0.4), which read \\ \" and \n as a backslash, a quote and a
 * newline: those three are written so, and become what they were; every
 * other escape of the text rule (\t, \xNN) has its backslash doubled, so
 * that Prometheus reads the characters the text output shows. Always
 * valid UTF-8, whatever the bytes.
 */
size_t escape_label_buf(char *dst, size_t size, const char *buf, size_t len);

#endif /* COMMON_ESCAPE_H */
