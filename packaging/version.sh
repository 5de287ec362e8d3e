#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# version.sh [--date] [DIR]: the version of the tree in DIR (default: the
# current directory), the one place it comes from; with --date, the time
# of its commit (seconds since the epoch), which the release's files
# carry. In this order:
#
# 1. a VERSION file (its first line; its time for --date): a packager's
#    own, which wins over everything;
# 2. packaging/archive-version as git archive filled it in (export-subst:
#    make dist, a tarball of a commit from a forge): the commit's git
#    describe, else its hash cut to 12 digits;
# 3. "git describe" of this project's checkout: tags vX.Y.Z with the v
#    dropped, a 12-digit hash (the same in every clone), "-dirty" with
#    uncommitted changes.
#
# An exported tree before a checkout: a packager may keep it in a git
# repository of their own (git-buildpackage), whose describe is not ours.
date=0
[ "$1" = --date ] && { date=1; shift; }
cd "${1:-.}" || exit 1
if [ -s VERSION ]; then
	if [ "$date" = 1 ]; then stat -c %Y VERSION; else head -n 1 VERSION; fi
	exit 0
fi
field() { sed -n "s/^$1=//p" packaging/archive-version 2>/dev/null; }
commit=$(field commit)
# Unexpanded in a checkout ($Format:...$): a hash only where git put one.
if printf '%s\n' "$commit" | grep -qx '[0-9a-f]\{40\}'; then
	if [ "$date" = 1 ]; then
		field date
	else
		v=$(field describe)
		case $v in
		v[0-9]*) echo "${v#v}" ;;
		*) echo "$commit" | cut -c1-12 ;;	# no tag (or a git before 2.32)
		esac
	fi
	exit 0
fi
# Only a checkout whose top is this tree: an archive unpacked inside some
# other repository must not take that one's describe.
top=$(git rev-parse --show-toplevel 2>/dev/null)
if [ -n "$top" ] && [ "$top" -ef . ]; then
	if [ "$date" = 1 ]; then
		git log -1 --format=%ct && exit 0
	else
		v=$(git describe --tags --match 'v[0-9]*' --always --dirty --abbrev=12 2>/dev/null) && {
			echo "${v#v}"
			exit 0
		}
	fi
fi
echo "version.sh: no VERSION file, no packaging/archive-version filled in by git archive," \
	"and no git checkout in $(pwd)" >&2
exit 1
