// SPDX-License-Identifier: GPL-2.0-only
/*
 * bpfls: list every BPF program and map loaded in the kernel, one line each
 * ("prog ID NAME" / "map ID NAME"), for the VM tests' leak checks. Debian's
 * bpftool is dynamic and the guest has no libraries; this is static and
 * needs nothing but the bpf() syscall. Exit 1 if the kernel refuses.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

/* Walk the ids of one kind; print each object's name. */
static int list(const char *kind, int next_cmd, int fd_cmd)
{
	union bpf_attr attr;
	__u32 id = 0;

	for (;;) {
		struct bpf_prog_info pinfo;
		struct bpf_map_info minfo;
		const char *name;
		int fd;

		memset(&attr, 0, sizeof(attr));
		attr.start_id = id;
		if (sys_bpf(next_cmd, &attr)) {
			if (errno == ENOENT)
				return 0;
			fprintf(stderr, "bpfls: %s ids: %s\n", kind, strerror(errno));
			return 1;
		}
		id = attr.next_id;

		memset(&attr, 0, sizeof(attr));
		if (fd_cmd == BPF_PROG_GET_FD_BY_ID)
			attr.prog_id = id;
		else
			attr.map_id = id;
		fd = (int)sys_bpf(fd_cmd, &attr);
		if (fd < 0) {
			if (errno == ENOENT)	/* freed meanwhile */
				continue;
			fprintf(stderr, "bpfls: %s %u: %s\n", kind, id, strerror(errno));
			return 1;
		}

		memset(&attr, 0, sizeof(attr));
		memset(&pinfo, 0, sizeof(pinfo));
		memset(&minfo, 0, sizeof(minfo));
		attr.info.bpf_fd = (__u32)fd;
		if (fd_cmd == BPF_PROG_GET_FD_BY_ID) {
			attr.info.info_len = sizeof(pinfo);
			attr.info.info = (__u64)(unsigned long)&pinfo;
			name = pinfo.name;
		} else {
			attr.info.info_len = sizeof(minfo);
			attr.info.info = (__u64)(unsigned long)&minfo;
			name = minfo.name;
		}
		if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr)) {
			fprintf(stderr, "bpfls: %s %u info: %s\n", kind, id, strerror(errno));
			close(fd);
			return 1;
		}
		printf("%s %u %s\n", kind, id, name[0] ? name : "-");
		close(fd);
	}
}

int main(void)
{
	int err = list("prog", BPF_PROG_GET_NEXT_ID, BPF_PROG_GET_FD_BY_ID);

	err |= list("map", BPF_MAP_GET_NEXT_ID, BPF_MAP_GET_FD_BY_ID);
	return err;
}
