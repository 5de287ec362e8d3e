// SPDX-License-Identifier: GPL-2.0-only
/* One CO-RE relocation (task->tgid): what a tool like biolat or tcprcv pays
 * at start-up for needing the kernel's struct layouts. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

__u64 seen;

SEC("tp/syscalls/sys_enter_getppid")
int core_prog(void *ctx)
{
	struct task_struct *task = (void *)bpf_get_current_task();

	seen += BPF_CORE_READ(task, tgid);
	return 0;
}
