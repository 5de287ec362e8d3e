// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/libbpf.h>
#include "diag.h"
#include "tool.h"

#ifndef SECURITYFS_MAGIC
#define SECURITYFS_MAGIC 0x73636673
#endif
#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define LOG_LINES 48
#define LOG_LINE_LEN 240

static const char *tool_name = "tool";
static bool log_verbose;
static char log_ring[LOG_LINES][LOG_LINE_LEN];
static int log_next;

void diag_set_tool(const char *name)
{
	tool_name = name;
}

void diag_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tool_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void keep_line(const char *line, size_t len)
{
	if (len >= LOG_LINE_LEN)
		len = LOG_LINE_LEN - 1;
	memcpy(log_ring[log_next % LOG_LINES], line, len);
	log_ring[log_next % LOG_LINES][len] = '\0';
	log_next++;
}

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[4096], *line, *nl;
	va_list copy;

	va_copy(copy, ap);
	vsnprintf(buf, sizeof(buf), fmt, copy);
	va_end(copy);
	for (line = buf; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl) {
			keep_line(line, strlen(line));
			break;
		}
		keep_line(line, (size_t)(nl - line));
	}
	/* Without -v failures are summarised by diag_load_failure() and friends. */
	if (log_verbose && (level != LIBBPF_DEBUG || getenv("LIBBPF_DEBUG")))
		fputs(buf, stderr);
	return 0;
}

void diag_capture_libbpf(bool verbose)
{
	log_verbose = verbose;
	libbpf_set_print(libbpf_log);
}

static const char *log_line(int back)
{
	if (back >= log_next || back >= LOG_LINES)
		return NULL;
	return log_ring[(log_next - 1 - back) % LOG_LINES];
}

void diag_load_failure(int err, bool verbose)
{
	char prog[64] = "", reason[LOG_LINE_LEN] = "", msg[128];
	const char *l, *p;
	bool in_log = false;

	/* Walk back from the newest line: the program name and the last
	 * verifier line before "-- END PROG LOAD LOG --". */
	for (int i = 0; (l = log_line(i)); i++) {
		if (strstr(l, "END PROG LOAD LOG")) {
			in_log = true;
			continue;
		}
		if (in_log && !reason[0] && *l && !strstr(l, "processed ") && !strstr(l, "verification time"))
			snprintf(reason, sizeof(reason), "%s", l);
		if (strstr(l, "BEGIN PROG LOAD LOG"))
			in_log = false;
		if (!prog[0] && (p = strstr(l, "prog '")) && strstr(l, "load")) {
			sscanf(p, "prog '%63[^']'", prog);
		}
	}
	libbpf_strerror(err, msg, sizeof(msg));
	if (prog[0] && reason[0])
		diag_error("the kernel's verifier rejected program '%s': %s%s", prog, reason,
			   verbose ? "" : " (run with -v for the verifier log)");
	else if (err == -EPERM || err == -EACCES)
		diag_error("the kernel refused to load the BPF programs (%s): lockdown=%s; "
			   "BPF may be restricted on this host", msg, diag_lockdown());
	else
		diag_error("failed to load the BPF programs: %s%s", msg,
			   verbose ? "" : " (run with -v for libbpf's log)");
}

bool diag_privileged(char *why, size_t len)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	__u64 eff;

	if (syscall(SYS_capget, &hdr, data)) {
		snprintf(why, len, "cannot read capabilities: %s", strerror(errno));
		return false;
	}
	eff = ((__u64)data[1].effective << 32) | data[0].effective;
	if (eff & (1ULL << CAP_SYS_ADMIN)) {
		snprintf(why, len, "CAP_SYS_ADMIN");
		return true;
	}
	if ((eff & (1ULL << CAP_BPF)) && (eff & (1ULL << CAP_PERFMON))) {
		snprintf(why, len, "CAP_BPF and CAP_PERFMON");
		return true;
	}
	snprintf(why, len, "needs root (or CAP_BPF and CAP_PERFMON); try: sudo %s", tool_name);
	return false;
}

bool diag_btf_present(void)
{
	return access(KERNEL_BTF_PATH, R_OK) == 0;
}

bool diag_can_mount(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	return !syscall(SYS_capget, &hdr, data) && (data[0].effective & (1U << CAP_SYS_ADMIN));
}

static bool tracefs_mounted(void)
{
	struct statfs sfs;

	return statfs(TRACEFS_PATH, &sfs) == 0 && sfs.f_type == TRACEFS_MAGIC;
}

bool diag_tracefs(char *why, size_t len)
{
	if (tracefs_mounted()) {
		snprintf(why, len, "%s", TRACEFS_PATH);
		return true;
	}
	if (diag_can_mount() && mount("tracefs", TRACEFS_PATH, "tracefs", 0, NULL) == 0) {
		snprintf(why, len, "%s (mounted it)", TRACEFS_PATH);
		return true;
	}
	snprintf(why, len, "tracefs is not mounted at %s and could not be mounted (%s); "
		 "mount it as root: mount -t tracefs tracefs %s",
		 TRACEFS_PATH, strerror(errno ? errno : EPERM), TRACEFS_PATH);
	return false;
}

const char *diag_lockdown(void)
{
	static char level[32];
	char buf[128], *open_b, *close_b;
	FILE *f = fopen("/sys/kernel/security/lockdown", "r");
	struct statfs sfs;

	/* No file on securityfs: no lockdown LSM. No securityfs: cannot tell. */
	if (!f)
		return statfs("/sys/kernel/security", &sfs) == 0 && sfs.f_type == SECURITYFS_MAGIC ?
		       "none" : "unknown (securityfs not mounted)";
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	open_b = strchr(buf, '[');
	close_b = open_b ? strchr(open_b, ']') : NULL;
	if (!open_b || !close_b)
		return "none";
	snprintf(level, sizeof(level), "%.*s", (int)(close_b - open_b - 1), open_b + 1);
	return level;
}

bool diag_tracepoint_exists(const char *category_name)
{
	char path[256];

	snprintf(path, sizeof(path), TRACEFS_PATH "/events/%s/id", category_name);
	return access(path, R_OK) == 0;
}

static bool check_printing;
static bool check_failed;
static char first_failure[512];

static const char *status_name(enum check_status st)
{
	switch (st) {
	case CHECK_OK: return "ok";
	case CHECK_FALLBACK: return "fallback";
	case CHECK_MISSING: return "missing";
	default: return "FAILED";
	}
}

void check_begin(bool print)
{
	check_printing = print;
	check_failed = false;
	first_failure[0] = '\0';
	if (print)
		printf("%-28s %-9s %s\n", "CHECK", "STATUS", "DETAIL");
}

void check_row(const char *what, enum check_status st, const char *fmt, ...)
{
	char detail[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (st == CHECK_MISSING || st == CHECK_FAILED) {
		check_failed = true;
		if (!first_failure[0])
			snprintf(first_failure, sizeof(first_failure), "%s", detail);
	}
	if (check_printing)
		printf("%-28s %-9s %s\n", what, status_name(st), detail);
	else if (log_verbose)
		fprintf(stderr, "%s: %s: %s (%s)\n", tool_name, what, status_name(st), detail);
}

bool check_end(void)
{
	return !check_failed;
}

void check_reason(const char *fmt, ...)
{
	va_list ap;

	if (first_failure[0])
		return;
	va_start(ap, fmt);
	vsnprintf(first_failure, sizeof(first_failure), fmt, ap);
	va_end(ap);
}

const char *check_failure(void)
{
	return first_failure[0] ? first_failure : NULL;
}
