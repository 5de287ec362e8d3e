#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""lifecycle.py [--cycles N] [--seed S] [--only TOOL[:MODE]] [--kind K] [--interval I] BUILD

Start and stop every tool in every report mode, CYCLES times each, with
SIGINT, SIGTERM or SIGKILL at a moment drawn at random (from SEED,
printed, so that a failure can be run again with --seed and --only):

  early    before the tool's first byte on stderr (0-1 ms after exec)
  delay    a random time into the start-up (up to how long it took once)
  log      at a random line of libbpf's log (-v, LIBBPF_DEBUG=1) read
           from a one-page pipe, so that the tool is at most a page
           ahead; half of these first let the tool block in that write
  report   after the banner or after 1-3 reports, and a random part of
           an interval more
  blocked  while a report (or a streamed event) is blocked in a write
           to a full one-page stdout pipe that nobody reads
  inreport while the tool is in a report, not blocked: stopped (SIGSTOP)
           where its stop signals are let in and it is not waiting in
           epoll, signalled, then continued

at intervals of 0.001 s (the minimum) and larger, or none. Meanwhile a
workload reads, opens, sends over loopback TCP and reads a loop device,
so that reports have content. Each cycle must:

  - end within STOP_SECS (1 s) of the signal, as waitpid sees it (a
    pidfd, polled); SIGKILL: just die
  - for SIGINT and SIGTERM: exit 0 with its final report after the
    signal (the report the mode prints, whole, last in its output), but
    a report blocked on the full pipe is given up with exit 1 and the
    line that says so, and a signal sent before the tool's handler is
    set may end it as it ends any program (README: a signal before the
    first instruction)
  - leave none of its BPF programs, maps and links loaded 2 s after its
    exit (polled): the ids it held, read from /proc/PID/fdinfo every
    millisecond while it ran, with the maps its programs use and those
    its maps of maps hold; looked up by id, never by name or count

Prints one line per failure (with what reproduces it), then per tool the
cycles run and the slowest stop; exits 1 if any cycle failed.
"""
import argparse
import ctypes
import fcntl
import json
import mmap
import os
import random
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

# /proc/PID/stat's state and /proc/PID/wchan, as startup_stop.py reads them
from startup_stop import state as proc_state, wchan

STOP_SECS = float(os.environ.get("STOP_SECS", "1"))
GONE_SECS = 2.0
WAIT_SECS = float(os.environ.get("WAIT_SECS", "15"))	# bound on any wait for output
F_SETPIPE_SZ = 1031
PAGE = 4096
BLOCKED_LINE = ": stopped while the output was blocked (nothing read it): the last report was not written"

# ---- BPF objects by id -------------------------------------------------

libc = ctypes.CDLL(None, use_errno=True)
SYS_BPF = 321
BPF_MAP_LOOKUP_ELEM, BPF_PROG_GET_FD_BY_ID, BPF_MAP_GET_FD_BY_ID = 1, 13, 14
BPF_OBJ_GET_INFO_BY_FD, BPF_LINK_GET_FD_BY_ID = 15, 30
GET_FD_BY_ID = {"prog": BPF_PROG_GET_FD_BY_ID, "map": BPF_MAP_GET_FD_BY_ID, "link": BPF_LINK_GET_FD_BY_ID}
BPF_MAP_TYPE_ARRAY_OF_MAPS = 12	# the tools' only maps of maps (bpf/keyed.bpf.h)


def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(bytes(attr), 128)
    r = libc.syscall(SYS_BPF, cmd, buf, 128)
    return r, ctypes.get_errno(), buf


def fd_by_id(kind, oid):
    """An fd of the object, or None if no object has that id (now)."""
    r, err, _ = bpf(GET_FD_BY_ID[kind], struct.pack("=III", oid, 0, 0))
    if r >= 0:
        return r
    if err == 2:	# ENOENT
        return None
    raise OSError(err, f"bpf: cannot look up {kind} id {oid}: {os.strerror(err)}")


def alive(kind, oid):
    fd = fd_by_id(kind, oid)
    if fd is None:
        return False
    os.close(fd)
    return True


def obj_info(fd, size, extra=b""):
    info = ctypes.create_string_buffer(extra.ljust(size, b"\0"), size)
    r, err, _ = bpf(BPF_OBJ_GET_INFO_BY_FD, struct.pack("=IIQ", fd, size, ctypes.addressof(info)))
    return info.raw if r == 0 else None


def prog_maps(pid):
    """The ids of the maps program @pid uses (struct bpf_prog_info)."""
    fd = fd_by_id("prog", pid)
    if fd is None:
        return set()
    try:
        info = obj_info(fd, 64)
        n = struct.unpack_from("=I", info, 52)[0] if info else 0
        if not n:
            return set()
        ids = (ctypes.c_uint32 * n)()
        extra = bytearray(64)
        struct.pack_into("=IQ", extra, 52, n, ctypes.addressof(ids))
        info = obj_info(fd, 64, bytes(extra))
        return set(ids[:]) if info else set()
    finally:
        os.close(fd)


def inner_maps(mid):
    """The ids of the maps a map of maps @mid holds (a lookup gives the id)."""
    fd = fd_by_id("map", mid)
    if fd is None:
        return set()
    try:
        info = obj_info(fd, 24)	# type, id, key_size, value_size, max_entries
        if not info:
            return set()
        mtype, _, ksize, _, entries = struct.unpack_from("=IIIII", info)
        if mtype != BPF_MAP_TYPE_ARRAY_OF_MAPS or ksize != 4:
            return set()
        out = set()
        for k in range(min(entries, 64)):
            key, val = ctypes.c_uint32(k), ctypes.c_uint32(0)
            r, _, _ = bpf(BPF_MAP_LOOKUP_ELEM, struct.pack("=IIQQQ", fd, 0, ctypes.addressof(key),
                                                              ctypes.addressof(val), 0))
            if r == 0:
                out.add(val.value)
        return out
    finally:
        os.close(fd)


def fdinfo_ids(pid):
    ids = set()
    d = f"/proc/{pid}/fdinfo"
    try:
        fds = os.listdir(d)
    except OSError:
        return ids
    for fd in fds:
        try:
            with open(f"{d}/{fd}") as f:
                for line in f:
                    key, _, val = line.partition(":")
                    if key in ("map_id", "prog_id", "link_id"):
                        ids.add((key[:-3], int(val)))
        except (OSError, ValueError):
            pass
    return ids


class Sampler(threading.Thread):
    """The BPF ids process @pid holds, collected while it runs."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.ids, self.done = pid, set(), threading.Event()

    def run(self):
        while not self.done.is_set():
            self.ids |= fdinfo_ids(self.pid)
            time.sleep(0.001)

    def stop(self):
        self.done.set()
        self.join()
        self.ids = with_used_maps(self.ids)
        return self.ids


def with_used_maps(ids):
    """@ids, (kind, id) pairs, with the maps their programs use and those
    their maps of maps hold."""
    ids = set(ids)
    for kind, oid in list(ids):
        try:
            if kind == "prog":
                ids |= {("map", m) for m in prog_maps(oid)}
        except OSError:
            pass
    for kind, oid in list(ids):
        if kind == "map":
            ids |= {("map", m) for m in inner_maps(oid)}
    return ids


def left_after(ids, t_exit):
    """Those of @ids still loaded GONE_SECS after @t_exit, polled."""
    left = set(ids)
    while True:
        left = {(k, i) for k, i in left if alive(k, i)}
        if not left or time.monotonic() > t_exit + GONE_SECS:
            return left
        time.sleep(0.01)

# ---- the process under test --------------------------------------------


def proc_field(pid, name):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(name + ":"):
                    return int(line.split()[1], 16)
    except OSError:
        pass
    return None


def syscall_nr(pid):
    try:
        with open(f"/proc/{pid}/syscall") as f:
            return f.read().split()[0]
    except (OSError, IndexError):
        return ""


class Reader(threading.Thread):
    """Reads a pipe into .data; .pause() stops reading (after the read in
    progress), .resume() goes on."""

    def __init__(self, fd):
        super().__init__(daemon=True)
        self.fd, self.data, self.go = fd, bytearray(), threading.Event()
        self.go.set()
        self.start()

    def run(self):
        while True:
            self.go.wait()
            try:
                b = os.read(self.fd, 65536)
            except OSError:
                b = b""
            if not b:
                break
            self.data += b
        os.close(self.fd)

    def pause(self):
        self.go.clear()

    def resume(self):
        self.go.set()

    def snapshot(self):
        return bytes(self.data)


def wait_until(pred, secs):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.0005)
    return pred()

# ---- modes ----------------------------------------------------------------


class Mode:
    """A report mode of a tool: its options, and the line (a regex over
    stdout, or stderr for a stream of events in text) that ends a report."""

    def __init__(self, tool, name, args, end, on_stderr=False, json_lines=False, interval=True,
                 every=None):
        self.tool, self.name, self.args, self.interval = tool, name, args, interval
        self.every = every	# the interval without one given (tcprcv's table: 1 s)
        self.end, self.on_stderr, self.json_lines = re.compile(end, re.M), on_stderr, json_lines

    def ends(self, data):
        return len(self.end.findall(data.decode("utf-8", "replace")))


HIST = r"^count \d+"
JSON_REPORT = r'^\{"tool":.*\}$'
JSON_SUMMARY = r'^\{"tool":.*"lost":\d+.*\}$'
OM = r"^# EOF$"


def modes(disk):
    m = [
        Mode("readlat", "default", [], HIST),
        Mode("readlat", "-P", ["-P"], HIST),
        Mode("readlat", "-F", ["-F"], HIST),
        Mode("readlat", "-B", ["-B"], HIST),
        Mode("readlat", "--slower", ["--slower", "0"], r"^\d+ of \d+ reads took ", on_stderr=True),
        Mode("readlat", "--slower -j", ["--slower", "0", "-j"], JSON_SUMMARY, json_lines=True),
        Mode("readlat", "-j", ["-j"], JSON_REPORT, json_lines=True),
        Mode("readlat", "-o openmetrics", ["-o", "openmetrics"], OM),
        Mode("opensnoop", "events", [], r"^\d+ opens traced; ", on_stderr=True, interval=False),
        Mode("opensnoop", "-j", ["-j"], JSON_SUMMARY, json_lines=True, interval=False),
        Mode("opensnoop", "-C", ["-C"], r"^\d+ opens by \d+ process"),
        Mode("opensnoop", "-C -j", ["-C", "-j"], JSON_REPORT, json_lines=True),
        Mode("opensnoop", "-C -o openmetrics", ["-C", "-o", "openmetrics"], OM),
        Mode("opensnoop", "-L", ["-L"], HIST),
        Mode("opensnoop", "-L -P", ["-L", "-P"], HIST),
        Mode("tcprcv", "default", [], r"^\d+ bytes received, \d+ read, in \d+ process", every=1.0),
        Mode("tcprcv", "--by flow", ["--by", "flow"], r"^\d+ bytes received, \d+ read, in \d+ flow",
             every=1.0),
        Mode("tcprcv", "--by port", ["--by", "port"], r"^\d+ bytes received, \d+ read, in \d+ port",
             every=1.0),
        Mode("tcprcv", "-L", ["-L"], HIST),
        Mode("tcprcv", "-L -P", ["-L", "-P"], HIST),
        Mode("tcprcv", "-j", ["-j"], JSON_REPORT, json_lines=True, every=1.0),
        Mode("tcprcv", "-o openmetrics", ["-o", "openmetrics"], OM, every=1.0),
        Mode("biolat", "default", [], HIST),
        Mode("biolat", "-D", ["-D"], HIST),
        Mode("biolat", "-F", ["-F"], HIST),
        Mode("biolat", "-Q", ["-Q"], HIST),
        Mode("biolat", "--size", ["--size"], HIST),
        Mode("biolat", "-j", ["-j"], JSON_REPORT, json_lines=True),
        Mode("biolat", "-o openmetrics", ["-o", "openmetrics"], OM),
    ]
    if disk:
        m.append(Mode("biolat", "-d DISK", ["-d", disk], HIST))
    return m

# ---- one cycle ------------------------------------------------------------

SIGNALS = [(signal.SIGINT, 2), (signal.SIGTERM, 2), (signal.SIGKILL, 1)]
KINDS = [("early", 1), ("delay", 2), ("log", 2), ("report", 3), ("blocked", 1), ("inreport", 1)]
INTERVALS = [(None, 2), (0.001, 3), (0.01, 2), (0.1, 1), (0.5, 1)]


def pick(rng, choices):
    return rng.choices([c for c, _ in choices], [w for _, w in choices])[0]


class Calibration:
    startup = 0.3	# seconds from exec to the banner
    loglines = 50	# lines of -v LIBBPF_DEBUG=1 log before the banner


class Cycle:
    def __init__(self, build, mode, sig, kind, interval, rng, calib):
        self.mode, self.sig, self.kind, self.interval = mode, sig, kind, interval
        self.rng, self.calib, self.build = rng, calib, build
        self.verbose = kind == "log"
        self.note = ""
        self.errors = []
        self.reader_back = True

    def describe(self):
        iv = "none" if self.interval is None else f"{self.interval:g}"
        return f"{signal.Signals(self.sig).name} {self.kind} interval {iv}{self.note}"

    def fail(self, why):
        self.errors.append(why)

    def argv(self):
        a = [os.path.join(self.build, self.mode.tool)] + self.mode.args
        if self.verbose:
            a.append("-v")
        if self.interval is not None:
            a.append(f"{self.interval:g}")
        return a

    def reports(self, out, err):
        return self.mode.ends(err if self.mode.on_stderr else out)

    def run(self):
        small_out = self.kind == "blocked"
        r1, w1 = os.pipe()
        r2, w2 = os.pipe()
        if small_out:
            fcntl.fcntl(w1, F_SETPIPE_SZ, PAGE)
        if self.verbose:
            fcntl.fcntl(w2, F_SETPIPE_SZ, PAGE)
        env = dict(os.environ)
        env.pop("LIBBPF_DEBUG", None)
        if self.verbose:
            env["LIBBPF_DEBUG"] = "1"
        t_start = time.monotonic()
        p = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL, stdout=w1, stderr=w2, env=env)
        os.close(w1)
        os.close(w2)
        pidfd = os.pidfd_open(p.pid)
        sampler = Sampler(p.pid)
        sampler.start()
        out, err = Reader(r1), Reader(r2)
        try:
            return self.drive(p, pidfd, sampler, out, err, t_start)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            out.resume()
            err.resume()
            os.close(pidfd)

    def banner(self, err):
        return b"Hit Ctrl-C to end." in err.snapshot()

    def moment(self, p, out, err, t_start):
        """Wait for the cycle's moment; False if the tool ended first."""
        rng, kind = self.rng, self.kind
        if kind == "early":
            time.sleep(rng.uniform(0, 0.001))
        elif kind == "delay":
            time.sleep(rng.uniform(0, self.calib.startup))
        elif kind == "log":
            k = rng.randint(1, max(1, self.calib.loglines))
            self.note = f" at log line {k}"
            wait_until(lambda: err.snapshot().count(b"\n") >= k or p.poll() is not None
                       or self.banner(err), WAIT_SECS)
            if rng.random() < 0.5:
                err.pause()
                self.note += ", blocked in its write"
                wait_until(lambda: wchan(p.pid).endswith("pipe_write") or p.poll() is not None, 0.5)
        elif kind == "report":
            # A stream of events ends with its summary, at the end only.
            stream = self.mode.on_stderr or self.mode.end.pattern == JSON_SUMMARY
            n = rng.randint(1, 3) if self.interval and not stream else 0
            self.note = f" after {n} reports" if n else " after the banner"
            if not wait_until(lambda: self.banner(err) and
                              self.reports(out.snapshot(), err.snapshot()) >= n or p.poll() is not None,
                              WAIT_SECS):
                self.fail(f"no banner and {n} reports within {WAIT_SECS} s")
            self.t_banner = time.monotonic()
            time.sleep(rng.uniform(0, self.interval or 0.2))
        elif kind == "blocked":
            if not wait_until(lambda: self.banner(err) or p.poll() is not None, WAIT_SECS):
                self.fail(f"no banner within {WAIT_SECS} s")
            out.pause()
            if not wait_until(lambda: wchan(p.pid).endswith("pipe_write") or p.poll() is not None,
                              WAIT_SECS):
                self.note = " (never blocked)"
                self.kind = "report"
            else:
                self.reader_back = rng.random() < 0.5
                self.note = ", the reader back after the signal" if self.reader_back else \
                    ", nobody reads until it ends"
        elif kind == "inreport":
            if not wait_until(lambda: self.banner(err) or p.poll() is not None, WAIT_SECS):
                self.fail(f"no banner within {WAIT_SECS} s")
            return self.stop_in_report(p, out, err)
        return p.poll() is None

    def stop_in_report(self, p, out, err):
        """SIGSTOP the tool until it is caught in a report (its stop
        signals let in, not in epoll or sigprocmask), then signal it there
        and continue it. Gives up (signal anyway) after 3 intervals."""
        iv = self.interval or self.mode.every or 0.2
        end = time.monotonic() + max(3 * iv, 1.0)
        bit = 1 << (self.sig - 1)
        tries = 0
        while time.monotonic() < end and p.poll() is None:
            tries += 1
            os.kill(p.pid, signal.SIGSTOP)
            if not wait_until(lambda: proc_state(p.pid) in ("T", "t", "Z", ""), 1.0):
                os.kill(p.pid, signal.SIGCONT)
                continue
            blocked = proc_field(p.pid, "SigBlk")
            nr = syscall_nr(p.pid)
            if blocked is not None and not blocked & bit and nr not in ("232", "281", "441", "14"):
                self.note = f" (caught in a report, syscall {nr}, try {tries})"
                self.t_sig = self.send(p, out, err)
                os.kill(p.pid, signal.SIGCONT)
                return None
            os.kill(p.pid, signal.SIGCONT)
            time.sleep(self.rng.uniform(0, min(iv, 0.002)))
        self.note = f" (not caught in a report in {tries} tries)"
        return p.poll() is None

    def send(self, p, out, err):
        self.caught = bool((proc_field(p.pid, "SigCgt") or 0) & (1 << (self.sig - 1)))
        self.out_at_sig, self.err_at_sig = out.snapshot(), err.snapshot()
        t = time.monotonic()
        os.kill(p.pid, self.sig)
        return t

    def drive(self, p, pidfd, sampler, out, err, t_start):
        self.t_sig = None
        ready = self.moment(p, out, err, t_start)
        if ready is False:
            ended = p.wait()
            self.fail(f"ended before the signal, status {ended}: {err.snapshot()[-300:]!r}")
            sampler.stop()
            return
        if self.t_sig is None:
            self.t_sig = self.send(p, out, err)
        if self.kind != "blocked" or self.reader_back:
            out.resume()
        err.resume()
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        ended = poller.poll(5000)
        out.resume()
        if not ended:
            self.fail(f"still running 5 s after the signal (wchan {wchan(p.pid)}, "
                      f"syscall {syscall_nr(p.pid)})")
            p.kill()
        t_exit = time.monotonic()
        self.stop_secs = t_exit - self.t_sig
        status = p.wait()
        ids = sampler.stop()
        out.join(WAIT_SECS)
        err.join(WAIT_SECS)
        self.ids = len(ids)
        self.check(status, out.snapshot(), err.snapshot())
        left = left_after(ids, t_exit)
        if left:
            self.fail(f"still loaded {GONE_SECS:g} s after its exit: {sorted(left)}")

    def check(self, status, o, e):
        name = signal.Signals(self.sig).name
        if self.stop_secs > STOP_SECS:
            self.fail(f"ended {self.stop_secs:.3f} s after {name} (more than {STOP_SECS:g} s)")
        if self.sig == signal.SIGKILL:
            if status != -signal.SIGKILL:
                self.fail(f"status {status} after SIGKILL")
            return
        tail = e.decode("utf-8", "replace").strip().splitlines()[-3:]
        if status == -self.sig and not self.caught:
            self.note += " (before its handler was set)"
            return
        if status == 1 and self.kind == "blocked":
            if f"{self.mode.tool}{BLOCKED_LINE}".encode() not in e:
                self.fail(f"exit 1 from a blocked report without the line saying so: {tail}")
            return
        if status != 0:
            self.fail(f"status {status} after {name} (handler set: {self.caught}): {tail}")
            return
        self.check_final(o, e)

    def check_final(self, o, e):
        m = self.mode
        before = self.reports(self.out_at_sig, self.err_at_sig)
        after = self.reports(o, e)
        if after <= before:
            self.fail(f"no final report after the signal ({before} report ends before it, {after} at exit)")
        if self.interval is None and m.every is None and before and not m.on_stderr:
            self.fail(f"{before} report ends before the signal without an interval")
        data = e if m.on_stderr else o
        lines = [ln for ln in data.decode("utf-8", "replace").splitlines()
                 if ln.strip() and not re.match(r"^\(\d+ intervals? skipped", ln)]
        if m.on_stderr:
            lines = [ln for ln in lines if not ln.startswith(m.tool + ": ")]
        if not lines or not m.end.search(lines[-1]):
            self.fail(f"the output does not end with a whole report: {lines[-2:]!r}")
        if m.json_lines:
            for ln in o.decode("utf-8", "replace").splitlines():
                try:
                    assert isinstance(json.loads(ln), dict)
                except (ValueError, AssertionError):
                    self.fail(f"not a JSON object: {ln[:200]!r}")
                    break


def calibrate(build, mode, calib):
    """One -v run to the banner: how long the start-up takes, how many
    log lines it prints (the range of the log moments). A cycle too."""
    c = Cycle(build, mode, signal.SIGINT, "report", None, random.Random(0), calib)
    c.verbose = True
    t0 = time.monotonic()
    c.run()
    calib.startup = max(0.01, getattr(c, "t_banner", t0) - t0)
    log = getattr(c, "err_at_sig", b"").split(b"Hit Ctrl-C to end.")[0]
    calib.loglines = max(1, log.count(b"\n"))
    return c

# ---- the workload ---------------------------------------------------------


def workload(disk_path, stop_file):
    """Reads, opens (some failing), loopback TCP and reads of the disk, each
    about every millisecond, until @stop_file exists or the parent goes."""
    parent = os.getppid()
    tmp = tempfile.NamedTemporaryFile(prefix="lifecycle-", delete=False)
    tmp.write(b"x" * 4096)
    tmp.close()

    def running():
        return os.getppid() == parent and not os.path.exists(stop_file)

    def files():
        while running():
            with open(tmp.name, "rb") as f:
                f.read()
            try:
                open(tmp.name + ".missing", "rb")
            except OSError:
                pass
            time.sleep(0.001)

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def server():
        c, _ = srv.accept()
        while c.recv(65536):
            pass

    def client():
        c = socket.create_connection(srv.getsockname())
        while running():
            c.sendall(b"y" * 1024)
            time.sleep(0.001)
        c.close()

    def disk():
        if not disk_path:
            return
        fd = os.open(disk_path, os.O_RDONLY)
        size = os.lseek(fd, 0, os.SEEK_END)
        i = 0
        while running():
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.lseek(fd, (i * 65536) % (size - PAGE), os.SEEK_SET)
            os.read(fd, PAGE)	# read(2), from the disk: readlat -B, biolat
            i += 1
            time.sleep(0.002)
        os.close(fd)

    threads = [threading.Thread(target=t, daemon=True) for t in (files, server, client, disk)]
    for t in threads:
        t.start()
    while running():
        time.sleep(0.05)
    os.unlink(tmp.name)


class Loop:
    """A loop device over a file in @tmp, direct I/O, no scheduler."""

    def __init__(self, tmp):
        self.dev = None
        img = os.path.join(tmp, "loop.img")
        with open(img, "wb") as f:
            f.truncate(16 << 20)
        r = subprocess.run(["losetup", "--direct-io=on", "--find", "--show", img],
                           capture_output=True, text=True)
        if r.returncode:
            print(f"lifecycle: no loop device ({r.stderr.strip()}): biolat -d not run")
            return
        self.dev = r.stdout.strip()
        if shutil.which("udevadm"):	# udev probes a new device: let it finish
            subprocess.run(["udevadm", "settle", "--timeout=15"], capture_output=True)
        sched = f"/sys/block/{os.path.basename(self.dev)}/queue/scheduler"
        try:
            with open(sched, "w") as f:
                f.write("none")
        except OSError:
            pass

    def close(self):
        if self.dev:
            subprocess.run(["losetup", "-d", self.dev], capture_output=True)

# ---- main -----------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description="start/stop cycles of every tool and mode")
    ap.add_argument("build")
    ap.add_argument("--cycles", type=int, default=int(os.environ.get("CYCLES", "100")))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--only", action="append", default=[],
                    help="TOOL or TOOL:MODE (as printed), repeatable")
    ap.add_argument("--kind", choices=[k for k, _ in KINDS], help="only this moment")
    ap.add_argument("--interval", type=float, help="only this interval")
    ap.add_argument("--workload", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.workload:
        workload(a.workload[0] if a.workload[0] != "-" else None, a.workload[1])
        return 0
    seed = a.seed if a.seed is not None else int(os.environ.get("LIFECYCLE_SEED") or
                                                   random.SystemRandom().randrange(1 << 32))
    print(f"lifecycle: seed {seed} (LIFECYCLE_SEED={seed} repeats this run), "
          f"{a.cycles} cycles per tool and mode", flush=True)
    tmp = tempfile.mkdtemp(prefix="lifecycle.")
    loop = Loop(tmp)
    stop_file = os.path.join(tmp, "stop")
    load = subprocess.Popen([sys.executable, os.path.abspath(__file__), "x", "--workload",
                             loop.dev or "-", stop_file])
    t0 = time.monotonic()
    failures, per_tool = 0, {}
    try:
        for m in modes(os.path.basename(loop.dev) if loop.dev else None):
            label = f"{m.tool}:{m.name}"
            if a.only and m.tool not in a.only and label not in a.only:
                continue
            rng = random.Random(f"{seed}:{label}")
            calib = Calibration()
            tm = time.monotonic()
            cycles = [calibrate(a.build, m, calib)]
            for i in range(1, a.cycles):
                sig = pick(rng, SIGNALS)
                kind = pick(rng, KINDS)
                iv = pick(rng, INTERVALS) if m.interval else None
                if m.interval and kind == "blocked" and iv not in (0.001, 0.01):
                    iv = rng.choice((0.001, 0.01))
                if not m.interval and kind == "inreport":
                    kind = "report"	# no reports but the last
                if m.interval and kind == "inreport" and rng.random() < 0.2:
                    iv = 1.2	# longer than the start-up's 1 s alarm
                kind = a.kind or kind
                iv = a.interval if a.interval is not None and m.interval else iv
                c = Cycle(a.build, m, sig, kind, iv, rng, calib)
                c.run()
                cycles.append(c)
                if os.environ.get("LIFECYCLE_VERBOSE"):
                    print(f"    {label} {i}: {c.describe()}: {getattr(c, 'stop_secs', 0) * 1000:.0f} ms, "
                          f"{getattr(c, 'ids', 0)} ids{': ' if c.errors else ''}{'; '.join(c.errors)}",
                          flush=True)
            st = per_tool.setdefault(m.tool, {"cycles": 0, "slowest": 0.0, "kill": 0.0, "failed": 0,
                                              "what": ""})
            for i, c in enumerate(cycles):
                st["cycles"] += 1
                if c.sig == signal.SIGKILL:
                    st["kill"] = max(st["kill"], getattr(c, "stop_secs", 0))
                elif getattr(c, "stop_secs", 0) > st["slowest"]:
                    st["slowest"], st["what"] = c.stop_secs, f"{m.name}, {c.describe()}"
                if c.errors:
                    failures += 1
                    st["failed"] += 1
                    for e in c.errors:
                        print(f"FAIL {label} cycle {i} ({c.describe()}): {e}", flush=True)
            worst = max(cycles, key=lambda c: getattr(c, "stop_secs", 0))
            print(f"  {label:28} {len(cycles)} cycles in {time.monotonic() - tm:.1f} s, slowest stop "
                  f"{getattr(worst, 'stop_secs', 0) * 1000:.0f} ms ({worst.describe()}), "
                  f"{sum(1 for c in cycles if c.errors)} failed", flush=True)
    finally:
        open(stop_file, "w").close()
        load.wait()
        loop.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"lifecycle: {time.monotonic() - t0:.0f} s, seed {seed}")
    for tool, st in per_tool.items():
        print(f"lifecycle: {tool}: {st['cycles']} cycles, slowest stop by SIGINT/SIGTERM "
              f"{st['slowest'] * 1000:.0f} ms ({st['what']}), by SIGKILL {st['kill'] * 1000:.0f} ms, "
              f"{st['failed']} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
