#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# The man pages: groff has nothing to say about any of them, and each
# page's OPTIONS are the options of its tool's --help, no more, no fewer.

load helpers

TOOLS=(readlat opensnoop biolat tcprcv)
MAN=$BATS_TEST_DIRNAME/../man

# help_opts TOOL: the option words of TOOL --help ("-X", "--long"), one a
# line: argp's option lines are "  -X, --long..." or "      --long...".
help_opts() {
	"$BUILD/$1" --help | grep -E '^  (-[[:alnum:]]|    --)' |
		grep -oE '^ +(-[[:alnum:]], )?--?[[:alnum:]-]+' | tr -d ',' | tr ' ' '\n' | grep .
}

# man_opts PAGE: the option words in the tags (the line after .TP) of
# PAGE's OPTIONS section, one a line.
man_opts() {
	awk '/^\.SH/ { opts = ($0 == ".SH OPTIONS") } opts && prev == ".TP" { print } { prev = $0 }' "$1" |
		sed 's/\\-/-/g' | grep -oE '(^|[^[:alnum:]-])--?[[:alnum:]][[:alnum:]-]*' | sed -E 's/^[^-]//'
}

@test "man --warnings: no page has a warning (as lintian renders it)" {
	local t out
	for t in "${TOOLS[@]}"; do
		out=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
			man --warnings -E UTF-8 -l -Tutf8 -Z "$MAN/$t.8" 2>&1 >/dev/null)
		[ -z "$out" ] || { echo "man/$t.8: $out"; return 1; }
		out=$(LC_ALL=C MANWIDTH=80 man --warnings -l "$MAN/$t.8" 2>&1 >/dev/null)
		[ -z "$out" ] || { echo "man/$t.8 (C locale): $out"; return 1; }
	done
}

@test "each man page's OPTIONS are exactly its tool's --help options" {
	local t help man
	for t in "${TOOLS[@]}"; do
		help=$(help_opts "$t" | sort -u)
		man=$(man_opts "$MAN/$t.8" | sort -u)
		# the parsers found the options, not nothing on both sides
		grep -qx -- --version <<< "$help"
		grep -qx -- -p <<< "$help"
		[ "$(wc -l <<< "$help")" -ge 20 ]
		if [ "$help" != "$man" ]; then
			echo "$t: < only in --help, > only in man/$t.8 OPTIONS:"
			diff <(echo "$help") <(echo "$man") | grep '^[<>]'
			return 1
		fi
	done
}
