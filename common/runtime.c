// SPDX-License-Identifier: GPL-2.0-only
/*
 * The life of every tool: parse -> check the environment -> choose probes
 * -> open, configure, load -> attach -> report every interval until the
 * count, the duration, a signal or the traced process ends -> final report
 * (before detaching, so it comes out fast) -> clean up.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "diag.h"
#include "drain.h"
#include "events.h"
#include "kernel_layout.h"
#include "probe.h"
#include "selfcost.h"
#include "textfile.h"
#include "tool.h"
#include "userpath.h"

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
	unsigned long long skipped;	/* interval ticks passed since the last report */
	bool target_gone;
	bool failed;		/* the tool's report failed: exit 1 */
	struct bpf_link *filter_links[3];
	struct textfile textfile;	/* --textfile */
	struct metric_family textfile_errors;	/* <tool>_textfile_write_errors */
	char textfile_errors_name[64];
	unsigned long long textfile_errors_counted;	/* of textfile.errors, in the store */
};

/* WAKE_FAILED: the output failed (streamed events): end, no final report. */
enum wake { WAKE_NONE, WAKE_INTERVAL, WAKE_STOP, WAKE_TARGET_EXIT, WAKE_FAILED };

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

/* bpf/interval.bpf.h's gates, for intervals shorter than an RCU grace
 * period: one per possible CPU (a tool without intervals has none). */
static int set_gates(struct session *s)
{
	struct bpf_map *map = bpf_object__find_map_by_name(s->obj, "interval_gates");
	bool gated = drain_choose(s->rc->interval, !tool_noatomics());
	int ncpus = libbpf_num_possible_cpus();

	if (!map)
		return 0;
	if (set_rodata(s->obj, "interval_gated", &gated, sizeof(gated))) {
		diag_error("internal error: the BPF object lacks interval_gated of bpf/interval.bpf.h");
		return -1;
	}
	if (gated && (ncpus <= 0 || bpf_map__set_max_entries(map, (__u32)ncpus))) {
		diag_error("cannot size the interval gates: %s", strerror(ncpus < 0 ? -ncpus : EINVAL));
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
	/* the programs without BPF atomics keep no answers */
	return rc->cgroup && (!filter_events[i].with_comm_only || rc->comm[0]) && !tool_noatomics();
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
	__u32 comm_at = 0, leader_at = 0;
	bool by_comm = rc->comm[0], by_cgroup = rc->cgroup != NULL;
	char comm[FILTER_COMM_LEN] = {}, comm_mask[FILTER_COMM_LEN] = {};

	if (!(s->tool->shared & SHARED_FILTERS))
		return 0;
	if (set_pid_namespace(s))
		return -1;
	memcpy(comm, rc->comm, sizeof(comm));
	memset(comm_mask, 0xff, strnlen(comm, sizeof(comm) - 1) + 1);
	if (by_comm)
		kernel_task_name_offsets(&comm_at, &leader_at);	/* 0.2 ms */
	if (set_rodata(s->obj, "filter_tgid", &tgid, sizeof(tgid)) ||
	    set_rodata(s->obj, "filter_tid", &tid, sizeof(tid)) ||
	    set_rodata(s->obj, "filter_by_comm", &by_comm, sizeof(by_comm)) ||
	    set_rodata(s->obj, "filter_comm", comm, sizeof(comm)) ||
	    set_rodata(s->obj, "filter_comm_mask", comm_mask, sizeof(comm_mask)) ||
	    set_rodata(s->obj, "filter_comm_at", &comm_at, sizeof(comm_at)) ||
	    set_rodata(s->obj, "filter_leader_at", &leader_at, sizeof(leader_at)) ||
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
	/* As the user: the capabilities must not tell what they cannot see. */
	s->cgroup_fd = user_open(s->rc->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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

/* --textfile's directory, as the user sees it: a run that could not
 * write there fails now, before anything is loaded. */
static bool check_textfile(struct session *s)
{
	char why[512];

	if (!s->rc->textfile)
		return true;
	if (textfile_open(&s->textfile, s->rc->textfile, why, sizeof(why))) {
		check_row("textfile", CHECK_FAILED, "%s", why);
		return false;
	}
	check_row("textfile", CHECK_OK, "%s", s->rc->textfile);
	snprintf(s->textfile_errors_name, sizeof(s->textfile_errors_name), "%s_textfile_write_errors",
		 s->tool->name);
	s->textfile_errors = (struct metric_family){
		.name = s->textfile_errors_name, .type = METRIC_COUNTER,
		.help = "Writes of --textfile that failed (the file before them was kept)",
	};
	return true;
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
	if (s->rc->btf_name) {
		check_row("kernel BTF", CHECK_OK, "%s (--btf)", s->rc->btf_name);
	} else if (diag_btf_present()) {
		check_row("kernel BTF", CHECK_OK, "%s", KERNEL_BTF_PATH);
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
	check_bpf_atomics();
	if (probes_select(t, s->rc->probe_kind, &s->probes))
		ok = false;
	if (s->rc->check)
		probes_list_unwanted(t, s->rc->probe_kind);
	if (t->features && t->features(s->rc))
		ok = false;
	probe_checks_done();
	return check_textfile(s) && ok;
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

/* A closed reader (| head) shows on stdout as EPOLLERR, a hung-up
 * terminal as EPOLLHUP: watched (both are always reported, asked or not),
 * the loop ends then, not at the next line it would print. A file or
 * /dev/null cannot be watched and need not be. */
static void watch_stdout(struct session *s)
{
	struct epoll_event ev = { .events = 0, .data.fd = STDOUT_FILENO };

	epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, STDOUT_FILENO, &ev);
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

/* A stop that comes during start-up is taken at the next step, which
 * then goes straight to the final report; a start-up stuck where it
 * cannot see it (a write to a full stderr, an open of a FIFO) is ended
 * by the default action of SIGALRM this long after. */
#define STARTUP_STOP_SECS 1

static volatile sig_atomic_t starting = 1, stops;

/* After a stop, the final report is written for as long as the tool gets
 * on with it: a tick every STOP_TICK_MS interrupts whatever write blocks
 * (the handler has no SA_RESTART) and looks for progress, a write that
 * went out or CPU used. When there has been none for STOP_WRITE_MS, the
 * output is given up (nobody reads it: a reader that stopped, a pty on
 * hold): the write in hand fails with EINTR, and so do all after it, the
 * rest of the report, the final one and exit's flush; STOP_STUCK_MS
 * later, still none, the tool is stuck elsewhere and SIGALRM's default
 * action ends it. A slow reader that still reads gets the whole report;
 * a second stop gives it up at once. */
#define STOP_TICK_MS 100
#define STOP_WRITE_MS 300
#define STOP_REPEAT_MS 100	/* a second stop sooner is the first's twin */
#define STOP_STUCK_MS 500
/* CPU a tick must see used to count it as work (not the tick's own). */
#define STOP_TICK_CPU_NS 1000000LL
static volatile sig_atomic_t output_given_up;	/* EINTR once given up */
static volatile sig_atomic_t writes_out;	/* writes that went out, counted */

static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* What the last tick saw (or the stop, for the first). */
static sig_atomic_t writes_seen;
static long long cpu_seen;
static int idle_ms;

static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
}

/* A handler of a stop or of a tick runs alone: nested, SIGTERM in
 * SIGINT's (timeout(1)'s pair of signals) or a tick in either, it would
 * see the other's half-updated state (a first stop's time not yet set,
 * taken for a second stop's). */
static void handler_mask(sigset_t *set)
{
	stop_signals(set);
	sigaddset(set, SIGALRM);
}

static void on_stop_tick(int sig)
{
	int saved = errno;
	long long cpu = cpu_ns();
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	(void)sig;
	if (writes_out != writes_seen || cpu - cpu_seen >= STOP_TICK_CPU_NS)
		idle_ms = 0;
	else
		idle_ms += STOP_TICK_MS;
	writes_seen = writes_out;
	cpu_seen = cpu;
	if (idle_ms >= STOP_WRITE_MS)
		output_given_up = EINTR;
	if (idle_ms >= STOP_WRITE_MS + STOP_STUCK_MS) {
		sigemptyset(&dfl.sa_mask);
		sigaction(SIGALRM, &dfl, NULL);
		(void)raise(SIGALRM);	/* delivered as this handler returns */
	}
	errno = saved;
}

/* The ticks, from a stop taken after start-up on (async-signal-safe). */
static void stop_watchdog(void)
{
	struct sigaction sa = { .sa_handler = on_stop_tick };
	const struct itimerval tick = {
		.it_interval = { 0, STOP_TICK_MS * 1000 }, .it_value = { 0, STOP_TICK_MS * 1000 },
	};
	static volatile sig_atomic_t armed;

	if (armed)
		return;
	armed = 1;
	writes_seen = writes_out;
	cpu_seen = cpu_ns();
	handler_mask(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &tick, NULL);
}

/* Reported: what is left (detaching) cannot hang, and must not be ended
 * by a tick on a loaded machine. */
static void stop_watchdog_off(void)
{
	const struct itimerval off = { 0 };

	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_IGN);
}

/* @n bytes of @buf to @fd, a tick's EINTR retried: until written, an
 * error, or (@may_give_up) the output given up. */
static ssize_t write_on(int fd, const char *buf, size_t n, bool may_give_up)
{
	size_t done = 0;

	while (done < n && !(may_give_up && output_given_up)) {
		ssize_t w = write(fd, buf + done, n - done);

		if (w > 0) {
			done += (size_t)w;
			writes_out++;
		} else if (w == 0 || errno != EINTR) {
			break;		/* short: the stream's error flag */
		}
	}
	return (ssize_t)done;
}

/* The reports' stream: stdout, through a write that goes on after a
 * stop's ticks interrupt it, until the output is given up. */
static ssize_t report_write(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	return write_on(STDOUT_FILENO, buf, n, true);
}

/* stderr's: never given up (what says the output was given up goes
 * here), where stdio would drop a line a tick interrupted. A stderr that
 * blocks for good is ended by the watchdog's last tick. */
static ssize_t diag_write(void *cookie, const char *buf, size_t n)
{
	(void)cookie;
	return write_on(STDERR_FILENO, buf, n, false);
}

/* stderr as a stream of diag_write, line by line: unbuffered, an escaped
 * message went out a byte per write(2), a line torn among those of other
 * processes on the same stderr. */
static void diag_stream(void)
{
	cookie_io_functions_t io = { .write = diag_write };
	FILE *f = fopencookie(NULL, "w", io);

	if (!f) {
		setvbuf(stderr, NULL, _IOLBF, 0);
		return;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	stderr = f;	/* glibc's stderr is a variable */
}

static FILE *report_stream(void)
{
	cookie_io_functions_t io = { .write = report_write };
	FILE *f = fopencookie(NULL, "w", io);

	if (!f)
		return stdout;
	/* As stdout would be: line by line to a terminal. */
	if (isatty(STDOUT_FILENO))
		setvbuf(f, NULL, _IOLBF, 0);
	return f;
}

/* A stop taken (async-signal-safe): true if it is a second one, sent
 * STOP_REPEAT_MS or more after the first. What comes sooner is the same
 * stop twice: timeout(1) signals the tool, then its process group. */
static bool stop_taken(int sig)
{
	static __u64 first_ns;
	__u64 now = now_ns();

	stop_requested = sig;
	if (stops++ == 0) {
		first_ns = now;
		return false;
	}
	return now - first_ns >= STOP_REPEAT_MS * 1000000ULL;
}

/* During start-up a stop interrupts what blocks, and is taken at the
 * next step; the alarm ends the tool if something blocks again before
 * the loop (a write to a full stderr, an open of a FIFO). After it, a
 * stop starts the watchdog over the final report; a second one gives
 * the output up. */
static void on_stop_signal(int sig)
{
	int saved = errno;
	bool again = stop_taken(sig);

	if (starting) {
		diag_log_off();
		if (stops == 1)		/* a second stop does not put it off */
			alarm(STARTUP_STOP_SECS);
	} else {
		if (again)
			output_given_up = EINTR;
		stop_watchdog();
	}
	errno = saved;
}

/* From the first line on, SIGINT and SIGTERM are caught, not blocked:
 * without SA_RESTART they interrupt a blocking call of the start-up
 * (which then fails or carries on), and the stop is taken at the next
 * step (see on_stop_signal). Set here because a shell starts background
 * jobs with SIGINT ignored. */
static void stop_signals_startup(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	sigset_t set;

	handler_mask(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGALRM, SIG_DFL);
	stop_signals(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

/* From the loop on, a stop ends the run with a final report: SIGINT and
 * SIGTERM stay blocked except while the loop waits in epoll_pwait2(),
 * where they interrupt it, and a stop that comes while the tool is
 * reporting is taken with stop_pending(). */
static int setup_loop(struct session *s)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	sigset_t set;

	stop_signals(&set);
	sigprocmask(SIG_BLOCK, &set, NULL);
	starting = 0;
	/* A stop during start-up is taken by the loop's first look, its
	 * final report under the watchdog. */
	alarm(0);
	if (stop_requested)
		stop_watchdog();
	handler_mask(&sa.sa_mask);
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
	watch_stdout(s);
	return 0;
}

/* The time until the first deadline, in @ts; NULL: none. Nanoseconds:
 * rounded up to milliseconds, a 1 ms interval would lose most ticks. */
static struct timespec *wait_time(const struct session *s, __u64 now, struct timespec *ts)
{
	__u64 first = s->next_report;

	if (s->stop_at < first)
		first = s->stop_at;
	if (s->next_thread_poll < first)
		first = s->next_thread_poll;
	if (s->next_stream_poll < first)
		first = s->next_stream_poll;
	if (first == NO_DEADLINE)
		return NULL;
	first = first <= now ? 0 : first - now;
	ts->tv_sec = (time_t)(first / NS_PER_SEC);
	ts->tv_nsec = (long)(first % NS_PER_SEC);
	return ts;
}

/* epoll_pwait2 (Linux 5.11) takes nanoseconds; before it, epoll_pwait's
 * milliseconds, rounded up. */
static int wait_events(struct session *s, struct epoll_event *evs, int n, const sigset_t *mask)
{
	static bool no_pwait2;
	struct timespec ts, *t = wait_time(s, now_ns(), &ts);
	long long ms;
	int got;

	if (!no_pwait2) {
		got = epoll_pwait2(s->epoll_fd, evs, n, t, mask);
		/* ENOSYS before 5.11; EPERM from a seccomp filter that
		 * predates it (a container's): epoll_pwait serves either. */
		if (got >= 0 || (errno != ENOSYS && errno != EPERM))
			return got;
		no_pwait2 = true;
	}
	ms = t ? (long long)t->tv_sec * 1000 + (t->tv_nsec + 999999) / 1000000 : -1;
	return epoll_pwait(s->epoll_fd, evs, n, ms > 3600000 ? 3600000 : (int)ms, mask);
}

/* A stop sent while the tool was not waiting: still pending, since the
 * stop signals are blocked then, and epoll_pwait2 with a deadline already
 * passed (a report that overran the interval) returns before delivering
 * it. Taken here, so that a stop is seen within one report. */
static void stop_pending(void)
{
	struct timespec zero = { 0, 0 };
	sigset_t set;
	int sig;

	stop_signals(&set);
	sig = sigtimedwait(&set, NULL, &zero);
	if (sig > 0) {
		if (stop_taken(sig))
			output_given_up = EINTR;
		stop_watchdog();
	}
}

/* @fn(@s) with the stop signals let in (see on_stop_signal): a write of
 * its output that blocks on a full pipe is interrupted by a stop, and goes
 * on under the watchdog (given up if nothing reads it) instead of holding
 * the stop until the reader reads. A stop taken here is seen by the
 * loop's next look. */
static bool with_stops_let_in(struct session *s, bool (*fn)(struct session *))
{
	sigset_t set;
	bool ok;

	stop_signals(&set);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	ok = fn(s);
	sigprocmask(SIG_BLOCK, &set, NULL);
	/* The write a stop interrupted is the cause, whatever errno the
	 * flush after it found (output_flush() says EIO when it has none). */
	if (output_given_up && (!s->out.err || s->out.err == EIO))
		s->out.err = output_given_up;
	return ok;
}

static bool consume_and_flush(struct session *s)
{
	events_consume(events(s));
	return output_flush(&s->out) == 0;
}

/* Events printed as they come, written out now: a stream has no report
 * to wait for, and a stop must end a write of it blocked on a full pipe
 * as it ends a report's. */
static bool stream_events(struct session *s)
{
	return with_stops_let_in(s, consume_and_flush);
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
		if (!stream_events(s))
			return WAKE_FAILED;
	}
	if (now >= s->next_thread_poll) {
		s->next_thread_poll = now + THREAD_POLL_NS;
		if (!thread_alive(s->rc->tid))
			return WAKE_TARGET_EXIT;
	}
	if (now >= s->next_report) {
		/* On the original grid; ticks missed while reporting are
		 * skipped, and counted: the next report says so. */
		s->next_report += interval;
		while (s->next_report <= now) {
			s->next_report += interval;
			s->skipped++;
		}
		return WAKE_INTERVAL;
	}
	return WAKE_NONE;
}

static enum wake wait_wake(struct session *s, const sigset_t *waiting_mask)
{
	struct epoll_event evs[8];
	enum wake wake = WAKE_NONE;
	int n;

	/* Taken by the handler in a report or a stream of events (its
	 * signals let in): no longer pending, so no wait would end for it. */
	if (stop_requested)
		return WAKE_STOP;
	n = wait_events(s, evs, 8, waiting_mask);
	if (!stop_requested)
		stop_pending();
	if (stop_requested)
		return WAKE_STOP;
	for (int i = 0; i < n; i++) {
		int fd = evs[i].data.fd;

		if (fd == s->target_fd)
			return WAKE_TARGET_EXIT;
		if (fd == STDOUT_FILENO)
			return WAKE_STOP;
		if (events(s) && fd == ring_buffer__epoll_fd(events(s)) && !stream_events(s))
			return WAKE_FAILED;
	}
	wake = deadlines(s);
	return wake;
}

static int render_textfile(void *store, FILE *f)
{
	return metrics_render(store, METRICS_TEXT_004, f);
}

/* The file replaced, with the writes that failed before this one counted
 * in it: from the first file on, at 0, so that an alert has a series. */
static void write_textfile(struct session *s)
{
	struct output *o = &s->out;

	output_count(o, &s->textfile_errors, NULL, 0, s->textfile.errors - s->textfile_errors_counted);
	s->textfile_errors_counted = s->textfile.errors;
	textfile_write(&s->textfile, render_textfile, output_metrics(o));
}

/* After each report with a store: what the runtime counts itself, then
 * the exposition, whole, on stdout for --output openmetrics (a scrape
 * reads the last one), and in the --textfile. */
static void report_metrics(struct session *s)
{
	struct output *o = &s->out;

	if (!output_metrics(o))
		return;
	if (s->rc->self_cost)
		selfcost_count(s->stats_fd, s->obj, o);
	if (o->format == OUTPUT_OPENMETRICS && !o->err &&
	    metrics_render(output_metrics(o), METRICS_OPENMETRICS, o->f))
		o->err = errno;
	if (s->rc->textfile)
		write_textfile(s);
}

/* Report one interval; false when the run must end (output or tool failure). */
static bool report_unmasked(struct session *s);

/* A report, with the stop signals let in: one blocked in a write to a
 * full pipe is given up at a stop. */
static bool report(struct session *s)
{
	return with_stops_let_in(s, report_unmasked);
}

static bool report_unmasked(struct session *s)
{
	FILE *note = s->out.format == OUTPUT_OPENMETRICS ? stderr : s->out.f;

	if (events(s))
		events_consume(events(s));
	/* -T heads each report; a stream of events has a time on every line. */
	if (streaming(s))
		output_now(&s->out);
	else
		output_report_begin(&s->out);
	s->out.skipped = s->skipped;
	if (s->tool->report && s->tool->report(&s->out)) {
		s->failed = true;
		return false;
	}
	if (s->skipped && !s->out.json)
		fprintf(note, "(%llu interval%s skipped: the report before took longer than the "
			"interval; this one covers %s)\n", s->skipped, s->skipped == 1 ? "" : "s",
			s->skipped == 1 ? "it" : "them");
	s->skipped = s->out.skipped = 0;
	report_metrics(s);
	return output_flush(&s->out) == 0;
}

static void run_loop(struct session *s)
{
	long reports = 0;
	sigset_t waiting;

	/* While waiting: the mask as it was before setup_loop blocked the stop signals. */
	sigprocmask(SIG_SETMASK, NULL, &waiting);
	sigdelset(&waiting, SIGINT);
	sigdelset(&waiting, SIGTERM);
	if (stop_requested) {	/* during start-up */
		report(s);
		return;
	}
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
			if (streaming(s) && !stream_events(s))
				return;
			break;
		case WAKE_FAILED:
			return;
		}
	}
}

/* File descriptors open now (those of /proc/self/fd, less its own). */
static long fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	long n = -1;

	if (!d)
		return 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 2;	/* "." and ".." */
}

/* A run holds a descriptor for every map, and for every program its own,
 * its link's and (a tracepoint's or a kprobe's) perf event's, besides a few of its own
 * and libbpf's while it loads. Under RLIMIT_NOFILE that leaves less
 * room, the soft limit is raised to the hard one; if even that is short,
 * one line says so now: at EMFILE, libbpf's feature probes fail and it
 * blames the kernel ("map ... wasn't created", a verifier log). */
#define FDS_SLACK 6

/* A tracepoint or a kprobe attaches through a perf event of its own. */
static bool perf_attached(const struct bpf_program *p)
{
	enum bpf_prog_type type = bpf_program__type(p);

	return type == BPF_PROG_TYPE_TRACEPOINT || type == BPF_PROG_TYPE_KPROBE;
}

static int fds_room(struct bpf_object *obj)
{
	struct bpf_program *p;
	struct bpf_map *m;
	struct rlimit rl;
	long need = FDS_SLACK, open = fds_open();

	bpf_object__for_each_map(m, obj)
		need += bpf_map__autocreate(m);
	bpf_object__for_each_program(p, obj)
		if (bpf_program__autoload(p))
			need += perf_attached(p) ? 3 : 2;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    (rlim_t)(open + need) <= rl.rlim_cur)
		return 0;
	if (rl.rlim_max == RLIM_INFINITY || (rlim_t)(open + need) <= rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (!setrlimit(RLIMIT_NOFILE, &rl))
			return 0;
	}
	diag_error("needs about %ld file descriptors (%ld are open) and RLIMIT_NOFILE allows %llu: "
		   "raise it (ulimit -n %ld)", open + need, open, (unsigned long long)rl.rlim_max,
		   open + need);
	return -1;
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
	if (set_filters(s) || set_unit(s) || set_gates(s) || probes_autoload(t, &s->probes, s->obj) ||
	    fds_room(s->obj))
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
	/* Stopped while loading (the verifier's work cannot be cut short):
	 * attaching, then detaching, would only put the end off, past the
	 * second a stop promises. The loop's first look ends the run, its
	 * report empty. */
	if (stop_requested)
		return 0;
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

/* The last close of a tracepoint's (or a kprobe's) perf event waits in
 * the kernel for RCU grace periods, one close after another (a kernel
 * mutex): a person pressing Ctrl-C would wait for every one,
 * and at exit too, which closes them before the parent hears of it. A
 * child takes references to them all and is killed as this process
 * exits (PR_SET_PDEATHSIG, sent after our descriptors are closed): our
 * closes are then quick, the kernel's waits happen in the child's exit,
 * after the prompt is back. The programs are detached from their perf
 * events (disabled) by our own closes at once. Without a child (fork
 * failed) the closes are ours, as before. */
static void close_in_background(void)
{
	pid_t parent = getpid(), pid;
	sigset_t all;

	/* The child never flushes what stdio holds (it ends by _exit() or
	 * SIGKILL): nothing is written twice, and no flush of a blocked
	 * output holds the stop up here. */
	pid = fork();
	if (pid != 0)
		return;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	/* Nobody must wait for it: not a reader of our output for its end. */
	for (int fd = 0; fd <= 2; fd++)
		close(fd);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(0);
	for (;;)
		pause();
}

/* A tracepoint or a kprobe attached through a perf event: the closes
 * that wait (a raw tracepoint's link is freed without a wait). */
static bool perf_links_held(const struct session *s)
{
	for (int i = 0; i < s->tool->nprobes && i < MAX_PROBES; i++)
		if (s->probes.links[i] && (s->tool->probes[i].kind == PROBE_TRACEPOINT ||
					   s->tool->probes[i].kind == PROBE_KPROBE))
			return true;
	return false;
}

static void cleanup(struct session *s)
{
	if (perf_links_held(s))
		close_in_background();
	probes_detach(s->tool, &s->probes, s->filter_links, FILTER_EVENTS);
	if (s->tool->close)
		s->tool->close();
	textfile_close(&s->textfile, s->rc->textfile_keep);
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
	if (o->err == EINTR && stop_requested)
		diag_error("stopped while the output was blocked (nothing read it): the last "
			   "report was not written");
	else
		diag_error("cannot write the output: %s", strerror(o->err));
	return true;
}

/* Runs of the tool's programs that the kernel skipped: one of them, or a
 * BPF map syscall of any process, held the CPU's bpf_prog_active (or the
 * program was already running there). Counted by the kernel for raw
 * tracepoints and fentry, and since 6.7 for tracepoints and kprobes too;
 * each is an event no program saw, so said once, at the end. */
static void report_skipped_runs(const struct session *s)
{
	unsigned long long misses = s->tool->tells_skipped_runs ? 0 : probe_misses(s->obj);

	if (misses)
		diag_error("the kernel skipped %llu runs of this tool's programs (another BPF "
			   "program or a BPF map syscall held the CPU): events it did not see", misses);
}

/* The tool's last words (the target gone, a summary, the ring's rest,
 * the report's buffered tail, skipped runs, its own cost) written out
 * with the stops let in, under the watchdog: a pipe nobody reads gives
 * them up as it gives up a report, and a stderr that blocks for good
 * does not hold off a stop (see diag_write). */
static bool finish_unmasked(struct session *s)
{
	bool ok;

	if (s->target_gone)
		fprintf(stderr, "%s: %s %d exited\n", s->tool->name,
			s->rc->pid ? "process" : "thread", s->rc->pid ? s->rc->pid : s->rc->tid);
	if (s->tool->finish && !s->out.err)
		s->tool->finish(&s->out);
	ok = output_flush(&s->out) == 0;
	report_skipped_runs(s);
	if (s->rc->self_cost)
		selfcost_report(s->stats_fd, s->obj);
	return ok;
}

static bool banner_unmasked(struct session *s)
{
	banner(s);
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
	/* From here on, stderr too is written with the stops let in. */
	if (!stop_requested)
		with_stops_let_in(s, banner_unmasked);
	run_loop(s);
	with_stops_let_in(s, finish_unmasked);
	code = output_ended(&s->out) || s->failed ? EXIT_RUNTIME : 0;
out:
	stop_watchdog_off();	/* also for a setup_loop that failed after a stop */
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

/* @code, or EXIT_RUNTIME with one line (output_ended()) if what went to
 * stdout (--help, --version, --check) could not all be written. */
static int stdout_written(int code)
{
	struct output o = { .f = stdout };

	return output_ended(&o) ? EXIT_RUNTIME : code;
}

static int run_check(struct session *s)
{
	bool ok;

	check_begin(true);
	ok = check_environment(s) && check_end();
	textfile_close(&s->textfile, true);
	printf("%s %s run on this system\n", s->tool->name, ok ? "can" : "cannot");
	return stdout_written(ok ? 0 : EXIT_RUNTIME);
}

const struct bpf_object_open_opts *tool_open_opts(const struct run_config *rc)
{
	static struct bpf_object_open_opts opts;

	opts = (struct bpf_object_open_opts){ .sz = sizeof(opts), .btf_custom_path = rc->btf_path };
	return &opts;
}

/* The labels of every series: --label's and, with --textfile, one
 * naming the file (unless --label names it), so that two runs writing
 * two files for one node_exporter are never one series (it would serve
 * only one of them). */
static int start_metrics(struct output *o, const struct run_config *rc)
{
	struct metrics_label labels[METRICS_MAX_LABELS];
	struct metrics_config c = {
		.max_series = rc->max_series, .label_pid = rc->label_pid,
		.labels = labels, .nlabels = rc->nlabels,
	};
	char name[NAME_MAX + 1];
	bool named = false;

	for (int i = 0; i < rc->nlabels; i++) {
		labels[i] = rc->labels[i];
		named |= !strcmp(labels[i].name, TEXTFILE_LABEL);
	}
	if (rc->textfile && !named) {
		textfile_label(rc->textfile, name, sizeof(name));
		labels[c.nlabels].value = name;
		strcpy(labels[c.nlabels++].name, TEXTFILE_LABEL);
	}
	if (!output_metrics_start(o, &c))
		return 0;
	diag_error("out of memory");
	return -1;
}

int tool_run(const struct tool *t, int argc, char **argv)
{
	struct run_config rc;
	int code;
	struct session s = {
		.tool = t, .rc = &rc,
		.target_fd = -1, .cgroup_fd = -1, .stats_fd = -1, .epoll_fd = -1,
		.textfile = { .dir_fd = -1 },
	};

	stop_signals_startup();
	/* The time zone is read once, now: later it would be a read(2) of
	 * the tool's own, timed by a tool that traces reads. */
	tzset();
	/* Started with fd 0, 1 or 2 closed, the first file we open would
	 * take its number and the report would be written into it. */
	if (keep_std_fds_open())
		return EXIT_RUNTIME;
	diag_stream();
	diag_set_tool(cli_display_name(t, argc ? argv[0] : NULL));
	switch (cli_parse(t, argc, argv, &rc)) {
	case CLI_EXIT_OK:	/* --help, --version */
		return stdout_written(0);
	case CLI_USAGE:
		diag_error("%s", rc.err);
		return EXIT_USAGE;
	case CLI_FAILED:
		diag_error("%s", rc.err);
		return EXIT_RUNTIME;
	case CLI_RUN:
		break;
	}
	s.out = (struct output){ .f = report_stream(), .tool = t->name, .json = rc.json, .format = rc.output,
				 .timestamp = rc.timestamp, .verbose = rc.verbose, .unit = rc.unit,
				 .hist_family = t->hist_family, .errors_family = t->errors_family };
	if (!rc.check && (rc.output == OUTPUT_OPENMETRICS || rc.textfile) && start_metrics(&s.out, &rc))
		return EXIT_RUNTIME;
	diag_capture_libbpf(rc.verbose);
	code = rc.check ? run_check(&s) : run_trace(&s);
	output_metrics_stop(&s.out);
	return code;
}
