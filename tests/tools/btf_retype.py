#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Copy a raw BTF file (/sys/kernel/btf/vmlinux) with one struct member
changed, as a kernel that changed that member's type would have it:

    btf_retype.py IN OUT STRUCT MEMBER --type NAME   member's type: the int NAME
    btf_retype.py IN OUT STRUCT MEMBER --bits N      member's bitfield width: N

STRUCT is the first struct of that name with members; MEMBER one of its
direct members. Everything else is copied byte for byte."""
import argparse
import struct
import sys

KIND_INT, KIND_ARRAY, KIND_STRUCT, KIND_UNION, KIND_ENUM = 1, 3, 4, 5, 6
KIND_FUNC_PROTO, KIND_VAR, KIND_DATASEC, KIND_DECL_TAG, KIND_ENUM64 = 13, 14, 15, 17, 19


def extra(kind, vlen):
    return {KIND_INT: 4, KIND_ARRAY: 12, KIND_STRUCT: 12 * vlen, KIND_UNION: 12 * vlen,
            KIND_ENUM: 8 * vlen, KIND_FUNC_PROTO: 8 * vlen, KIND_VAR: 4,
            KIND_DATASEC: 12 * vlen, KIND_DECL_TAG: 4, KIND_ENUM64: 12 * vlen}.get(kind, 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("struct")
    ap.add_argument("member")
    ap.add_argument("--type")
    ap.add_argument("--bits", type=int)
    a = ap.parse_args()
    data = bytearray(open(a.inp, "rb").read())
    _, _, _, hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from("<HBBIIIII", data)
    types, strs = hdr_len + type_off, hdr_len + str_off

    def name(off):
        end = data.index(b"\0", strs + off)
        return data[strs + off:end].decode()

    int_id, target, at, tid = None, None, types, 1
    while at < types + type_len:
        name_off, info, _ = struct.unpack_from("<III", data, at)
        kind, vlen = (info >> 24) & 0x1f, info & 0xffff
        if kind == KIND_INT and a.type and int_id is None and name(name_off) == a.type:
            int_id = tid
        if kind == KIND_STRUCT and vlen and target is None and name(name_off) == a.struct:
            target = (at, info, vlen)
        at += 12 + extra(kind, vlen)
        tid += 1
    if target is None or (a.type and int_id is None):
        sys.exit("no struct %s or int %s" % (a.struct, a.type))
    at, info, vlen = target
    for m in range(vlen):
        moff = at + 12 + 12 * m
        mname, mtype, mbits = struct.unpack_from("<III", data, moff)
        if mname and name(mname) == a.member:
            break
    else:
        sys.exit("no member %s in struct %s" % (a.member, a.struct))
    if a.type:
        struct.pack_into("<I", data, moff + 4, int_id)
    if a.bits is not None:
        if not info >> 31:
            sys.exit("struct %s has no bitfield sizes (kind_flag 0)" % a.struct)
        struct.pack_into("<I", data, moff + 8, (a.bits << 24) | (mbits & 0xffffff))
    open(a.out, "wb").write(data)


if __name__ == "__main__":
    main()
