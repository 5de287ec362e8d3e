/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Paths the user names (-c, --btf) opened with the user's own permissions.
 * With the README's file capabilities (cap_dac_read_search+ep) the tool
 * may search any directory and read any file: that is for tracefs, not
 * for what a user names, or the tool would tell whether a path they may
 * not see exists, and what it is.
 */
#ifndef COMMON_USERPATH_H
#define COMMON_USERPATH_H

/* open(2) of @path as the real user would: CAP_DAC_READ_SEARCH and
 * CAP_DAC_OVERRIDE off the effective set (and the file system ids the
 * real ones) around it, unless the real user is root. */
int user_open(const char *path, int flags);

#endif /* COMMON_USERPATH_H */
