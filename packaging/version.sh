#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The version of the tree in DIR (default: the current directory), the one
# place it comes from: the VERSION file that "make dist" puts in the
# source tarball (never committed here), else "git describe" of this
# project's checkout: tags vX.Y.Z with the v dropped, a 12-digit hash
# (the same in every clone), "-dirty" with uncommitted changes.
#
# VERSION first: a packager may keep the unpacked tarball in a git
# repository of their own (git-buildpackage), whose describe is not ours.
cd "${1:-.}" || exit 1
if [ -s VERSION ]; then
	head -n 1 VERSION
	exit 0
fi
# Only a checkout whose top is this tree: an archive without VERSION
# unpacked inside some other repository must not take that one's describe.
top=$(git rev-parse --show-toplevel 2>/dev/null)
if [ -n "$top" ] && [ "$top" -ef . ]; then
	v=$(git describe --tags --match 'v[0-9]*' --always --dirty --abbrev=12 2>/dev/null) && {
		echo "${v#v}"
		exit 0
	}
fi
echo "version.sh: neither a VERSION file nor a git checkout in $(pwd)" >&2
exit 1
