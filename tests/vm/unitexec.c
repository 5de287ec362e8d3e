// SPDX-License-Identifier: GPL-2.0-only
/*
 * unitexec UNIT PROGRAM [ARG...]: run PROGRAM as systemd would run a root
 * service of UNIT, in what decides whether BPF loads: the unit's
 * LimitMEMLOCK= (unset: the limit this process has, as systemd passes
 * its own default on), then its CapabilityBoundingSet= (every other
 * capability dropped from the bounding set, so that root's exec keeps
 * only those) and NoNewPrivileges=. The guest has no systemd; its tests
 * run the shipped units' settings through this. Static: the guest has no
 * libraries. Exit 2 for a unit it cannot read or a setting it cannot
 * apply, else PROGRAM's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <linux/capability.h>

#define LINE_MAX_LEN 1024

/* The capabilities a unit names, by their names in capabilities(7). */
static const char *const cap_names[] = {
	[CAP_CHOWN] = "CAP_CHOWN", [CAP_DAC_OVERRIDE] = "CAP_DAC_OVERRIDE",
	[CAP_DAC_READ_SEARCH] = "CAP_DAC_READ_SEARCH", [CAP_FOWNER] = "CAP_FOWNER",
	[CAP_FSETID] = "CAP_FSETID", [CAP_KILL] = "CAP_KILL", [CAP_SETGID] = "CAP_SETGID",
	[CAP_SETUID] = "CAP_SETUID", [CAP_SETPCAP] = "CAP_SETPCAP",
	[CAP_LINUX_IMMUTABLE] = "CAP_LINUX_IMMUTABLE",
	[CAP_NET_BIND_SERVICE] = "CAP_NET_BIND_SERVICE", [CAP_NET_BROADCAST] = "CAP_NET_BROADCAST",
	[CAP_NET_ADMIN] = "CAP_NET_ADMIN", [CAP_NET_RAW] = "CAP_NET_RAW",
	[CAP_IPC_LOCK] = "CAP_IPC_LOCK", [CAP_IPC_OWNER] = "CAP_IPC_OWNER",
	[CAP_SYS_MODULE] = "CAP_SYS_MODULE", [CAP_SYS_RAWIO] = "CAP_SYS_RAWIO",
	[CAP_SYS_CHROOT] = "CAP_SYS_CHROOT", [CAP_SYS_PTRACE] = "CAP_SYS_PTRACE",
	[CAP_SYS_PACCT] = "CAP_SYS_PACCT", [CAP_SYS_ADMIN] = "CAP_SYS_ADMIN",
	[CAP_SYS_BOOT] = "CAP_SYS_BOOT", [CAP_SYS_NICE] = "CAP_SYS_NICE",
	[CAP_SYS_RESOURCE] = "CAP_SYS_RESOURCE", [CAP_SYS_TIME] = "CAP_SYS_TIME",
	[CAP_SYS_TTY_CONFIG] = "CAP_SYS_TTY_CONFIG", [CAP_MKNOD] = "CAP_MKNOD",
	[CAP_LEASE] = "CAP_LEASE", [CAP_AUDIT_WRITE] = "CAP_AUDIT_WRITE",
	[CAP_AUDIT_CONTROL] = "CAP_AUDIT_CONTROL", [CAP_SETFCAP] = "CAP_SETFCAP",
	[CAP_MAC_OVERRIDE] = "CAP_MAC_OVERRIDE", [CAP_MAC_ADMIN] = "CAP_MAC_ADMIN",
	[CAP_SYSLOG] = "CAP_SYSLOG", [CAP_WAKE_ALARM] = "CAP_WAKE_ALARM",
	[CAP_BLOCK_SUSPEND] = "CAP_BLOCK_SUSPEND", [CAP_AUDIT_READ] = "CAP_AUDIT_READ",
	[CAP_PERFMON] = "CAP_PERFMON", [CAP_BPF] = "CAP_BPF",
	[CAP_CHECKPOINT_RESTORE] = "CAP_CHECKPOINT_RESTORE",
};
#define NCAPS (sizeof(cap_names) / sizeof(cap_names[0]))

struct unit {
	char memlock[64];	/* "" if unset */
	char caps[LINE_MAX_LEN];	/* "" if unset: the bounding set is left */
	int has_caps;
	int no_new_privs;
};

static void die(const char *what, const char *arg)
{
	fprintf(stderr, "unitexec: %s: %s\n", what, arg);
	exit(2);
}

static void setting(char *line, const char *key, char *val, size_t len, int *seen)
{
	size_t n = strlen(key);

	if (strncmp(line, key, n) || line[n] != '=')
		return;
	line[strcspn(line, "\n")] = '\0';
	snprintf(val, len, "%s", line + n + 1);
	if (seen)
		*seen = 1;
}

static void read_unit(const char *path, struct unit *u)
{
	char line[LINE_MAX_LEN], nnp[16] = "";
	FILE *f = fopen(path, "r");

	if (!f)
		die(path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		setting(line, "LimitMEMLOCK", u->memlock, sizeof(u->memlock), NULL);
		setting(line, "CapabilityBoundingSet", u->caps, sizeof(u->caps), &u->has_caps);
		setting(line, "NoNewPrivileges", nnp, sizeof(nnp), NULL);
	}
	fclose(f);
	u->no_new_privs = !strcmp(nnp, "yes") || !strcmp(nnp, "true");
}

/* "infinity", or bytes with an optional K, M or G (of 1024, as systemd). */
static rlim_t parse_limit(const char *s)
{
	unsigned long long v;
	char *end;

	if (!strcmp(s, "infinity"))
		return RLIM_INFINITY;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		die("LimitMEMLOCK= not understood", s);
	switch (*end) {
	case 'K': v <<= 10; end++; break;
	case 'M': v <<= 20; end++; break;
	case 'G': v <<= 30; end++; break;
	}
	if (*end)
		die("LimitMEMLOCK= not understood", s);
	return v;
}

static int named(const char *list, const char *cap)
{
	char copy[LINE_MAX_LEN], *save, *w;

	snprintf(copy, sizeof(copy), "%s", list);
	for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		if (!strcasecmp(w, cap))
			return 1;
	return 0;
}

static void drop_bounding(const char *list)
{
	for (unsigned long cap = 0; cap < NCAPS; cap++) {
		if (!cap_names[cap] || named(list, cap_names[cap]))
			continue;
		/* EINVAL: a capability this kernel does not have. */
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL)
			die(cap_names[cap], strerror(errno));
	}
}

int main(int argc, char **argv)
{
	struct unit u = { 0 };

	if (argc < 3) {
		fprintf(stderr, "usage: unitexec UNIT PROGRAM [ARG...]\n");
		return 2;
	}
	read_unit(argv[1], &u);
	/* As systemd does: the limits first, while the process may still
	 * raise them, then the capabilities. */
	if (u.memlock[0]) {
		struct rlimit rl = { parse_limit(u.memlock), parse_limit(u.memlock) };

		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			die("setrlimit(RLIMIT_MEMLOCK)", strerror(errno));
	}
	if (u.has_caps)
		drop_bounding(u.caps);
	if (u.no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		die("PR_SET_NO_NEW_PRIVS", strerror(errno));
	execv(argv[2], argv + 2);
	die(argv[2], strerror(errno));
}
