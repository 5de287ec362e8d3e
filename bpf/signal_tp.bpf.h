/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The record of the signal:signal_deliver tracepoint, declared without
 * CO-RE (its format has been the same since the event appeared, 3.x), and
 * the syscall return codes that mean "interrupted, to be restarted or
 * turned into EINTR when the signal is delivered" (include/linux/errno.h).
 */
#ifndef SIGNAL_TP_BPF_H
#define SIGNAL_TP_BPF_H

struct signal_deliver_ctx {
	__u64 common;
	__s32 sig;
	__s32 err;
	__s32 code;
	__u32 pad;
	__u64 sa_handler;	/* 0 SIG_DFL, 1 SIG_IGN, else a handler */
	__u64 sa_flags;
};

#define SIG_HANDLER_IGN 1
#define SA_RESTART_FLAG 0x10000000
#define EINTR_ERR 4
#define ERESTARTSYS_ERR 512
#define ERESTARTNOINTR_ERR 513
#define ERESTARTNOHAND_ERR 514
#define ERESTART_RESTARTBLOCK_ERR 516

/* A return value that the application never sees as such. */
static __always_inline bool syscall_restarting(long ret)
{
	/* -512..-516 but -515 (ENOIOCTLCMD); one compare for a success. */
	return ret <= -ERESTARTSYS_ERR && ret >= -ERESTART_RESTARTBLOCK_ERR && ret != -515;
}

/* At the delivery of a signal after @code: does the application get
 * EINTR (true), or does the kernel restart the call after the handler? */
static __always_inline bool signal_interrupts(const struct signal_deliver_ctx *ctx, long code)
{
	if (ctx->sa_handler <= SIG_HANDLER_IGN)
		return false;	/* default action or ignored: restarted (or the process ends) */
	if (code == -ERESTARTNOINTR_ERR)
		return false;
	if (code == -ERESTARTSYS_ERR)
		return !(ctx->sa_flags & SA_RESTART_FLAG);
	return true;		/* ERESTARTNOHAND, ERESTART_RESTARTBLOCK with a handler */
}

#endif /* SIGNAL_TP_BPF_H */
