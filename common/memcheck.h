/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What bpf(2) wrote, told to valgrind's memcheck. Valgrind 3.19 models no
 * batch command of bpf(2) (BPF_MAP_LOOKUP_BATCH is "unhandled eBPF
 * command 24" to it), so the keys and values the kernel filled in look
 * uninitialised, and every branch on them an error. Built with
 * -DTOOLS_MEMCHECK (make VALGRIND=1, which needs valgrind's
 * <valgrind/memcheck.h>), MEMCHECK_DEFINED(p, len) marks len bytes at p
 * as written; otherwise it costs nothing.
 */
#ifndef COMMON_MEMCHECK_H
#define COMMON_MEMCHECK_H

#ifdef TOOLS_MEMCHECK
#include <valgrind/memcheck.h>
#define MEMCHECK_DEFINED(p, len) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (len)))
#else
#define MEMCHECK_DEFINED(p, len) ((void)(p), (void)(len))
#endif

#endif
