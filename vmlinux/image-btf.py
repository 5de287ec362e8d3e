#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""image-btf.py IMAGE OUT: the kernel's BTF, as /sys/kernel/btf/vmlinux
would give it, from a kernel image file of a Debian package (an arm64
Image, plain or gzipped), for the vmlinux.h of an arch this machine does
not run (make vmlinux ARCH=arm64).

The image holds the BTF the build made (the .BTF section, which the
kernel exports as /sys/kernel/btf/vmlinux) byte for byte: a header (magic
0xeB9F, version 1, header length 24) whose type and string lengths give
its size. Exactly one place of the image must read as such a header with
its string section where the kernel puts it (right after the types,
NUL-terminated): none or two is an error, never a guess."""
import gzip
import struct
import sys

HEADER = struct.Struct("<HBBIIIII")  # magic version flags hdr_len type_off type_len str_off str_len
LEAD = struct.pack("<HBBI", 0xEB9F, 1, 0, HEADER.size)


def candidates(image):
    at = image.find(LEAD)
    while 0 <= at <= len(image) - HEADER.size:
        _, _, _, hdr_len, type_off, type_len, str_off, str_len = HEADER.unpack_from(image, at)
        end = at + hdr_len + str_off + str_len
        strings = image[at + hdr_len + str_off:end]
        if (type_off == 0 and str_off == type_len and type_len and str_len and end <= len(image)
                and strings[:1] == b"\0" and strings[-1:] == b"\0"):
            yield image[at:end]
        at = image.find(LEAD, at + 1)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: image-btf.py IMAGE OUT")
    with open(sys.argv[1], "rb") as f:
        image = f.read()
    if image[:2] == b"\x1f\x8b":
        image = gzip.decompress(image)
    found = list(candidates(image))
    if len(found) != 1:
        sys.exit(f"image-btf.py: {sys.argv[1]}: {len(found)} BTF blobs found, want exactly 1")
    with open(sys.argv[2], "wb") as f:
        f.write(found[0])


if __name__ == "__main__":
    main()
