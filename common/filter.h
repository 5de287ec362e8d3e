/* SPDX-License-Identifier: GPL-2.0-only */
/* Sizes shared by the in-kernel filter and the user-space options. */
#ifndef FILTER_H
#define FILTER_H

#define FILTER_COMM_LEN 16	/* TASK_COMM_LEN */

#endif
