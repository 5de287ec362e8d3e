#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# make install and make uninstall into a DESTDIR, with every place and
# the prefix of the names moved: what lands where, and what goes again.

load helpers
bats_require_minimum_version 1.5.0

setup() { common_setup; }
teardown() { common_teardown; }

TOOLS=(readlat opensnoop biolat tcprcv)

# make_in TARGET: make TARGET into $T/root with the places below.
make_in() {
	make -C "$BATS_TEST_DIRNAME/.." --no-print-directory OUTPUT="$BUILD" "$1" DESTDIR="$T/root" \
		PREFIX=/opt/tt SBINDIR=/opt/tt/bin MANDIR=/opt/man APP_PREFIX=my- \
		SYSTEMD_UNITDIR=/etc/units
}

@test "make install: SBINDIR, MANDIR, APP_PREFIX under DESTDIR; make uninstall removes it all" {
	make_in install
	local t u
	for t in "${TOOLS[@]}"; do
		[ -x "$T/root/opt/tt/bin/my-$t" ]
		cmp "$BUILD/$t" "$T/root/opt/tt/bin/my-$t"
		# The page is the installed command's: whatis' NAME, .TH, SYNOPSIS.
		sed -n '/^\.SH NAME/{n;p;q}' "$T/root/opt/man/man8/my-$t.8" | grep -qE "^my-$t \\\\- "
		grep -qE "^\.TH MY-${t^^} 8 " "$T/root/opt/man/man8/my-$t.8"
		grep -qx ".B my-$t" "$T/root/opt/man/man8/my-$t.8"
		refute grep -qx ".B $t" "$T/root/opt/man/man8/my-$t.8"
		man --warnings -l "$T/root/opt/man/man8/my-$t.8" > /dev/null
		u=$T/root/etc/units/$t-metrics.service
		grep -qE "^ExecStart=/opt/tt/bin/my-$t( |\$)" "$u"
		grep -qx "Documentation=man:my-$t(8)" "$u"
		refute grep -q /usr/local/sbin "$u"
	done
	make_in uninstall
	run find "$T/root" ! -type d
	echo "$output"
	[ -z "$output" ]
}

@test "make install without APP_PREFIX keeps the names and the pages as they are" {
	make -C "$BATS_TEST_DIRNAME/.." --no-print-directory OUTPUT="$BUILD" install DESTDIR="$T/root" \
		PREFIX=/usr SYSTEMD_UNITDIR=/lib/systemd/system
	local t
	for t in "${TOOLS[@]}"; do
		[ -x "$T/root/usr/sbin/$t" ]
		cmp "$BATS_TEST_DIRNAME/../man/$t.8" "$T/root/usr/share/man/man8/$t.8"
		grep -qE "^ExecStart=/usr/sbin/$t " "$T/root/lib/systemd/system/$t-metrics.service"
	done
}
