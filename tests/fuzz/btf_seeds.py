#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write the seed corpus of fuzz_btf_fields: small raw BTF files shaped like
the kernel's where the tools look (task_struct, dentry's anonymous union,
sock_common inside sock, a tracepoint's typedef, enums), and their hostile
variants (a member of another size, a struct inside itself, a want missing).

    btf_seeds.py DIR"""
import os
import struct
import sys

INT, PTR, ARRAY, STRUCT, UNION, ENUM, FWD, TYPEDEF = 1, 2, 3, 4, 5, 6, 7, 8
FUNC_PROTO = 13
SIGNED = 1


class Btf:
    def __init__(self):
        self.strings = b"\0"
        self.types = []		# encoded, type id = index + 1

    def name(self, s):
        if not s:
            return 0
        off = self.strings.find(b"\0" + s.encode() + b"\0")
        if off >= 0:
            return off + 1
        off = len(self.strings)
        self.strings += s.encode() + b"\0"
        return off

    def add(self, name, kind, vlen, size_type, extra=b"", kflag=0):
        self.types.append(struct.pack("<III", self.name(name),
                                      kflag << 31 | kind << 24 | vlen, size_type) + extra)
        return len(self.types)

    def int(self, name, size, signed=False):
        return self.add(name, INT, 0, size, struct.pack("<I", (SIGNED if signed else 0) << 24 | size * 8))

    def ptr(self, t=0):
        return self.add(None, PTR, 0, t)

    def array(self, t, index, n):
        return self.add(None, ARRAY, 0, 0, struct.pack("<III", t, index, n))

    def composite(self, kind, name, size, members, bitfields=False):
        """members: (name, type, bit offset[, bitfield bits])"""
        extra = b""
        for m in members:
            off = m[2] | (m[3] << 24 if len(m) > 3 else 0)
            extra += struct.pack("<III", self.name(m[0]), m[1], off)
        return self.add(name, kind, len(members), size, extra, 1 if bitfields else 0)

    def placeholder(self):
        """A type id to fill in later (a struct that refers to itself)."""
        self.types.append(None)
        return len(self.types)

    def enum(self, name, values):
        extra = b"".join(struct.pack("<Ii", self.name(n), v) for n, v in values)
        return self.add(name, ENUM, len(values), 4, extra)

    def raw(self):
        types = b"".join(self.types)
        hdr = struct.pack("<HBBIIIII", 0xEB9F, 1, 0, 24, 0, len(types), len(types), len(self.strings))
        return hdr + types + self.strings


def kernel_like(comm_size=16, comm_as_int=False, loop=False, drop=(), task_lacks=None):
    """The structs kernel_layout_wants and fuzz_btf_fields' other wants read."""
    b = Btf()
    u8, u16, u32, u64 = (b.int(n, s) for n, s in
                         (("unsigned char", 1), ("unsigned short", 2), ("unsigned int", 4),
                          ("long long unsigned int", 8)))
    s32 = b.int("int", 4, True)
    char = b.int("char", 1, True)
    vp = b.ptr()
    comm = b.int("long unsigned int", 8) if comm_as_int else b.array(char, s32, comm_size)

    def st(name, size, members, **kw):
        if name in drop:
            return b.add(name, FWD, 0, 0)
        return b.composite(STRUCT, name, size, members, **kw)

    task = b.placeholder()
    task_p = b.ptr(task)
    path = st("path", 16, [("mnt", vp, 0), ("dentry", vp, 64)])
    fs = st("fs_struct", 48, [("users", s32, 0), ("pwd", path, 256)])
    st("fdtable", 32, [("max_fds", u32, 0), ("fd", vp, 64)])
    st("files_struct", 64, [("count", s32, 0), ("fdt", vp, 256)])
    st("file", 64, [("f_path", path, 128), ("f_inode", vp, 256)])
    hl = st(None, 8, [("hash", u32, 0), ("len", u32, 32)])
    un = b.composite(UNION, None, 8, [(None, hl, 0), ("hash_len", u64, 0)])
    qstr = st("qstr", 16, [(None, un, 0), ("name", b.ptr(u8), 64)])
    st("dentry", 64, [("d_flags", u32, 0), ("d_parent", vp, 192), ("d_name", qstr, 256)])
    vfs = st("vfsmount", 16, [("mnt_root", vp, 0), ("mnt_sb", vp, 64)])
    st("mount", 64, [("mnt_parent", vp, 128), ("mnt_mountpoint", vp, 192), ("mnt", vfs, 256)])
    st("inode", 64, [("i_mode", u16, 0), ("i_sb", vp, 320), ("i_ino", u64, 448)])
    st("super_block", 64, [("s_dev", u32, 128), ("s_magic", u64, 448)])
    members = [("pid", s32, 0), ("in_iowait", u32, 35, 1), ("group_leader", task_p, 64),
               ("comm", comm, 128), ("files", vp, 256), ("fs", vp, 320)]
    members = [m for m in members if m[0] != task_lacks]
    if loop:
        members += [(None, task, 384)] * 3
    if "task_struct" in drop:
        b.types[task - 1] = struct.pack("<III", b.name("task_struct"), FWD << 24, 0)
    else:
        b.types[task - 1] = None
        saved = b.types
        b.types = []
        b.composite(STRUCT, "task_struct", 64, members, bitfields=True)
        saved[task - 1], b.types = b.types[0], saved
    num = st(None, 4, [("skc_num", u16, 0), ("skc_dport", u16, 16)])
    common = st("sock_common", 16, [("skc_daddr", u32, 0), (None, num, 32)])
    st("sock", 64, [("__sk_common", common, 0), ("sk_protocol", u16, 256)])
    b.enum("req_op", [("REQ_OP_READ", 0), ("REQ_OP_WRITE", 1)])
    b.enum(None, [("TCP_ESTABLISHED", 1), ("TCP_SYN_SENT", 2)])
    rq_p = b.ptr(b.add("request", FWD, 0, 0))
    proto = b.add(None, FUNC_PROTO, 2, 0, struct.pack("<IIII", 0, vp, b.name("rq"), rq_p))
    b.add("btf_trace_block_rq_issue", TYPEDEF, 0, b.ptr(proto))
    return b.raw()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = {
        "kernel-like": kernel_like(),
        "comm-of-8-bytes": kernel_like(comm_as_int=True),
        "comm-of-32": kernel_like(comm_size=32),
        "task-inside-itself": kernel_like(loop=True),
        "task-inside-itself-without-fs": kernel_like(loop=True, task_lacks="fs"),
        "no-task-struct": kernel_like(drop=("task_struct",)),
        "no-dentry": kernel_like(drop=("dentry", "qstr")),
        "empty": Btf().raw(),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name + ".btf"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
