// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "diag.h"
#include "probe.h"

const char *probe_kind_name(enum probe_kind kind)
{
	switch (kind) {
	case PROBE_TRACEPOINT: return "tracepoint";
	case PROBE_FENTRY: return "fentry";
	case PROBE_RAW_TRACEPOINT: return "raw tracepoint";
	default: return "kprobe";
	}
}

/* The kernel's BTF, parsed for the fentry checks only: megabytes, freed
 * by probe_checks_done() once the checks are over. */
static struct btf *vmlinux_btf;
static bool vmlinux_tried;

static struct btf *kernel_btf(void)
{
	if (!vmlinux_tried) {
		vmlinux_tried = true;
		vmlinux_btf = btf__load_vmlinux_btf();
	}
	return vmlinux_btf;
}

void probe_checks_done(void)
{
	btf__free(vmlinux_btf);
	vmlinux_btf = NULL;
	vmlinux_tried = false;
}

/* The kernel's own ENOTSUPP, which no libc names: what a trampoline the
 * architecture cannot make answers (arm64 before ftrace direct calls, 6.1
 * among them: fentry programs load, and no kernel function takes one). */
#define KERNEL_ENOTSUPP 524

static const char *kernel_strerror(int err)
{
	return err == KERNEL_ENOTSUPP ? "not supported by this kernel (ENOTSUPP)" : strerror(err);
}

/* Trampolines can be compiled in and still refused, at load (EPERM under
 * some security policies) or only at attach (ENOTSUPP where the arch has
 * no trampoline for a kernel function): only a real load and attach of a
 * minimal fentry program tells. It runs for the instant between the two
 * (it returns 0 and touches nothing). */
static bool fentry_try(int btf_id, const char *target, char *why, size_t len)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = BPF_TRACE_FENTRY,
		    .attach_btf_id = (__u32)btf_id);
	int fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "fentry_probe", "GPL", insns, 2, &opts);
	int link, err;

	if (fd < 0) {
		snprintf(why, len, "fentry programs refused by this kernel (%s)", kernel_strerror(errno));
		return false;
	}
	link = bpf_raw_tracepoint_open(NULL, fd);
	err = errno;
	close(fd);
	if (link >= 0) {
		close(link);
		return true;
	}
	if (err == KERNEL_ENOTSUPP)
		snprintf(why, len, "fentry on %s cannot attach: no trampoline for kernel "
			 "functions on this kernel (ENOTSUPP)", target);
	else
		snprintf(why, len, "fentry on %s cannot attach (%s)", target, strerror(err));
	return false;
}

/* Once a function: a tool asks for its entry and its return, and --check
 * again, and each try patches the kernel's text twice (and its detach
 * may wait for RCU grace periods). */
static bool fentry_works(int btf_id, const char *target, char *why, size_t len)
{
	static struct { int id; bool ok; char why[256]; } seen[8];
	static size_t nseen;

	for (size_t i = 0; i < nseen; i++)
		if (seen[i].id == btf_id) {
			snprintf(why, len, "%s", seen[i].why);
			return seen[i].ok;
		}
	if (nseen == sizeof(seen) / sizeof(seen[0]))
		return fentry_try(btf_id, target, why, len);
	seen[nseen].id = btf_id;
	seen[nseen].why[0] = '\0';
	seen[nseen].ok = fentry_try(btf_id, target, seen[nseen].why, sizeof(seen[nseen].why));
	snprintf(why, len, "%s", seen[nseen].why);
	return seen[nseen++].ok;
}

static bool kprobes_supported(void)
{
	return access("/sys/bus/event_source/devices/kprobe/type", R_OK) == 0 ||
	       access(TRACEFS_PATH "/kprobe_events", R_OK) == 0;
}

static bool kernel_symbol(const char *name)
{
	char line[256], sym[128];
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %*s %127s", sym) == 1 && !strcmp(sym, name);
	fclose(f);
	return found;
}

/* Attaching reads the id: open() it, not access(), which judges by the real
 * uid without capabilities and so refuses a user given cap_dac_read_search. */
int probe_tracepoint_access(const char *category_name, char *path, size_t len)
{
	int fd;

	snprintf(path, len, TRACEFS_PATH "/events/%s/id", category_name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

bool probe_available(const struct probe *p, char *why, size_t len)
{
	char path[256];
	int id, err;

	switch (p->kind) {
	case PROBE_TRACEPOINT:
	case PROBE_RAW_TRACEPOINT:	/* the same event: tracefs lists it */
		err = probe_tracepoint_access(p->target, path, sizeof(path));
		if (!err)
			return true;
		if (err == EACCES || err == EPERM)
			diag_denied(path, err, why, len);
		else if (err == ENOENT || err == ENOTDIR)
			snprintf(why, len, "tracepoint %s does not exist on this kernel",
				 p->target);
		else
			snprintf(why, len, "cannot read %s: %s", path, strerror(err));
		return false;
	case PROBE_FENTRY:
		if (!kernel_btf()) {
			snprintf(why, len, "fentry needs kernel BTF (%s)", KERNEL_BTF_PATH);
			return false;
		}
		id = btf__find_by_name_kind(kernel_btf(), p->target, BTF_KIND_FUNC);
		if (id < 0) {
			snprintf(why, len, "function %s is not in the kernel BTF", p->target);
			return false;
		}
		return fentry_works(id, p->target, why, len);
	case PROBE_KPROBE:
		if (!kprobes_supported()) {
			snprintf(why, len, "this kernel has no kprobes (CONFIG_KPROBES)");
			return false;
		}
		if (!kernel_symbol(p->target)) {
			snprintf(why, len, "function %s is not in /proc/kallsyms", p->target);
			return false;
		}
		return true;
	}
	return false;
}

static void describe(const struct probe *p, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s", probe_kind_name(p->kind), p->target);
}

static bool event_wanted(const struct tool *t, const char *event)
{
	return !t->wants || t->wants(event);
}

static bool first_of_event(const struct tool *t, int i)
{
	for (int j = 0; j < i; j++)
		if (!strcmp(t->probes[j].event, t->probes[i].event))
			return false;
	return true;
}

static int select_event(const struct tool *t, int only_kind, struct probe_set *ps, int first)
{
	char why[512] = "", tried[1024] = "", name[128], desc[160];
	const char *event = t->probes[first].event;
	const char *kind = only_kind >= 0 ? probe_kind_name((enum probe_kind)only_kind) : "";
	bool fallback = false, has_kind = false;

	snprintf(name, sizeof(name), "probe %s", event);
	for (int i = first; i < t->nprobes; i++) {
		const struct probe *p = &t->probes[i];

		if (strcmp(p->event, event))
			continue;
		describe(p, desc, sizeof(desc));
		if (only_kind >= 0 && p->kind != (enum probe_kind)only_kind) {
			snprintf(tried + strlen(tried), sizeof(tried) - strlen(tried), "%s%s not allowed by --probe",
				 tried[0] ? "; " : "", desc);
			fallback = true;
			continue;
		}
		has_kind = true;
		if (probe_available(p, why, sizeof(why))) {
			ps->chosen[i] = true;
			if (fallback)
				check_row(name, CHECK_FALLBACK, "%s (%s)", desc, tried);
			else
				check_row(name, CHECK_OK, "%s", desc);
			return 0;
		}
		snprintf(tried + strlen(tried), sizeof(tried) - strlen(tried), "%s%s",
			 tried[0] ? "; " : "", why);
		fallback = true;
	}
	/* Absent here (a syscall this architecture lacks), or with --probe
	 * absent in that kind: the event may be, whatever --probe says. */
	if (t->probes[first].optional) {
		check_row(name, CHECK_FALLBACK, "skipped: %s", tried);
		return 0;
	}
	if (only_kind >= 0 && !has_kind) {
		check_reason("no %s probe for '%s' (--probe %s); see --check", kind, event, kind);
		check_row(name, CHECK_MISSING, "%s; no %s probe for it", tried, kind);
	} else {
		check_reason("%s; no other probe for '%s' works here (see --check)", tried, event);
		check_row(name, CHECK_MISSING, "%s", tried);
	}
	return -1;
}

/* Some wanted event of @t can be observed by a probe of @kind; with
 * @event, that event. */
static bool kind_offered(const struct tool *t, int kind, const char *event)
{
	for (int i = 0; i < t->nprobes; i++)
		if ((int)t->probes[i].kind == kind && event_wanted(t, t->probes[i].event) &&
		    (!event || !strcmp(t->probes[i].event, event)))
			return true;
	return false;
}

int probes_select(const struct tool *t, int only_kind, struct probe_set *ps)
{
	/* --probe pins the events that have a probe of that kind; the others
	 * (a tracepoint with no alternative) keep their one way. A tool with
	 * no probe of that kind at all is an error for each event. */
	bool pins_some = only_kind >= 0 && kind_offered(t, only_kind, NULL);
	int err = 0;

	for (int i = 0; i < t->nprobes && i < MAX_PROBES; i++) {
		const char *event = t->probes[i].event;

		if (!first_of_event(t, i) || !event_wanted(t, event))
			continue;
		err |= select_event(t, pins_some && !kind_offered(t, only_kind, event) ? -1 : only_kind,
				    ps, i);
	}
	return err;
}

/* When an event these options do not need is used: the exit program of
 * bpf/start.bpf.h by the store of this kernel, not (only) by options. */
static const char *used_when(const char *event)
{
	return strcmp(event, START_EXIT_EVENT) ? "with other options" :
		"without task storage, or with options that need it";
}

/* --check: an event these options do not need, listed all the same (the
 * user asks what the tool may attach); its absence fails nothing. */
static void list_unwanted(const struct tool *t, int only_kind, int first)
{
	char why[512] = "", name[128], desc[160];
	const char *event = t->probes[first].event;
	bool of_kind = false;

	/* --probe KIND pins the events that have a probe of that kind. */
	for (int i = first; i < t->nprobes; i++)
		of_kind |= !strcmp(t->probes[i].event, event) && (int)t->probes[i].kind == only_kind;
	if (!of_kind)
		only_kind = -1;
	snprintf(name, sizeof(name), "probe %s", event);
	for (int i = first; i < t->nprobes; i++) {
		const struct probe *p = &t->probes[i];

		if (strcmp(p->event, event) || (only_kind >= 0 && p->kind != (enum probe_kind)only_kind))
			continue;
		describe(p, desc, sizeof(desc));
		if (probe_available(p, why, sizeof(why))) {
			check_row(name, CHECK_OK, "%s (used %s)", desc, used_when(event));
			return;
		}
	}
	check_row(name, CHECK_FALLBACK, "%s%sused only %s",
		  why[0] ? why : "", why[0] ? "; " : "", used_when(event));
}

void probes_list_unwanted(const struct tool *t, int only_kind)
{
	for (int i = 0; i < t->nprobes && i < MAX_PROBES; i++)
		if (first_of_event(t, i) && !event_wanted(t, t->probes[i].event))
			list_unwanted(t, only_kind, i);
}

int probe_autoload(struct bpf_object *obj, const char *name, bool load)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, name);

	if (!prog) {
		diag_error("internal error: no BPF program '%s'", name);
		return -ENOENT;
	}
	bpf_program__set_autoload(prog, load);
	return 0;
}

int probes_autoload(const struct tool *t, const struct probe_set *ps, struct bpf_object *obj)
{
	for (int i = 0; i < t->nprobes; i++)
		if (probe_autoload(obj, t->probes[i].prog, ps->chosen[i]))
			return -ENOENT;
	return 0;
}

struct bpf_link *probe_attach(struct bpf_object *obj, const char *prog, enum probe_kind kind, const char *target)
{
	struct bpf_link *link = bpf_program__attach(bpf_object__find_program_by_name(obj, prog));
	char msg[128];
	int err;

	if (link)
		return link;
	err = errno;
	if (err == KERNEL_ENOTSUPP)
		snprintf(msg, sizeof(msg), "%s", kernel_strerror(err));
	else
		libbpf_strerror(-err, msg, sizeof(msg));
	/* The kernel checks context reads against the record at attach. */
	diag_error("cannot attach %s %s: %s%s", probe_kind_name(kind), target, msg,
		   kind == PROBE_TRACEPOINT && err == EACCES ?
		   " (the program reads past this tracepoint's record)" : "");
	return NULL;
}

int probes_attach(const struct tool *t, struct probe_set *ps, struct bpf_object *obj)
{
	/* Last to first: a tool lists an operation's start before its end,
	 * so every end is in place before the first start is recorded, and
	 * the files the attach itself reads are never half-timed. */
	for (int i = t->nprobes - 1; i >= 0; i--) {
		const struct probe *p = &t->probes[i];

		if (ps->chosen[i] && !(ps->links[i] = probe_attach(obj, p->prog, p->kind, p->target)))
			return -1;
	}
	return 0;
}

/* TRACETOOLS_BPF_ATOMICS=0 in the environment: the programs built
 * without BPF atomics, whatever this kernel has, to test them here. */
static bool atomics_forced_off(void)
{
	const char *env = getenv("TRACETOOLS_BPF_ATOMICS");

	return env && !strcmp(env, "0");
}

/* BPF atomics beyond the add (BPF_ATOMIC: fetch-and-add, compare-and-swap,
 * Linux 5.12): the programs' histograms, filters and in-flight tables use
 * them. A kernel before refuses every program holding one, reached or
 * not ("BPF_STX uses reserved fields", EINVAL), so only a load of one
 * tells: a socket filter doing both on its stack. Asked once. */
bool probe_bpf_atomics(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_DW | BPF_MEM, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1, .off = -8 },
		{ .code = BPF_STX | BPF_DW | BPF_ATOMIC, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1,
		  .off = -8, .imm = BPF_ADD | BPF_FETCH },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_STX | BPF_DW | BPF_ATOMIC, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1,
		  .off = -8, .imm = BPF_CMPXCHG },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static int works = -1;

	if (works < 0 && atomics_forced_off())
		works = 0;
	if (works < 0) {
		int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "atomics", "GPL", insns,
				       sizeof(insns) / sizeof(insns[0]), NULL);

		/* The verifier refuses with EINVAL; a JIT without them (arm64
		 * before 5.18, with CONFIG_BPF_JIT_ALWAYS_ON) with ENOTSUPP
		 * (524). Any other error (EPERM: no privilege, an LSM) says
		 * nothing of atomics, and the tool's own load will name it. */
		works = fd >= 0 || (fd != -EINVAL && fd != -524);
		if (fd >= 0)
			close(fd);
	}
	return works;
}

void check_bpf_atomics(void)
{
	static const char *const without =
		"the programs built without them: per-key max and min may miss a race; see README, Kernels";

	if (probe_bpf_atomics())
		check_row("BPF atomics", CHECK_OK, "fetch-and-add, compare-and-swap");
	else if (atomics_forced_off())
		check_row("BPF atomics", CHECK_FALLBACK, "TRACETOOLS_BPF_ATOMICS=0: %s", without);
	else
		check_row("BPF atomics", CHECK_FALLBACK, "only add (Linux 5.12+ has more): %s", without);
}

/* TRACETOOLS_RAW_TP_NESTS=1: as if raw tracepoint programs could nest,
 * whatever the kernel, to test the adds that suit it here. */
static bool raw_tp_nests_forced(void)
{
	const char *env = getenv("TRACETOOLS_RAW_TP_NESTS");

	return env && !strcmp(env, "1");
}

/* Before 6.1 (05b24ff9b2cf) the kernel runs a raw tracepoint's program
 * again on a CPU where it is already running, from an interrupt. Some
 * stable kernels took the fix later, which nothing cheap tells apart: so
 * every kernel before 6.1, and one whose release cannot be read, counts
 * as one where they nest (the cost: atomic adds, where plain ones would
 * do). */
bool probe_raw_tp_nests(void)
{
	struct utsname u;
	unsigned int major, minor;

	if (raw_tp_nests_forced())
		return true;
	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return true;
	return major < 6 || (major == 6 && minor < 1);
}

void check_raw_tp_nests(void)
{
	static const char *const how =
		"a raw tracepoint's program can interrupt itself on a CPU: the per-CPU histogram "
		"takes atomic adds";

	if (!probe_raw_tp_nests())
		check_row("program nesting", CHECK_OK, "raw tracepoint programs do not nest (Linux 6.1+)");
	else if (raw_tp_nests_forced())
		check_row("program nesting", CHECK_FALLBACK, "TRACETOOLS_RAW_TP_NESTS=1: %s", how);
	else
		check_row("program nesting", CHECK_FALLBACK, "before Linux 6.1, %s", how);
}

static bool noatomics_wanted;

void tool_use_noatomics(void)
{
	noatomics_wanted = true;
}

bool tool_noatomics(void)
{
	return noatomics_wanted || !probe_bpf_atomics();
}

/* Called by each tool's skeleton (bpf/skeleton.sh) as it opens. */
const void *tool_elf_bytes(const void *(*bytes)(size_t *sz), const void *(*noatomics)(size_t *sz),
			   size_t *sz)
{
	return tool_noatomics() ? noatomics(sz) : bytes(sz);
}

void start_store_unused(struct bpf_map *task, struct bpf_map *tid, bool task_storage)
{
	if (task_storage)
		bpf_map__set_max_entries(tid, (__u32)libbpf_num_possible_cpus());
	else
		bpf_map__set_autocreate(task, false);
}

/* Asked of the kernel once: the probe selection and features() both ask. */
static bool task_storage_works(void)
{
	static int works = -1;

	if (works < 0)
		works = diag_btf_present() &&
			libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1 &&
			libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_get_current_task_btf, NULL) == 1 &&
			libbpf_probe_bpf_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_task_storage_get, NULL) == 1;
	return works;
}

bool start_store_fallback(void)
{
	return !task_storage_works();
}

bool probe_task_storage(void)
{
	bool ok = task_storage_works();

	if (ok)
		check_row("start-time store", CHECK_OK, "task storage");
	else
		check_row("start-time store", CHECK_FALLBACK,
			  "LRU hash by thread id (task storage needs kernel BTF and Linux 5.11+)");
	return ok;
}

int prog_info(const struct bpf_program *prog, struct bpf_prog_info *info)
{
	__u32 len = sizeof(*info);
	int fd = bpf_program__fd(prog);

	memset(info, 0, sizeof(*info));
	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, info, &len) ? 0 : -1;
}

unsigned long long probe_misses(const struct bpf_object *obj)
{
	unsigned long long sum = 0;
	struct bpf_program *prog;
	struct bpf_prog_info info;

	bpf_object__for_each_program(prog, obj)
		if (!prog_info(prog, &info))
			sum += info.recursion_misses;
	return sum;
}

static void *link_destroy(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

/* Each of @n links (NULLs skipped) destroyed in a thread of its own: a
 * tracepoint's perf event waits out an RCU grace period or two as it is
 * closed (70-100 ms each on 6.18), and the waits of threads overlap
 * (opensnoop's 10 links: 520 ms to stop one after another, 280 ms so). */
void links_destroy(struct bpf_link **links, size_t n)
{
	pthread_t th[LINKS_MAX];
	bool threaded[LINKS_MAX] = { false };

	for (size_t i = 0; i < n; i++)
		if (i < LINKS_MAX && links[i])
			threaded[i] = pthread_create(&th[i], NULL, link_destroy, links[i]) == 0;
	for (size_t i = 0; i < n; i++) {
		if (i < LINKS_MAX && threaded[i])
			pthread_join(th[i], NULL);
		else
			bpf_link__destroy(links[i]);
		links[i] = NULL;
	}
}

void probes_detach(const struct tool *t, struct probe_set *ps, struct bpf_link **more, size_t n)
{
	struct bpf_link *all[LINKS_MAX];
	size_t k = 0;

	for (int i = 0; i < t->nprobes && i < MAX_PROBES; i++)
		all[k++] = ps->links[i];
	for (size_t i = 0; i < n; i++) {
		if (k < LINKS_MAX)
			all[k++] = more[i];
		else
			bpf_link__destroy(more[i]);
		more[i] = NULL;
	}
	links_destroy(all, k);
	for (int i = 0; i < t->nprobes && i < MAX_PROBES; i++)
		ps->links[i] = NULL;
}
