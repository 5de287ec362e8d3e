#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# gates-ordered.sh LLVM_OBJDUMP OBJ: fail, naming each, if OBJ (built with
# -g, not yet stripped) holds an atomic instruction from bpf/interval.bpf.h
# (found by its line info) other than an add with fetch (BPF_ADD |
# BPF_FETCH, imm 1): the interval gates need every add to be a full
# barrier, which only the fetching one is on every arch (interval.bpf.h).
# An object with the gates and no such add fails too: no line info, or
# the gates moved. Read from the raw encoding, as bpf/only-add.sh does.
set -euo pipefail
objdump=$1 obj=$2
dis=$("$objdump" -d -l "$obj")
# Each atomic instruction of interval.bpf.h, "fetch" or the instruction.
found=$(awk '/^; [^ ]*\.[ch]:[0-9]+$/ { src = $2 }
	$2 ~ /^(c3|db)$/ && src ~ /(^|\/)interval\.bpf\.h:/ {
		print ($6 $7 $8 $9 == "01000000" ? "fetch" : src ": " $0)
	}' <<<"$dis")
bad=$(grep -v '^fetch$' <<<"$found" || true)
if [ -n "$bad" ]; then
	sed "s|^|$obj: an interval gate's atomic that is not a fetching add: |" <<<"$bad" >&2
	exit 1
fi
if "$objdump" -t "$obj" | grep -qw interval_gates && ! grep -qx fetch <<<"$found"; then
	echo "$obj: no fetching add from bpf/interval.bpf.h (built without -g?)" >&2
	exit 1
fi
