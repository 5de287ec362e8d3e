// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/libbpf.h>
#include "diag.h"
#include "escape.h"
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
#define DIAG_MSG_LEN 4096

static const char *tool_name = "tool";
static volatile sig_atomic_t log_verbose;
static char log_ring[LOG_LINES][LOG_LINE_LEN];
static int log_next;

void diag_set_tool(const char *name)
{
	tool_name = name;
}

/* Messages echo user input and names from the traced system: escaped,
 * so that they stay one line and cannot forge one (-p $'1\nreadlat: x'). */
void diag_error(const char *fmt, ...)
{
	char msg[DIAG_MSG_LEN];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: ", tool_name);
	escape_text(stderr, msg, sizeof(msg));
	if (n >= (int)sizeof(msg))
		fputs("...", stderr);
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

/* A stop during start-up: nothing more of libbpf's log is written, so
 * that a full stderr (a stopped pager) cannot hold the tool. Called from
 * a signal handler. */
void diag_log_off(void)
{
	log_verbose = 0;
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

/* Before Linux 5.11 the kernel charges BPF memory to RLIMIT_MEMLOCK;
 * libbpf then raises the limit to infinity before loading, which takes
 * CAP_SYS_RESOURCE beyond the hard limit. A limit still finite after a
 * refusal, on a kernel without bpf_ktime_get_coarse_ns (5.11, with the
 * memory cgroup's accounting: libbpf's own test), is why. */
static bool memlock_refused(unsigned long long *kib)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return false;
	*kib = rl.rlim_cur >> 10;
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_SOCKET_FILTER, BPF_FUNC_ktime_get_coarse_ns, NULL) != 1;
}

void diag_load_failure(int err, bool verbose)
{
	unsigned long long memlock_kib;
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
		if (!prog[0] && (p = strstr(l, "prog '")) && strstr(l, "load"))
			(void)sscanf(p, "prog '%63[^']'", prog);	/* or prog stays "" */
	}
	libbpf_strerror(err, msg, sizeof(msg));
	if (prog[0] && reason[0])
		diag_error("the kernel's verifier rejected program '%s': %s%s", prog, reason,
			   verbose ? "" : " (run with -v for the verifier log)");
	else if (err == -EPERM && memlock_refused(&memlock_kib))
		diag_error("the kernel refused to load the BPF programs (%s): it counts them against "
			   "RLIMIT_MEMLOCK (before Linux 5.11), here %llu KiB, which only CAP_SYS_RESOURCE may "
			   "raise: ulimit -l unlimited as root, or LimitMEMLOCK=infinity in a unit",
			   msg, memlock_kib);
	else if (err == -EPERM || err == -EACCES)
		diag_error("the kernel refused to load the BPF programs (%s): lockdown=%s; "
			   "BPF may be restricted on this host", msg, diag_lockdown());
	else
		diag_error("failed to load the BPF programs: %s%s", msg,
			   verbose ? "" : " (run with -v for libbpf's log)");
}

static __u64 effective_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return 0;
	return ((__u64)data[1].effective << 32) | data[0].effective;
}

#define HAS(eff, cap) (((eff) >> (cap)) & 1)

/* What a user other than root needs (tracefs is root's, mode 0700). */
#define NONROOT_CAPS "CAP_BPF, CAP_PERFMON and CAP_DAC_READ_SEARCH"
#define NONROOT_SETCAP "cap_bpf,cap_perfmon,cap_dac_read_search+ep"

/* Append cap's name to @list ("A", "A and B", "A, B and C") if @want says
 * whether eff has it. */
static void name_cap(char *list, size_t len, __u64 eff, int cap, const char *name, bool want,
		     int *n, int total)
{
	size_t used = strlen(list);

	if (HAS(eff, cap) != want)
		return;
	snprintf(list + used, len - used, "%s%s", !*n ? "" : *n + 1 == total ? " and " : ", ", name);
	(*n)++;
}

static void name_caps(char *list, size_t len, __u64 eff, bool want)
{
	static const struct { int cap; const char *name; } caps[] = {
		{ CAP_BPF, "CAP_BPF" }, { CAP_PERFMON, "CAP_PERFMON" },
		{ CAP_DAC_READ_SEARCH, "CAP_DAC_READ_SEARCH" },
	};
	int total = 0, n = 0;

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		total += HAS(eff, caps[i].cap) == want;
	list[0] = '\0';
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		name_cap(list, len, eff, caps[i].cap, caps[i].name, want, &n, total);
}

bool diag_privileged(char *why, size_t len)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	char has[96], lacks[96];
	__u64 eff;

	if (syscall(SYS_capget, &hdr, data)) {
		snprintf(why, len, "cannot read capabilities: %s", strerror(errno));
		return false;
	}
	eff = ((__u64)data[1].effective << 32) | data[0].effective;
	if (HAS(eff, CAP_SYS_ADMIN)) {
		snprintf(why, len, "CAP_SYS_ADMIN");
		return true;
	}
	name_caps(has, sizeof(has), eff, true);
	name_caps(lacks, sizeof(lacks), eff, false);
	/* BPF and perf events need these two; reading tracefs is checked on
	 * its own row, as a user may have been given access to it. */
	if (HAS(eff, CAP_BPF) && HAS(eff, CAP_PERFMON)) {
		if (lacks[0] && geteuid() != 0)
			snprintf(why, len, "%s; without %s tracefs must be readable by uid %u",
				 has, lacks, (unsigned int)geteuid());
		else
			snprintf(why, len, "%s", has);
		return true;
	}
	if (has[0])
		snprintf(why, len, "has %s but lacks %s: needs root (or " NONROOT_CAPS "); try: sudo %s",
			 has, lacks, tool_name);
	else
		snprintf(why, len, "needs root (or " NONROOT_CAPS "); try: sudo %s", tool_name);
	return false;
}

/* Explain why @path cannot be read: which directory or file on the way
 * keeps us out, and its mode. */
void diag_denied(const char *path, int err, char *why, size_t len)
{
	char part[256], exe[256], blocker[320] = "";
	__u64 eff = effective_caps();
	struct stat st;
	ssize_t n;
	size_t end;

	/* Walk down from tracefs: the first part we may not enter (or read). */
	for (end = strlen(TRACEFS_PATH); end <= strlen(path) && end < sizeof(part); end++) {
		if (path[end] != '/' && path[end] != '\0')
			continue;
		snprintf(part, sizeof(part), "%.*s", (int)end, path);
		if (stat(part, &st))
			break;
		if (faccessat(AT_FDCWD, part, path[end] ? X_OK : R_OK, AT_EACCESS)) {
			snprintf(blocker, sizeof(blocker), ": %s%smode %04o, owner %u:%u",
				 path[end] ? part : "", path[end] ? " is " : "",
				 (unsigned int)(st.st_mode & 07777), (unsigned int)st.st_uid,
				 (unsigned int)st.st_gid);
			break;
		}
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (HAS(eff, CAP_DAC_READ_SEARCH) || HAS(eff, CAP_DAC_OVERRIDE))
		snprintf(why, len, "cannot read %s (%s%s): a security policy (LSM) forbids it",
			 path, err == EACCES ? "permission denied" : strerror(err), blocker);
	else
		snprintf(why, len, "cannot read %s (%s%s): run as root, or grant cap_dac_read_search "
			 "as well (setcap " NONROOT_SETCAP " %s)", path,
			 err == EACCES ? "permission denied" : strerror(err), blocker,
			 exe[0] ? exe : tool_name);
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

/* Mounted is not enough: tracefs is root's, mode 0700, and the tracepoint
 * ids in it are what attaching needs. */
static bool tracefs_readable(char *why, size_t len)
{
	int fd = open(TRACEFS_PATH "/events", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return true;
	}
	if (errno == EACCES || errno == EPERM)
		diag_denied(TRACEFS_PATH "/events", errno, why, len);
	else
		snprintf(why, len, "cannot open %s/events: %s", TRACEFS_PATH, strerror(errno));
	return false;
}

bool diag_tracefs(char *why, size_t len)
{
	if (tracefs_mounted()) {
		snprintf(why, len, "%s", TRACEFS_PATH);
		return tracefs_readable(why, len);
	}
	/* Without CAP_SYS_ADMIN mount() is not tried: the reason is that,
	 * not whatever errno the statfs() above left. */
	int err = EPERM;

	if (diag_can_mount()) {
		if (mount("tracefs", TRACEFS_PATH, "tracefs", 0, NULL) == 0) {
			snprintf(why, len, "%s (mounted it)", TRACEFS_PATH);
			return tracefs_readable(why, len);
		}
		err = errno;
	}
	snprintf(why, len, "tracefs is not mounted at %s and could not be mounted (%s); "
		 "mount it as root: mount -t tracefs tracefs %s",
		 TRACEFS_PATH, strerror(err), TRACEFS_PATH);
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

static bool check_printing;
static bool check_failed;
static char first_failure[1024];

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
	char detail[1024];
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
