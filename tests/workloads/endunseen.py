#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""endunseen: three read(2)s of a FIFO, the middle one starting under one
name and ending under another, for the test of "missed"
(bpf/start.bpf.h: a start whose end no program saw). readlat judges -n at
both ends of a read, so it sees the start and not the end.

usage: endunseen.py FIFO DIR NAME OTHER

It prints "pid=P", names its main thread NAME, then for call i = 1, 2, 3
waits for DIR/go.i (stat, no read) and reads 1 byte of FIFO (which it
holds open), then prints "done i". While call 2 waits in the kernel, a helper thread
(started first, so it keeps the interpreter's name; it reads with
pread64, which readlat does not trace by default, so a filter on NAME,
its process's name, never sees its reads) renames the main thread OTHER and prints
"renamed"; after call 2 the main thread takes NAME again, so call 3
finds call 2's start still open. Only another thread of the process may
write a thread's comm.
"""
import os
import sys
import threading
import time

fifo, d, name, other = sys.argv[1:5]
tid = threading.get_native_id()
READ = "0"	# x86_64's read(2), as /proc/.../syscall shows it


def wait_file(path):
    while not os.path.exists(path):
        time.sleep(0.005)


def rename_in_call():
    wait_file(os.path.join(d, "go.2"))
    # pread64, which readlat does not trace by default: a filter on NAME
    # matches this thread too while the process is called NAME
    while True:
        fd = os.open(f"/proc/self/task/{tid}/syscall", os.O_RDONLY)
        nr = os.pread(fd, 64, 0).split()[0].decode()
        os.close(fd)
        if nr == READ:
            break
        time.sleep(0.005)
    with open(f"/proc/self/task/{tid}/comm", "w") as f:
        f.write(other)
    print("renamed", flush=True)


helper = threading.Thread(target=rename_in_call)
helper.start()
fd = os.open(fifo, os.O_RDONLY)
print(f"pid={os.getpid()}", flush=True)
for i in (1, 2, 3):
    if i != 2:
        with open("/proc/thread-self/comm", "w") as f:
            f.write(name)
    wait_file(os.path.join(d, f"go.{i}"))
    os.read(fd, 1)
    print(f"done {i}", flush=True)
helper.join()
