// SPDX-License-Identifier: GPL-2.0-only
/*
 * The life of every tool: parse -> check the environment -> choose probes
 * -> open, configure, load -> attach -> report every interval until the
 * count, the duration, a signal or the traced process ends -> final report
 * (before detaching, so it comes out fast) -> clean up.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "diag.h"
#include "probe.h"
#include "selfcost.h"
#include "tool.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#define THREAD_POLL_MS 200

/* Everything a run holds, released in one place. */
struct session {
	const struct tool *tool;
	struct run_config *rc;
	struct probe_set probes;
	struct bpf_object *obj;
	struct output out;
	int target_fd;		/* pidfd of -p / -t, or -1 */
	int cgroup_fd;
	int stats_fd;
	int epoll_fd, signal_fd, interval_fd, stop_fd, thread_poll_fd;
	bool target_gone;
};

enum wake { WAKE_NONE, WAKE_INTERVAL, WAKE_STOP, WAKE_TARGET_EXIT };

/* Set a `const volatile` global of the object before load, by name. */
static int set_rodata(struct bpf_object *obj, const char *name, const void *val, size_t size)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, ".rodata");
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	size_t map_size;
	char *data;
	int id;

	if (!map || !btf)
		return -ENOENT;
	data = (char *)bpf_map__initial_value(map, &map_size);
	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (!data || id < 0)
		return -ENOENT;
	sec = btf__type_by_id(btf, id);
	vs = btf_var_secinfos(sec);
	for (int i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *var = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, var->name_off), name))
			continue;
		if (vs->size != size || vs->offset + size > map_size)
			return -EINVAL;
		memcpy(data + vs->offset, val, size);
		return 0;
	}
	return -ENOENT;
}

static int set_filters(struct session *s)
{
	const struct run_config *rc = s->rc;
	__u32 tgid = (__u32)rc->pid, tid = (__u32)rc->tid;
	bool by_comm = rc->comm[0], by_cgroup = rc->cgroup != NULL;
	char comm[FILTER_COMM_LEN] = {};

	if (!(s->tool->shared & SHARED_FILTERS))
		return 0;
	memcpy(comm, rc->comm, sizeof(comm));
	if (set_rodata(s->obj, "filter_tgid", &tgid, sizeof(tgid)) ||
	    set_rodata(s->obj, "filter_tid", &tid, sizeof(tid)) ||
	    set_rodata(s->obj, "filter_by_comm", &by_comm, sizeof(by_comm)) ||
	    set_rodata(s->obj, "filter_comm", comm, sizeof(comm)) ||
	    set_rodata(s->obj, "filter_by_cgroup", &by_cgroup, sizeof(by_cgroup))) {
		diag_error("internal error: the BPF object lacks the filter of bpf/filter.bpf.h");
		return -1;
	}
	return 0;
}

static int set_cgroup_map(struct session *s)
{
	struct bpf_map *map;
	__u32 zero = 0;

	if (s->cgroup_fd < 0)
		return 0;
	map = bpf_object__find_map_by_name(s->obj, "filter_cgroup");
	if (!map || bpf_map_update_elem(bpf_map__fd(map), &zero, &s->cgroup_fd, BPF_ANY)) {
		diag_error("cannot set the cgroup filter: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int tgid_of(pid_t tid)
{
	char path[64], line[128];
	int tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static bool thread_alive(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	return access(path, F_OK) == 0;
}

/* Pin the -p process (or -t thread) so that its exit ends the run and a
 * later process that reuses the number is never counted. */
static int open_target(struct session *s)
{
	const struct run_config *rc = s->rc;
	int tgid;

	s->target_fd = -1;
	if (rc->pid) {
		tgid = tgid_of(rc->pid);
		if (tgid > 0 && tgid != rc->pid) {
			diag_error("%d is a thread of process %d: use -t %d for that thread, or -p %d",
				   rc->pid, tgid, rc->pid, tgid);
			return -1;
		}
		s->target_fd = (int)syscall(SYS_pidfd_open, rc->pid, 0);
		if (s->target_fd >= 0)
			return 0;
		if (errno == ESRCH || tgid <= 0)
			diag_error("no process with PID %d", rc->pid);
		else
			diag_error("cannot watch process %d: %s", rc->pid, strerror(errno));
		return -1;
	}
	if (rc->tid) {
		if (!thread_alive(rc->tid)) {
			diag_error("no thread with TID %d", rc->tid);
			return -1;
		}
		/* PIDFD_THREAD needs Linux 6.9; before it, poll /proc. */
		s->target_fd = (int)syscall(SYS_pidfd_open, rc->tid, PIDFD_THREAD);
	}
	return 0;
}

static int open_cgroup(struct session *s)
{
	struct statfs sfs;

	s->cgroup_fd = -1;
	if (!s->rc->cgroup)
		return 0;
	s->cgroup_fd = open(s->rc->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->cgroup_fd < 0) {
		diag_error("cannot open cgroup %s: %s", s->rc->cgroup, strerror(errno));
		return -1;
	}
	if (fstatfs(s->cgroup_fd, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		diag_error("%s is not a cgroup v2 directory (cgroup2 is usually at /sys/fs/cgroup "
			   "or /sys/fs/cgroup/unified)", s->rc->cgroup);
		return -1;
	}
	return 0;
}

/* The checks that --check prints and a run needs; false if it cannot run. */
static bool check_environment(struct session *s)
{
	const struct tool *t = s->tool;
	char why[512];
	bool ok = true;

	if (diag_privileged(why, sizeof(why))) {
		check_row("privileges", CHECK_OK, "%s", why);
	} else {
		check_row("privileges", CHECK_FAILED, "%s", why);
		return false;
	}
	check_row("kernel lockdown", CHECK_OK, "%s", diag_lockdown());
	if (diag_btf_present()) {
		check_row("kernel BTF", CHECK_OK, "%s", KERNEL_BTF_PATH);
	} else if (s->rc->btf_path) {
		check_row("kernel BTF", CHECK_OK, "%s (--btf)", s->rc->btf_path);
	} else if (!t->needs_btf) {
		check_row("kernel BTF", CHECK_FALLBACK,
			  "%s is missing (kernel built without CONFIG_DEBUG_INFO_BTF)", KERNEL_BTF_PATH);
	} else {
		check_reason("no kernel BTF at %s: this kernel was built without "
			     "CONFIG_DEBUG_INFO_BTF; pass a BTF file for it with --btf FILE", KERNEL_BTF_PATH);
		check_row("kernel BTF", CHECK_MISSING, "%s is missing (kernel built without "
			  "CONFIG_DEBUG_INFO_BTF); pass a BTF file with --btf FILE", KERNEL_BTF_PATH);
		ok = false;
	}
	if (diag_tracefs(why, sizeof(why))) {
		check_row("tracefs", CHECK_OK, "%s", why);
	} else {
		check_row("tracefs", CHECK_MISSING, "%s", why);
		ok = false;
	}
	if (probes_select(t, s->rc->probe_kind, &s->probes))
		ok = false;
	if (t->features && t->features(s->rc))
		ok = false;
	return ok;
}

/* The one line a normal run prints when the checks say it cannot run. */
static int environment_error(void)
{
	const char *why = check_failure();

	diag_error("%s", why ? why : "this kernel lacks what the tool needs (run --check for details)");
	return EXIT_RUNTIME;
}

static struct ring_buffer *events(struct session *s)
{
	return s->tool->events ? s->tool->events() : NULL;
}

static int add_fd(struct session *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return fd < 0 ? 0 : epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
}

static int make_timer(double seconds, bool periodic)
{
	struct itimerspec its = {};
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);

	its.it_value.tv_sec = (time_t)seconds;
	its.it_value.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
		its.it_value.tv_nsec = 1;
	if (periodic)
		its.it_interval = its.it_value;
	if (fd >= 0 && timerfd_settime(fd, 0, &its, NULL)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int setup_loop(struct session *s)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	/* Output into a closed pipe (| head) shows as EPIPE: end quietly. */
	signal(SIGPIPE, SIG_IGN);
	s->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->interval_fd = s->rc->interval ? make_timer(s->rc->interval, true) : -1;
	s->stop_fd = s->rc->duration ? make_timer(s->rc->duration, false) : -1;
	s->thread_poll_fd = s->rc->tid && s->target_fd < 0 ?
			    make_timer(THREAD_POLL_MS / 1000.0, true) : -1;
	if (s->signal_fd < 0 || s->epoll_fd < 0 ||
	    add_fd(s, s->signal_fd) || add_fd(s, s->interval_fd) || add_fd(s, s->stop_fd) ||
	    add_fd(s, s->target_fd) || add_fd(s, s->thread_poll_fd) ||
	    (events(s) && add_fd(s, ring_buffer__epoll_fd(events(s))))) {
		diag_error("cannot set up the event loop: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void drain_fd(int fd)
{
	unsigned char buf[128];

	if (read(fd, buf, sizeof(buf)) < 0)
		return;
}

static enum wake wait_wake(struct session *s)
{
	struct epoll_event evs[8];
	enum wake wake = WAKE_NONE;
	int n = epoll_wait(s->epoll_fd, evs, 8, -1);

	for (int i = 0; i < n; i++) {
		int fd = evs[i].data.fd;

		if (fd == s->signal_fd || fd == s->stop_fd) {
			drain_fd(fd);
			return WAKE_STOP;
		}
		if (fd == s->target_fd ||
		    (fd == s->thread_poll_fd && (drain_fd(fd), !thread_alive(s->rc->tid))))
			return WAKE_TARGET_EXIT;
		if (fd == s->interval_fd) {
			drain_fd(fd);
			wake = WAKE_INTERVAL;
		} else if (events(s) && fd == ring_buffer__epoll_fd(events(s))) {
			ring_buffer__consume(events(s));
			fflush(s->out.f);
		}
	}
	return wake;
}

/* Report one interval; false when output can no longer be written. */
static bool report(struct session *s)
{
	/* -T heads each report; a stream of events has a time on every line. */
	if (events(s)) {
		ring_buffer__consume(events(s));
		output_now(&s->out);
	} else {
		output_stamp(&s->out);
	}
	if (s->tool->report && s->tool->report(&s->out))
		return false;
	return fflush(s->out.f) == 0 && !ferror(s->out.f);
}

static int run_loop(struct session *s)
{
	long reports = 0;

	for (;;) {
		switch (wait_wake(s)) {
		case WAKE_INTERVAL:
			if (!report(s))
				return 0;
			if (s->rc->count && ++reports >= s->rc->count)
				return 0;
			break;
		case WAKE_TARGET_EXIT:
			s->target_gone = true;
			/* fall through */
		case WAKE_STOP:
			report(s);
			return 0;
		case WAKE_NONE:
			if (ferror(s->out.f))
				return 0;
			break;
		}
	}
}

static int load_and_attach(struct session *s)
{
	const struct tool *t = s->tool;
	struct bpf_object_skeleton *skel;
	int err;

	skel = t->open(s->rc);
	if (!skel) {
		diag_error("cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	s->obj = *skel->obj;
	if (set_filters(s) || probes_autoload(t, &s->probes, s->obj))
		return -1;
	err = bpf_object__load_skeleton(skel);
	if (err) {
		diag_load_failure(err, s->rc->verbose);
		return -1;
	}
	if (set_cgroup_map(s) || (t->loaded && t->loaded(s->rc, &s->out)))
		return -1;
	if (s->rc->self_cost)
		s->stats_fd = selfcost_start();
	return probes_attach(t, &s->probes, s->obj);
}

static void banner(struct session *s)
{
	const struct run_config *rc = s->rc;
	char who[64] = "";

	if (rc->pid)
		snprintf(who, sizeof(who), " of PID %d", rc->pid);
	else if (rc->tid)
		snprintf(who, sizeof(who), " of TID %d", rc->tid);
	fprintf(stderr, "%s%s... Hit Ctrl-C to end.\n", s->tool->banner, who);
}

static void cleanup(struct session *s)
{
	probes_detach(s->tool, &s->probes);
	if (s->tool->close)
		s->tool->close();
	int fds[] = { s->target_fd, s->cgroup_fd, s->stats_fd, s->epoll_fd,
		      s->signal_fd, s->interval_fd, s->stop_fd, s->thread_poll_fd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static int run_trace(struct session *s)
{
	int code = EXIT_RUNTIME;

	check_begin(false);
	if (!check_environment(s))
		return environment_error();
	if (open_target(s) || open_cgroup(s))
		goto out;
	if (load_and_attach(s) || setup_loop(s))
		goto out;
	banner(s);
	run_loop(s);
	if (s->target_gone)
		fprintf(stderr, "%s: %s %d exited\n", s->tool->name,
			s->rc->pid ? "process" : "thread", s->rc->pid ? s->rc->pid : s->rc->tid);
	if (s->tool->finish)
		s->tool->finish(&s->out);
	fflush(s->out.f);
	if (s->rc->self_cost)
		selfcost_report(s->stats_fd, s->obj);
	code = 0;
out:
	cleanup(s);
	return code;
}

static int run_check(struct session *s)
{
	bool ok;

	check_begin(true);
	ok = check_environment(s) && check_end();
	printf("%s %s run on this system\n", s->tool->name, ok ? "can" : "cannot");
	return ok ? 0 : EXIT_RUNTIME;
}

const struct bpf_object_open_opts *tool_open_opts(const struct run_config *rc)
{
	static struct bpf_object_open_opts opts;

	opts = (struct bpf_object_open_opts){ .sz = sizeof(opts), .btf_custom_path = rc->btf_path };
	return &opts;
}

int tool_run(const struct tool *t, int argc, char **argv)
{
	struct run_config rc;
	struct session s = {
		.tool = t, .rc = &rc,
		.target_fd = -1, .cgroup_fd = -1, .stats_fd = -1, .epoll_fd = -1,
		.signal_fd = -1, .interval_fd = -1, .stop_fd = -1, .thread_poll_fd = -1,
	};

	diag_set_tool(t->name);
	switch (cli_parse(t, argc, argv, &rc)) {
	case CLI_EXIT_OK:
		return 0;
	case CLI_USAGE:
		diag_error("%s", rc.err);
		return EXIT_USAGE;
	case CLI_RUN:
		break;
	}
	s.out = (struct output){ .f = stdout, .tool = t->name, .json = rc.json,
				 .timestamp = rc.timestamp, .unit = rc.unit };
	diag_capture_libbpf(rc.verbose);
	return rc.check ? run_check(&s) : run_trace(&s);
}
