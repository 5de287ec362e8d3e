#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# skeleton.sh BPFTOOL NAME OBJ NOATOMICS_OBJ: bpftool's skeleton NAME of
# OBJ, whose open takes the bytes of NOATOMICS_OBJ instead where the
# kernel's BPF has no atomic operation but add (tool_elf_bytes(),
# common/probe.c). NOATOMICS_OBJ is the same
# source built with BPF_NO_ATOMICS, and the skeleton's structs are OBJ's:
# the two objects must declare the same maps, programs and variables,
# and this checks it, comparing their two skeletons line for line, the
# bytes left out.
set -euo pipefail
bpftool=$1 name=$2 obj=$3 alt=$4
main=$("$bpftool" gen skeleton "$obj" name "$name")
other=$("$bpftool" gen skeleton "$alt" name "$name")
bytes_def="static inline const void *${name}__elf_bytes(size_t *sz)"
bytes_decl="$bytes_def;"
set_data="	s->data = (void *)${name}__elf_bytes(&s->data_sz);"

# The definition of the bytes function, or every line but it.
bytes() { awk -v def="$bytes_def" '$0 == def { in_fn = 1 } in_fn { print } in_fn && $0 == "}" { exit }'; }
not_bytes() { awk -v def="$bytes_def" '$0 == def { in_fn = 1 } !in_fn { print } in_fn && $0 == "}" { in_fn = 0 }'; }

if ! diff <(not_bytes <<<"$main") <(not_bytes <<<"$other") >&2; then
	echo "skeleton.sh: $alt declares other maps, programs or variables than $obj" >&2
	exit 1
fi
for line in "#include <bpf/libbpf.h>" "$bytes_decl" "$set_data"; do
	if [ "$(grep -cxF -- "$line" <<<"$main")" != 1 ]; then
		echo "skeleton.sh: no line '$line' in bpftool's skeleton (another bpftool?)" >&2
		exit 1
	fi
done

# The main object's skeleton, its open choosing the bytes, and the other
# object's bytes after it, within the header's guard.
awk -v decl="$bytes_decl" -v set_data="$set_data" -v name="$name" '
	$0 == "#include <bpf/libbpf.h>" { print; print "#include \"tool.h\"\t/* tool_elf_bytes() */"; next }
	$0 == decl {
		print
		print "static inline const void *" name "__elf_bytes_noatomics(size_t *sz);"
		next
	}
	$0 == set_data {
		print "\ts->data = (void *)tool_elf_bytes(" name "__elf_bytes, " name "__elf_bytes_noatomics,"
		print "\t\t\t\t\t  &s->data_sz);"
		next
	}
	/^#endif \/\* __.*_SKEL_H__ \*\/$/ { guard = $0; next }
	{ print }
	END { if (guard == "") exit 1 }
' <<<"$main"
bytes <<<"$other" | sed "1s/__elf_bytes(/__elf_bytes_noatomics(/"
echo
grep -x '#endif /\* __.*_SKEL_H__ \*/' <<<"$main"
