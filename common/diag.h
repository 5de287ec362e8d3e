/* SPDX-License-Identifier: GPL-2.0-only */
/* Environment checks and the one-line explanations of what went wrong. */
#ifndef COMMON_DIAG_H
#define COMMON_DIAG_H

#include <stdbool.h>
#include <stddef.h>

#define KERNEL_BTF_PATH "/sys/kernel/btf/vmlinux"
#define TRACEFS_PATH "/sys/kernel/tracing"

/* Print "tool: message" on stderr, one line: the message is escaped as
 * escape_text() does (common/escape.h). */
void diag_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void diag_set_tool(const char *name);

/* libbpf's log: kept in memory to explain failures, shown with -v. */
void diag_capture_libbpf(bool verbose);
/* Stop writing libbpf's log (async-signal-safe). */
void diag_log_off(void);
/* After a failed load: name the rejected program and the verifier's reason. */
void diag_load_failure(int err, bool verbose);

bool diag_privileged(char *why, size_t len);
bool diag_btf_present(void);
bool diag_can_mount(void);
/* Make sure tracefs is mounted (mounting it if allowed). */
bool diag_tracefs(char *why, size_t len);
/* "none", or the active lockdown level, which blocks reading kernel memory. */
const char *diag_lockdown(void);
/* @path (under TRACEFS_PATH) could not be read (@err: EACCES, EPERM): one
 * line naming the directory or file that keeps us out, and the fix. */
void diag_denied(const char *path, int err, char *why, size_t len);

/* Rows of --check; with print=false they are only kept for -v. */
void check_begin(bool print);
/* Returns true if no row was MISSING or FAILED. */
bool check_end(void);
/* What a normal run says when it cannot start: the first reason given
 * here, else the detail of the first MISSING or FAILED row. NULL if none. */
void check_reason(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *check_failure(void);

#endif /* COMMON_DIAG_H */
