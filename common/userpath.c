// SPDX-License-Identifier: GPL-2.0-only
/* Opening what the user names with the user's permissions (userpath.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "userpath.h"

#define DAC_CAPS (1U << CAP_DAC_READ_SEARCH | 1U << CAP_DAC_OVERRIDE)

static int caps(bool set, struct __user_cap_data_struct *data)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return (int)syscall(set ? SYS_capset : SYS_capget, &hdr, data);
}

int user_open(const char *path, int flags)
{
	struct __user_cap_data_struct saved[2], as_user[2];
	uid_t uid = getuid(), euid = geteuid(), old_fsuid;
	gid_t gid = getgid(), egid = getegid(), old_fsgid;
	int fd, err;

	/* Root's own permissions are root's; without the capabilities (nor
	 * set-id) there is nothing to set aside. What cannot be read cannot
	 * be set aside either: do not open as more than the user. */
	if (!uid)
		return open(path, flags);
	if (caps(false, saved))
		return -1;
	if (!(saved[0].effective & DAC_CAPS) && uid == euid && gid == egid)
		return open(path, flags);
	as_user[0] = saved[0];
	as_user[1] = saved[1];
	as_user[0].effective &= ~DAC_CAPS;
	if (caps(true, as_user))
		return -1;	/* cannot drop them: do not open as more than the user */
	old_fsgid = (gid_t)setfsgid(gid);
	old_fsuid = (uid_t)setfsuid(uid);
	/* setfsuid() tells no error; an id it refuses leaves the old one,
	 * which the call with an invalid id (-1) reads back. */
	if ((uid_t)setfsuid((uid_t)-1) != uid || (gid_t)setfsgid((gid_t)-1) != gid) {
		fd = -1;
		err = EPERM;
	} else {
		fd = open(path, flags);
		err = errno;
	}
	setfsuid(old_fsuid);
	setfsgid(old_fsgid);
	caps(true, saved);
	errno = err;
	return fd;
}
