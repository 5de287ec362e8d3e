#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# What a user hands the tools: a --btf file made to make them spin, one
# from a kernel that changed a member's type, and, with the README's file
# capabilities, paths the user may not see.

load helpers

GEN=$BATS_TEST_DIRNAME/tools

setup() { common_setup; }
teardown() {
	common_teardown
	[ -z "${PRIVATE:-}" ] || rm -rf "$PRIVATE"
}

need_vmlinux() {
	[ -r /sys/kernel/btf/vmlinux ] || skip "no /sys/kernel/btf/vmlinux to modify"
}

# retype OUT STRUCT MEMBER ARGS...: the kernel's BTF with one member changed.
retype() {
	need_vmlinux
	python3 "$GEN/btf_retype.py" /sys/kernel/btf/vmlinux "$@"
}

# ---- item: a hostile --btf file must not make a tool spin ------------------

@test "--btf of a struct of 40 anonymous members of its own type (1.5 KB): biolat, tcprcv, readlat -P, opensnoop -C exit 1 within 2 s, one line" {
	local cmd start ms
	python3 "$GEN/hostile_btf.py" "$T/loop.btf"
	[ "$(stat -c %s "$T/loop.btf")" -lt 2048 ]
	bpftool btf dump file "$T/loop.btf" >/dev/null	# libbpf accepts it
	for cmd in biolat tcprcv "readlat -P" "opensnoop -C"; do
		start=$(date +%s%N)
		# shellcheck disable=SC2086
		run timeout -s KILL 10 "$BUILD"/$cmd --btf "$T/loop.btf" --duration 1
		ms=$((($(date +%s%N) - start) / 1000000))
		echo "$cmd: status $status after $ms ms: $output"
		[ "$status" -eq 1 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == "${cmd%% *}: "*"a struct (type "*") contains itself, looking for "*": a malformed BTF file"* ]]
		[ "$ms" -lt 2000 ]
	done
}

# ---- item: each member is read at the size and sign the BPF code reads -----

@test "--btf where request.__data_len is 8 bytes: biolat refuses, naming the member and both sizes (--check row, exit 1)" {
	retype "$T/r.btf" request __data_len --type "long unsigned int"
	run timeout 20 "$BUILD/biolat" --btf "$T/r.btf" --check
	[ "$status" -eq 1 ]
	grep -qE '^request layout +FAILED +cannot read struct request from --btf .*r\.btf \(request\.__data_len is an 8-byte unsigned integer in this BTF, where the BPF programs read a 4-byte unsigned integer\)' <<<"$output"
	run timeout 20 "$BUILD/biolat" --btf "$T/r.btf" --duration 0.2
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "biolat: cannot read struct request from --btf $T/r.btf (request.__data_len is an 8-byte unsigned integer"* ]]
}

@test "--btf where sock.sk_protocol is 4 bytes: tcprcv refuses (exit 1, one line)" {
	retype "$T/r.btf" sock sk_protocol --type "unsigned int"
	run timeout 20 "$BUILD/tcprcv" --btf "$T/r.btf" --duration 0.2
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"sock.sk_protocol is a 4-byte unsigned integer in this BTF, where the BPF programs read a 2-byte unsigned integer"* ]]
}

@test "--btf where task_struct.comm is an 8-byte integer: readlat -P and opensnoop -C refuse, readlat without -P runs" {
	retype "$T/r.btf" task_struct comm --type "long unsigned int"
	run timeout 20 "$BUILD/readlat" -P --btf "$T/r.btf" --check
	[ "$status" -eq 1 ]
	grep -qE '^process and file names +FAILED +task_struct\.comm is an 8-byte unsigned integer in this BTF, where the BPF programs read 16 bytes' <<<"$output"
	run timeout 20 "$BUILD/readlat" -P --btf "$T/r.btf" --duration 0.2
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	run timeout 20 "$BUILD/opensnoop" -C --btf "$T/r.btf" --duration 0.2
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"task_struct.comm is an 8-byte unsigned integer"* ]]
	# The mode that reads no kernel struct is not refused.
	run timeout 20 "$BUILD/readlat" --btf "$T/r.btf" --duration 0.2
	[ "$status" -eq 0 ]
}

@test "--btf where task_struct.in_iowait is 2 bits: readlat -B refuses; readlat -P, tcprcv, opensnoop -C do not" {
	retype "$T/r.btf" task_struct in_iowait --bits 2
	run timeout 20 "$BUILD/readlat" -B --btf "$T/r.btf" --check
	[ "$status" -eq 1 ]
	grep -qE '^waits for I/O \(-B\) +FAILED +task_struct\.in_iowait is a 2-bit bitfield in this BTF, where the BPF programs read a 1-bit bitfield' <<<"$output"
	run timeout 20 "$BUILD/readlat" -P --btf "$T/r.btf" --check
	[ "$status" -eq 0 ]
	grep -qE '^process and file names +ok' <<<"$output"
	# Nor does it refuse the tools that do not read it.
	run timeout 20 "$BUILD/tcprcv" --btf "$T/r.btf" --check
	grep -qE '^socket layout +ok' <<<"$output"
	run timeout 20 "$BUILD/opensnoop" -C --btf "$T/r.btf" --check
	grep -qE '^process and directory names +ok' <<<"$output"
}

# ---- item: user-named paths opened with the user's own permissions ----------

# A root directory closed to others (0700), holding a directory and a file.
private_dir() {
	PRIVATE=$(mktemp -d /tmp/tracetools-private.XXXXXX)
	chmod 700 "$PRIVATE"
	mkdir "$PRIVATE/hidden"
	echo secret > "$PRIVATE/file"
	chmod 600 "$PRIVATE/file"
}

# run_as_user ARGS: the setcap'ed copy as uid NOBODY, its output with the
# path under PRIVATE made the same whatever its last part.
run_as_user() {
	run timeout 20 "${NONROOT[@]}" "$EXE" "$@"
	output=${output//$PRIVATE\/hidden/X}
	output=${output//$PRIVATE\/file/X}
	output=${output//$PRIVATE\/none/X}
}

@test "setcap'ed readlat as a user: -c and --btf under a 0700 directory say the same for a directory, a file and nothing" {
	command -v setcap >/dev/null || skip "no setcap (libcap2-bin)"
	nonroot_setup readlat ""
	setcap cap_bpf,cap_perfmon,cap_dac_read_search+ep "$EXE" 2>"$T/setcap" ||
		skip "setcap failed here: $(cat "$T/setcap")"
	private_dir
	refute "${NONROOT[@]}" test -e "$PRIVATE/hidden"	# the user cannot see in
	local what out=()
	for what in hidden file none; do
		run_as_user -c "$PRIVATE/$what" --duration 0.2
		echo "-c $what: $status: $output"
		out+=("$status $output")
	done
	[ "${out[0]}" = "${out[1]}" ]
	[ "${out[0]}" = "${out[2]}" ]
	[ "${out[0]}" = "1 readlat: cannot open cgroup X: Permission denied" ]
	out=()
	for what in hidden file none; do
		run_as_user --btf "$PRIVATE/$what" --duration 0.2
		echo "--btf $what: $status: $output"
		out+=("$status $output")
	done
	[ "${out[0]}" = "${out[1]}" ]
	[ "${out[0]}" = "${out[2]}" ]
	[ "${out[0]}" = "2 readlat: $BTF_REFUSED" ]
}

BTF_REFUSED="--btf is refused: this program runs with file capabilities or set-id that its user does not have, and would parse the file with them; use --btf as root"

# A BTF file is parsed by libbpf in the process: with file capabilities a
# user of the binary would have libbpf's parser read a file of the user's
# choosing with them. The kernel marks such a run (AT_SECURE): --btf is
# refused there, before the file is looked at; root running the same
# binary (no privilege gained) may use it.
@test "setcap'ed readlat as a user: --btf refused (AT_SECURE), whatever the file; as root, used" {
	need_vmlinux
	command -v setcap >/dev/null || skip "no setcap (libcap2-bin)"
	nonroot_setup readlat ""
	setcap cap_bpf,cap_perfmon,cap_dac_read_search+ep "$EXE" 2>"$T/setcap" ||
		skip "setcap failed here: $(cat "$T/setcap")"
	cp /sys/kernel/btf/vmlinux "$NONROOT_DIR/vmlinux.btf"
	chmod 644 "$NONROOT_DIR/vmlinux.btf"
	"${NONROOT[@]}" test -r "$NONROOT_DIR/vmlinux.btf"	# the user may read it
	run --separate-stderr timeout 20 "${NONROOT[@]}" "$EXE" --btf "$NONROOT_DIR/vmlinux.btf" --duration 0.2
	echo "$status: $stderr"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "$stderr" = "readlat: $BTF_REFUSED" ]
	# the capabilities work for the user without --btf: only --btf is refused
	run --separate-stderr timeout 20 "${NONROOT[@]}" "$EXE" --duration 0.2
	echo "$status: $stderr"
	[ "$status" -eq 0 ]
	run --separate-stderr timeout 20 "$EXE" -P --btf "$NONROOT_DIR/vmlinux.btf" --duration 0.2
	echo "$status: $stderr"
	[ "$status" -eq 0 ]
}

@test "--btf FILE is opened once, and nothing else looks it up by name (strace)" {
	need_vmlinux
	command -v strace >/dev/null || skip "no strace"
	cp /sys/kernel/btf/vmlinux "$T/vmlinux.btf"
	run under_ptrace timeout 30 strace -f -qq -o "$T/strace" \
		-e trace=open,openat,openat2,access,faccessat,faccessat2,stat,lstat,newfstatat,statx,readlink,readlinkat \
		"$BUILD/readlat" -P --btf "$T/vmlinux.btf" --duration 0.2
	[ "$status" -eq 0 ]
	run grep -F "$T/vmlinux.btf" "$T/strace"
	echo "$output"
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"openat(AT_FDCWD, \"$T/vmlinux.btf\", O_RDONLY"* ]]
}
