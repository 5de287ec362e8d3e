#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# only-add.sh LLVM_OBJDUMP OBJ: fail, naming each, if OBJ holds an atomic
# instruction other than add without fetch (BPF_XADD: BPF_STX | BPF_ATOMIC,
# imm 0), which kernels before 5.12 refuse in any program, reached or not.
# Read from the raw encoding, opcode 0xc3 (32-bit) or 0xdb (64-bit) and
# the imm bytes: llvm-objdump 14 prints a 32-bit fetch-add as a plain add.
set -euo pipefail
objdump=$1 obj=$2
dis=$("$objdump" -d "$obj")
bad=$(awk '$2 ~ /^(c3|db)$/ && $6 $7 $8 $9 != "00000000"' <<<"$dis")
if [ -n "$bad" ]; then
	sed "s|^|$obj: an atomic operation kernels before 5.12 refuse: |" <<<"$bad" >&2
	exit 1
fi
