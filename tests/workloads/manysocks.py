#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""manysocks: N loopback TCP connections, both ends open at once, one byte
each way, for a test that needs a tool to follow many live sockets.

usage: manysocks.py N HOLD

It raises its RLIMIT_NOFILE for 2N sockets, makes the N connections on
127.0.0.1 (each accepted, each end sending one byte the other reads),
prints "open N", then keeps them all until the file HOLD exists (checked
every 10 ms) and exits 0.
"""
import os
import resource
import socket
import sys
import time


def main():
    n, hold = int(sys.argv[1]), sys.argv[2]
    fds = 2 * n + 64
    resource.setrlimit(resource.RLIMIT_NOFILE, (fds, max(fds, resource.getrlimit(resource.RLIMIT_NOFILE)[1])))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(n)
    keep = []
    for _ in range(n):
        client = socket.create_connection(listener.getsockname())
        server, _ = listener.accept()
        client.sendall(b"x")
        server.sendall(b"y")
        server.recv(1)
        client.recv(1)
        keep += [client, server]
    print("open", n, flush=True)
    while not os.path.exists(hold):
        time.sleep(0.01)


if __name__ == "__main__":
    main()
