#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write a small raw BTF file that libbpf accepts but that a naive reader
walks for ever: each struct named below has MEMBERS anonymous members of
its own type (a struct inside itself), so a search for a member it lacks (the
names wanted are in the strings, on no member) crosses MEMBERS ** depth anonymous members.

    hostile_btf.py OUT [MEMBERS]

The structs are the ones every tool looks up first (task_struct,
request, sock_common), so biolat, tcprcv and readlat -P all meet them."""
import struct
import sys

NAMES = ["task_struct", "request", "sock_common"]
# Member names the tools look for: in the strings, so that the search runs.
WANTED = ["group_leader", "comm", "q", "__data_len", "cmd_flags", "skc_daddr", "skc_family"]
KIND_INT, KIND_STRUCT = 1, 4


def main():
    out = sys.argv[1]
    members = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    strings = b"\0int\0"
    name_off = {}
    for n in NAMES:
        name_off[n] = len(strings)
        strings += n.encode() + b"\0"
    for n in WANTED:
        strings += n.encode() + b"\0"
    # type 1: int, 4 bytes, signed
    types = struct.pack("<III", 1, KIND_INT << 24, 4) + struct.pack("<I", (1 << 24) | 32)
    for i, n in enumerate(NAMES):
        tid = 2 + i
        types += struct.pack("<III", name_off[n], KIND_STRUCT << 24 | members, 8)
        for _ in range(members):
            types += struct.pack("<III", 0, tid, 0)	# anonymous, its own type
    hdr = struct.pack("<HBBIIIII", 0xEB9F, 1, 0, 24, 0, len(types), len(types), len(strings))
    with open(out, "wb") as f:
        f.write(hdr + types + strings)


if __name__ == "__main__":
    main()
