#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""startup_stop.py MARKER SIGNAL TOOL [ARGS...]

Hold TOOL in its start-up, after its stderr (libbpf's debug log, -v with
LIBBPF_DEBUG=1) has shown MARKER, and stop it there with SIGNAL; then
check that it ends and that every BPF map and program it had open is
gone. The tool's stderr is a one-page pipe that this script keeps all but
a small window of full with filler: the tool blocks in a write within a
line or two of where it is, and the script looks at the pipe (tee(2), not
consuming it) before giving the tool more room (while it is stopped by
SIGSTOP, so that it cannot take more than the window). Nothing is timed: a write
that blocks is a write that blocks, on any machine.

Prints what it saw; exits 0 if the tool ended within STOP_SECS (default 2)
and what it held was freed within 2 s more, 1 otherwise, 2 if MARKER never
came (the tool finished its start-up first: a bug of this script).
"""
import ctypes
import fcntl
import json
import os
import signal
import subprocess
import sys
import time

F_SETPIPE_SZ = 1031
PAGE = 4096
WINDOW = 200
FILL = b"\0"
libc = ctypes.CDLL(None, use_errno=True)


def wchan(pid):
    try:
        with open(f"/proc/{pid}/wchan") as f:
            return f.read().strip()
    except OSError:
        return ""


def state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


def peek(r):
    """What the pipe holds, left in it."""
    pr, pw = os.pipe()
    fcntl.fcntl(pw, F_SETPIPE_SZ, PAGE * 4)
    n = libc.tee(r, pw, PAGE * 4, 0)
    os.close(pw)
    data = os.read(pr, PAGE * 4) if n > 0 else b""
    os.close(pr)
    return data


def held_ids(pid):
    ids = set()
    fd_dir = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(fd_dir):
        try:
            with open(f"{fd_dir}/{fd}") as f:
                for line in f:
                    key, _, val = line.partition(":")
                    if key in ("map_id", "prog_id"):
                        ids.add((key[:-3], int(val)))
        except OSError:
            pass
    return ids


def live_ids():
    ids = set()
    for kind in ("map", "prog"):
        out = subprocess.run(["bpftool", "-j", kind, "show"], capture_output=True, text=True).stdout
        for obj in json.loads(out or "[]"):
            ids.add((kind, obj["id"]))
    return ids


def main():
    marker, sig, argv = sys.argv[1].encode(), getattr(signal, sys.argv[2]), sys.argv[3:]
    stop_secs = float(os.environ.get("STOP_SECS", "2"))
    r, w = os.pipe()
    fcntl.fcntl(w, F_SETPIPE_SZ, PAGE)
    os.write(w, FILL * (PAGE - WINDOW))
    env = dict(os.environ, LIBBPF_DEBUG="1")
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=w, env=env)
    seen = b""
    deadline = time.monotonic() + 60
    while True:
        if p.poll() is not None or time.monotonic() > deadline:
            print(f"the tool got through its start-up before {marker!r}: {p.poll()}")
            p.kill()
            return 2
        if not wchan(p.pid).endswith("pipe_write"):
            time.sleep(0.001)
            continue
        if marker in seen + peek(r).replace(FILL, b""):
            break
        # Give it another window: take the page, fill all but WINDOW again,
        # while it is stopped (it would fill the page meanwhile).
        p.send_signal(signal.SIGSTOP)
        while state(p.pid) not in ("T", ""):
            time.sleep(0.001)
        seen += os.read(r, PAGE).replace(FILL, b"")
        os.write(w, FILL * (PAGE - WINDOW))
        p.send_signal(signal.SIGCONT)
    ids = held_ids(p.pid)
    print(f"held in start-up after {marker!r}: {len(ids)} BPF maps and programs")
    if not ids:
        print("it holds no BPF object: choose a later marker")
        p.kill()
        return 2
    t0 = time.monotonic()
    p.send_signal(sig)
    try:
        status = p.wait(timeout=stop_secs)
    except subprocess.TimeoutExpired:
        print(f"still running {stop_secs} s after {sys.argv[2]} (wchan {wchan(p.pid)})")
        p.kill()
        p.wait()
        return 1
    print(f"ended {time.monotonic() - t0:.3f} s after {sys.argv[2]}, status {status}")
    for _ in range(200):
        left = ids & live_ids()
        if not left:
            print("everything it held is gone")
            return 0
        time.sleep(0.01)
    print(f"still loaded 2 s after it ended: {sorted(left)}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
