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
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "diag.h"
#include "kernel_layout.h"
#include "probe.h"
#include "selfcost.h"
#include "tool.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#define THREAD_POLL_NS (200 * 1000000ULL)
/* A tool that prints events as they come takes them from its ring buffer
 * at least this often: the kernel wakes it only when the ring fills up,
 * so a busy system costs no wake-up per event and a quiet one still sees
 * each event within this delay. */
#define STREAM_POLL_NS (50 * 1000000ULL)
#define NS_PER_SEC 1000000000ULL
#define NO_DEADLINE UINT64_MAX
/* /proc/self/ns/pid of the initial PID namespace (PROC_PID_INIT_INO). */
#define PIDNS_INIT_INO 0xEFFFFFFCULL

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
	int epoll_fd;
	/* Deadlines on CLOCK_MONOTONIC, ns: the loop sleeps in epoll until the
	 * first, so the tool itself makes no read() that it would trace. */
	__u64 next_report, stop_at, next_thread_poll, next_stream_poll;
	bool target_gone;
	bool failed;		/* the tool's report failed: exit 1 */
	struct bpf_link *filter_links[3];
};

enum wake { WAKE_NONE, WAKE_INTERVAL, WAKE_STOP, WAKE_TARGET_EXIT };

static volatile sig_atomic_t stop_requested;

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

/* In a child PID namespace (a container), PIDs given and printed are that
 * namespace's: the programs translate (bpf_get_ns_current_pid_tgid, 5.7+). */
static int set_pid_namespace(struct session *s)
{
	__u64 dev, ino;
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) || st.st_ino == PIDNS_INIT_INO)
		return 0;
	/* The helper compares the kernel's encoding of the nsfs device. */
	dev = (__u64)major(st.st_dev) << 20 | minor(st.st_dev);
	ino = st.st_ino;
	if (set_rodata(s->obj, "pidns_dev", &dev, sizeof(dev)) ||
	    set_rodata(s->obj, "pidns_ino", &ino, sizeof(ino))) {
		diag_error("internal error: the BPF object lacks the filter of bpf/filter.bpf.h");
		return -1;
	}
	return 0;
}

static int set_unit(struct session *s)
{
	__u8 unit = (__u8)s->rc->unit;

	if (!(s->tool->shared & SHARED_UNITS))
		return 0;
	if (set_rodata(s->obj, "hist_unit", &unit, sizeof(unit))) {
		diag_error("internal error: the BPF object lacks hist_unit of bpf/hist.bpf.h");
		return -1;
	}
	return 0;
}

/* The events after which bpf/filter.bpf.h asks -c (and -n with it) again:
 * it keeps their answers per thread. The rename matters with -n. */
static const struct {
	const char *prog, *event;
	bool with_comm_only;
} filter_events[] = {
	{ "filter_fork", "sched/sched_process_fork", false },
	{ "filter_move", "cgroup/cgroup_attach_task", false },
	{ "filter_rename", "task/task_rename", true },
};

#define FILTER_EVENTS (sizeof(filter_events) / sizeof(filter_events[0]))
_Static_assert(FILTER_EVENTS == sizeof(((struct session *)0)->filter_links) /
			       sizeof(struct bpf_link *), "a link for each filter event");

static bool filter_event_needed(const struct run_config *rc, size_t i)
{
	return rc->cgroup && (!filter_events[i].with_comm_only || rc->comm[0]);
}

static int filter_events_autoload(struct session *s)
{
	for (size_t i = 0; i < FILTER_EVENTS; i++)
		if (probe_autoload(s->obj, filter_events[i].prog, filter_event_needed(s->rc, i)))
			return -1;
	return 0;
}

/* Before the tool's own probes: no answer is kept that these would not
 * see change. */
static int filter_events_attach(struct session *s)
{
	for (size_t i = 0; i < FILTER_EVENTS; i++)
		if (filter_event_needed(s->rc, i) &&
		    !(s->filter_links[i] = probe_attach(s->obj, filter_events[i].prog, PROBE_RAW_TRACEPOINT,
							 filter_events[i].event)))
			return -1;
	return 0;
}

static int set_filters(struct session *s)
{
	const struct run_config *rc = s->rc;
	__u32 tgid = (__u32)rc->pid, tid = (__u32)rc->tid, self = (__u32)getpid();
	__u32 comm_at;
	bool by_comm = rc->comm[0], by_cgroup = rc->cgroup != NULL;
	char comm[FILTER_COMM_LEN] = {}, comm_mask[FILTER_COMM_LEN] = {};

	if (!(s->tool->shared & SHARED_FILTERS))
		return 0;
	if (set_pid_namespace(s))
		return -1;
	memcpy(comm, rc->comm, sizeof(comm));
	memset(comm_mask, 0xff, strnlen(comm, sizeof(comm) - 1) + 1);
	comm_at = by_comm ? kernel_task_comm_offset() : 0;	/* 0.2 ms */
	if (set_rodata(s->obj, "filter_tgid", &tgid, sizeof(tgid)) ||
	    set_rodata(s->obj, "filter_tid", &tid, sizeof(tid)) ||
	    set_rodata(s->obj, "filter_by_comm", &by_comm, sizeof(by_comm)) ||
	    set_rodata(s->obj, "filter_comm", comm, sizeof(comm)) ||
	    set_rodata(s->obj, "filter_comm_mask", comm_mask, sizeof(comm_mask)) ||
	    set_rodata(s->obj, "filter_comm_at", &comm_at, sizeof(comm_at)) ||
	    set_rodata(s->obj, "filter_by_cgroup", &by_cgroup, sizeof(by_cgroup)) ||
	    set_rodata(s->obj, "self_tgid", &self, sizeof(self))) {
		diag_error("internal error: the BPF object lacks the filter of bpf/filter.bpf.h");
		return -1;
	}
	return filter_events_autoload(s);
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
			return EXIT_USAGE;
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

static bool streaming(const struct session *s)
{
	return s->tool->streams_events && s->tool->streams_events();
}

static int add_fd(struct session *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return fd < 0 ? 0 : epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * NS_PER_SEC + (__u64)ts.tv_nsec;
}

static __u64 after(double seconds)
{
	return seconds ? now_ns() + (__u64)(seconds * 1e9) : NO_DEADLINE;
}

static void on_stop_signal(int sig)
{
	stop_requested = sig;
}

/* SIGINT and SIGTERM stay blocked (since tool_run's first line, so that
 * one sent in the first milliseconds is not lost) except while the loop
 * waits in epoll_pwait(), where they interrupt it. */
static void block_stop_signals(sigset_t *old)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, old);
}

static int setup_loop(struct session *s)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* Output into a closed pipe (| head) shows as EPIPE: end quietly. */
	signal(SIGPIPE, SIG_IGN);
	s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	s->next_report = after(s->rc->interval);
	s->stop_at = after(s->rc->duration);
	s->next_thread_poll = s->rc->tid && s->target_fd < 0 ? now_ns() + THREAD_POLL_NS : NO_DEADLINE;
	s->next_stream_poll = streaming(s) ? now_ns() + STREAM_POLL_NS : NO_DEADLINE;
	if (s->epoll_fd < 0 || add_fd(s, s->target_fd) ||
	    (events(s) && add_fd(s, ring_buffer__epoll_fd(events(s))))) {
		diag_error("cannot set up the event loop: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Milliseconds until the first deadline, rounded up; -1: none. */
static int wait_ms(const struct session *s, __u64 now)
{
	__u64 first = s->next_report;

	if (s->stop_at < first)
		first = s->stop_at;
	if (s->next_thread_poll < first)
		first = s->next_thread_poll;
	if (s->next_stream_poll < first)
		first = s->next_stream_poll;
	if (first == NO_DEADLINE)
		return -1;
	if (first <= now)
		return 0;
	first = (first - now + 999999) / 1000000;
	return first > 3600000 ? 3600000 : (int)first;
}

/* The deadlines that have passed, as a wake reason. */
static enum wake deadlines(struct session *s)
{
	__u64 now = now_ns();
	__u64 interval = (__u64)(s->rc->interval * 1e9);

	if (now >= s->stop_at)
		return WAKE_STOP;
	if (now >= s->next_stream_poll) {
		s->next_stream_poll = now + STREAM_POLL_NS;
		ring_buffer__consume(events(s));
	}
	if (now >= s->next_thread_poll) {
		s->next_thread_poll = now + THREAD_POLL_NS;
		if (!thread_alive(s->rc->tid))
			return WAKE_TARGET_EXIT;
	}
	if (now >= s->next_report) {
		/* On the original grid; ticks missed while reporting are skipped. */
		do
			s->next_report += interval;
		while (s->next_report <= now);
		return WAKE_INTERVAL;
	}
	return WAKE_NONE;
}

static enum wake wait_wake(struct session *s, const sigset_t *waiting_mask)
{
	struct epoll_event evs[8];
	enum wake wake = WAKE_NONE;
	int n = epoll_pwait(s->epoll_fd, evs, 8, wait_ms(s, now_ns()), waiting_mask);

	if (stop_requested)
		return WAKE_STOP;
	for (int i = 0; i < n; i++) {
		int fd = evs[i].data.fd;

		if (fd == s->target_fd)
			return WAKE_TARGET_EXIT;
		if (events(s) && fd == ring_buffer__epoll_fd(events(s)))
			ring_buffer__consume(events(s));
	}
	wake = deadlines(s);
	return wake;
}

/* Report one interval; false when the run must end (output or tool failure). */
static bool report(struct session *s)
{
	if (events(s))
		ring_buffer__consume(events(s));
	/* -T heads each report; a stream of events has a time on every line. */
	if (streaming(s))
		output_now(&s->out);
	else
		output_stamp(&s->out);
	if (s->tool->report && s->tool->report(&s->out)) {
		s->failed = true;
		return false;
	}
	return output_flush(&s->out) == 0;
}

static void run_loop(struct session *s)
{
	long reports = 0;
	sigset_t waiting;

	/* While waiting: the mask as it was before tool_run blocked the stop signals. */
	sigprocmask(SIG_SETMASK, NULL, &waiting);
	sigdelset(&waiting, SIGINT);
	sigdelset(&waiting, SIGTERM);
	for (;;) {
		switch (wait_wake(s, &waiting)) {
		case WAKE_INTERVAL:
			if (!report(s))
				return;
			if (s->rc->count && ++reports >= s->rc->count)
				return;
			break;
		case WAKE_TARGET_EXIT:
			s->target_gone = true;
			/* fall through */
		case WAKE_STOP:
			report(s);
			return;
		case WAKE_NONE:
			/* Events printed as they come: stop at the first output error. */
			if (streaming(s) && output_flush(&s->out))
				return;
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
	if (set_filters(s) || set_unit(s) || probes_autoload(t, &s->probes, s->obj))
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
	if ((t->shared & SHARED_FILTERS) && filter_events_attach(s))
		return -1;
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
	fprintf(stderr, "%s%s... Hit Ctrl-C to end.\n", s->tool->banner(), who);
}

static void cleanup(struct session *s)
{
	probes_detach(s->tool, &s->probes);
	for (size_t i = 0; i < FILTER_EVENTS; i++)
		bpf_link__destroy(s->filter_links[i]);
	if (s->tool->close)
		s->tool->close();
	int fds[] = { s->target_fd, s->cgroup_fd, s->stats_fd, s->epoll_fd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Only a closed pipe (| head) ends the output quietly; true if the run
 * failed for its output. */
static bool output_ended(struct output *o)
{
	if (output_flush(o) == 0 || o->err == EPIPE)
		return false;
	diag_error("cannot write the output: %s", strerror(o->err));
	return true;
}

static int run_trace(struct session *s)
{
	int code = EXIT_RUNTIME, err;

	check_begin(false);
	if (!check_environment(s))
		return environment_error();
	err = open_target(s);	/* -1, or EXIT_USAGE: -p of a thread */
	if (err > 0)
		code = err;
	if (err || open_cgroup(s))
		goto out;
	if (load_and_attach(s) || setup_loop(s))
		goto out;
	banner(s);
	run_loop(s);
	if (s->target_gone)
		fprintf(stderr, "%s: %s %d exited\n", s->tool->name,
			s->rc->pid ? "process" : "thread", s->rc->pid ? s->rc->pid : s->rc->tid);
	if (s->tool->finish && !s->out.err)
		s->tool->finish(&s->out);
	if (s->rc->self_cost)
		selfcost_report(s->stats_fd, s->obj);
	code = output_ended(&s->out) || s->failed ? EXIT_RUNTIME : 0;
out:
	cleanup(s);
	return code;
}

static int keep_std_fds_open(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int null;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		null = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
		if (null < 0)
			return -1;
		if (null != fd) {
			/* A lower fd was closed too and took it: fixed by the loop. */
			close(null);
			return -1;
		}
	}
	return 0;
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
	};

	block_stop_signals(NULL);
	/* The time zone is read once, now: later it would be a read(2) of
	 * the tool's own, timed by a tool that traces reads. */
	tzset();
	/* Started with fd 0, 1 or 2 closed, the first file we open would
	 * take its number and the report would be written into it. */
	if (keep_std_fds_open())
		return EXIT_RUNTIME;
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
