#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0-only
# Shell completion (make completions): bash's driven as readline drives
# it, loaded by bash-completion from the generated file; zsh's and fish's
# parsed by their shells, fish's queried. What is offered is what the
# tools parse: every --help option, and value words each tool accepts.

load helpers
bats_require_minimum_version 1.5.0

TOOLS='readlat opensnoop biolat tcprcv'
COMP=$BUILD/completion
BASH_COMPLETION=${BASH_COMPLETION:-/usr/share/bash-completion/bash_completion}

setup() {
	common_setup
	[ -r "$BASH_COMPLETION" ] || { echo "bash-completion is not installed" >&2; return 1; }
	# where bash-completion looks for a user's completions, as it would
	# look in /usr/share/bash-completion/completions once installed
	mkdir -p "$T/bc/completions"
	for t in $TOOLS; do
		ln -s "$COMP/bash/$t" "$T/bc/completions/$t"
	done
}
teardown() { common_teardown; }

# help_longs TOOL: the long options TOOL's --help lists, one per line.
help_longs() {
	"$BUILD/$1" --help | grep -oE '^ +(-[[:alnum:]], )?--[[:alnum:]-]+' | grep -oE -- '--[[:alnum:]-]+$'
}

# complete_bash LINE: what bash offers for the last word of LINE (a
# trailing space: an empty word), one per line, sorted. A fresh shell
# loads bash-completion, which loads the tool's file on demand, then the
# function `complete -p` names is called the way readline calls it.
complete_bash() {
	BASH_COMPLETION_USER_DIR=$T/bc bash --norc --noprofile -c '
		. "$1"
		compopt() { :; }	# readline is not there to take the options
		cmd=${2%% *}
		_completion_loader "$cmd"
		spec=$(complete -p "$cmd") || exit 1
		[[ $spec == "complete -F "* ]] || { echo "not a function: $spec" >&2; exit 1; }
		fn=${spec#complete -F }
		fn=${fn%% *}
		read -ra COMP_WORDS <<< "$2"
		[[ $2 != *" " ]] || COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE=$2
		COMP_POINT=${#2}
		COMPREPLY=()
		"$fn" "$cmd" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$BASH_COMPLETION" "$1" | sort
}

# complete_zsh LINE: what an interactive zsh lists for LINE then TAB,
# its completion system (compinit) finding the generated files in $fpath;
# typed on a pseudo-terminal (zsh/zpty), read until a line typed after it.
complete_zsh() {
	cat > "$T/complete.zsh" <<-'EOF'
		zmodload zsh/zpty
		zpty -b z 'zsh -f -i'
		zpty -w z "PS1='%% '; fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D; print READ\${:-Y}"
		zpty -r z line '*READY*'
		zpty -w -n z "$2"$'\t'
		zpty -w z $'\C-uprint DON\${:-E}'
		zpty -r z out '*DONE*'
		print -r -- "$out"
		zpty -d z
	EOF
	timeout "$WAIT_SECS" zsh -f "$T/complete.zsh" "$COMP/zsh" "$1" | sed 's/\x1b\[[0-9;?]*[A-Za-z]/ /g' | tr -d '\r'
}

# table_words TOOL KIND: "OPTION WORD" for each word of each option of
# KIND (word or list) in TOOL's completion table.
table_words() {
	"$BUILD/$1" --completion-table | awk -F'\t' -v kind="$2" '
		$1 == "option" { want = $5 == kind; opt = $3 != "-" ? "--" $3 : "-" $2 }
		$1 == "word" && want { print opt, $4 }'
}

@test "completion: bash-completion loads each tool's generated file" {
	for t in $TOOLS; do
		run env BASH_COMPLETION_USER_DIR="$T/bc" bash --norc --noprofile -c \
			'. "$1"; _completion_loader "$2"; complete -p "$2"' _ "$BASH_COMPLETION" "$t"
		echo "$t: $output"
		[ "$status" -eq 0 ]
		[ "$output" = "complete -F _tracetools_$t $t" ]
	done
}

@test "completion: bash offers every long option of --help, and none it hides" {
	local t o n offered
	for t in $TOOLS; do
		offered=$(complete_bash "$t -")
		n=0
		for o in $(help_longs "$t"); do
			echo "$t $o"
			grep -qxF -- "$o" <<< "$offered"
			n=$((n + 1))
		done
		[ "$n" -ge 20 ]		# --help read right: every tool has the shared ones
		refute grep -q -- '--completion-table' <<< "$offered"
	done
	# and the short forms; what each tool adds to the shared ones
	grep -qxF -- -s <<< "$(complete_bash 'readlat -')"
	grep -qxF -- --syscalls <<< "$(complete_bash 'readlat --sy')"
	[ "$(complete_bash 'opensnoop --err')" = --errno ]
	[ "$(complete_bash 'biolat --di')" = --disk ]
	[ "$(complete_bash 'tcprcv --so')" = --sort ]
	# opensnoop's -d only says to use --duration: not offered
	refute grep -qxF -- -d <<< "$(complete_bash 'opensnoop -')"
}

@test "completion: bash completes the words an option takes" {
	local t
	for t in $TOOLS; do
		[ "$(complete_bash "$t --output " | tr '\n' ' ')" = "json openmetrics text " ]
		[ "$(complete_bash "$t -o op")" = openmetrics ]
		[ "$(complete_bash "$t --probe " | tr '\n' ' ')" = "fentry kprobe tracepoint " ]
	done
	[ "$(complete_bash 'readlat -s read,pre' | tr '\n' ' ')" = \
		"read,pread64 read,preadv read,preadv2 " ]
	[ "$(complete_bash 'opensnoop --by ' | tr '\n' ' ')" = "comm errno file process " ]
	[ "$(complete_bash 'tcprcv --by ' | tr '\n' ' ')" = "flow port process " ]
	[ "$(complete_bash 'tcprcv -s re' | tr '\n' ' ')" = "read retrans " ]
	[ "$(complete_bash 'opensnoop -f O_CR')" = O_CREAT ]
	grep -qxF O_DIRECTORY <<< "$(complete_bash 'opensnoop --flag O_')"
}

@test "completion: opensnoop --errno completes errno names" {
	local offered
	offered=$(complete_bash 'opensnoop --errno ENO')
	echo "$offered"
	grep -qxF ENOENT <<< "$offered"
	grep -qxF ENOTDIR <<< "$offered"
	refute grep -qv '^ENO' <<< "$offered"
	grep -qxF EACCES <<< "$(complete_bash 'opensnoop --errno ')"
}

@test "completion: -p completes live PIDs, -t threads" {
	local pid offered t
	sleep 600 &
	pid=$!
	JOBS+=("$pid")
	for t in $TOOLS; do
		offered=$(complete_bash "$t -p ")
		grep -qxF "$pid" <<< "$offered"
		grep -qxF "$$" <<< "$offered"
		refute grep -qvE '^[0-9]+$' <<< "$offered"
		grep -qxF "$pid" <<< "$(complete_bash "$t --pid ${pid:0:${#pid}-1}")"
		grep -qxF "$pid" <<< "$(complete_bash "$t -t ")"
	done
	kill "$pid"
	wait "$pid" || true
	refute grep -qxF "$pid" <<< "$(complete_bash 'readlat -p ')"
}

@test "completion: biolat -d completes the disks in /sys/block" {
	local want
	want=$(ls /sys/block | sort)
	[ -n "$want" ]
	[ "$(complete_bash 'biolat -d ')" = "$want" ]
	[ "$(complete_bash 'biolat --disk ')" = "$want" ]
	grep -qxF "$(head -n1 <<< "$want")" <<< "$(complete_bash "biolat -d $(head -c2 <<< "$want")")"
}

@test "completion: every word offered is one the tool accepts" {
	local t opt w n=0
	for t in $TOOLS; do
		while read -r opt w; do
			# parsed in order: a bad value fails (2) before --help exits 0
			run "$BUILD/$t" "$opt" "$w" --help
			[ "$status" -eq 0 ] || { echo "$t $opt $w: $output"; return 1; }
			n=$((n + 1))
		done < <(table_words "$t" word; table_words "$t" list)
		# and the check can fail
		run "$BUILD/$t" --output xml --help
		[ "$status" -eq 2 ]
	done
	[ "$n" -ge 100 ]	# errno names among them
	for w in $(complete_bash 'biolat -d '); do
		run "$BUILD/biolat" -d "$w" --help
		[ "$status" -eq 0 ] || { echo "biolat -d $w: $output"; return 1; }
	done
}

@test "completion: every --help option is in the bash, zsh and fish files" {
	local t o
	for t in $TOOLS; do
		for o in $(help_longs "$t"); do
			echo "$t $o"
			grep -qE -- "(^|[[:space:]|'{,])$o( |\)|'|\$)" "$COMP/bash/$t"
			grep -qE -- "(^|[[:space:]{,])$o(=|\[|'|,|\})" "$COMP/zsh/_$t"
			grep -qE -- " -l ${o#--}( |\$)" "$COMP/fish/$t.fish"
		done
		# hidden: only the header comment names it
		[ -z "$(grep -hv '^#' "$COMP/bash/$t" "$COMP/zsh/_$t" "$COMP/fish/$t.fish" |
			grep -- completion-table)" ]
	done
}

@test "completion: zsh and fish read their files, fish completes from them" {
	local t
	command -v zsh || { echo "zsh is not installed" >&2; return 1; }
	command -v fish || { echo "fish is not installed" >&2; return 1; }
	for t in $TOOLS; do
		zsh -n "$COMP/zsh/_$t"
		head -n1 "$COMP/zsh/_$t" | grep -qxF "#compdef $t"
		fish --no-execute "$COMP/fish/$t.fish"
	done
	run fish --no-config -c "source $COMP/fish/readlat.fish; complete -C 'readlat --ou'"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cut -f1 <<< "$output")" = --output ]
	run fish --no-config -c "source $COMP/fish/readlat.fish; complete -C 'readlat --output '"
	[ "$(cut -f1 <<< "$output" | sort | tr '\n' ' ')" = "json openmetrics text " ]
	run fish --no-config -c "source $COMP/fish/biolat.fish; complete -C 'biolat -d '"
	[ "$(cut -f1 <<< "$output" | sort)" = "$(ls /sys/block | sort)" ]
}

@test "completion: zsh's completion system completes from the files" {
	local out d
	command -v zsh || { echo "zsh is not installed" >&2; return 1; }
	out=$(complete_zsh 'readlat --output ')
	echo "$out"
	grep -qE '(^|[[:space:]])json[[:space:]]+openmetrics[[:space:]]+text' <<< "$out"
	out=$(complete_zsh 'tcprcv --so')
	echo "$out"
	grep -qE -- '--sort( |$)' <<< "$out"
	refute grep -qE -- '--(rows|by)' <<< "$out"
	out=$(complete_zsh 'biolat -d ')
	echo "$out"
	for d in /sys/block/*; do
		grep -qw -- "${d##*/}" <<< "$out"
	done
}

@test "completion: make install-completion puts them where each shell looks, uninstall removes them" {
	local root=$T/root f
	run make -s -C "$BATS_TEST_DIRNAME/.." OUTPUT="$BUILD" DESTDIR="$root" PREFIX=/usr \
		APP_PREFIX=bpf- install-completion
	echo "$output"
	[ "$status" -eq 0 ]
	for t in $TOOLS; do
		for f in usr/share/bash-completion/completions/bpf-$t \
			usr/share/zsh/vendor-completions/_bpf-$t \
			usr/share/fish/vendor_completions.d/bpf-$t.fish; do
			[ -f "$root/$f" ] || { echo "no $f" >&2; return 1; }
			[ "$(stat -c %a "$root/$f")" = 644 ]
		done
		grep -qx "complete -F _tracetools_bpf_$t bpf-$t" "$root/usr/share/bash-completion/completions/bpf-$t"
		head -n1 "$root/usr/share/zsh/vendor-completions/_bpf-$t" | grep -qxF "#compdef bpf-$t"
		grep -q "^complete -c bpf-$t -s p -l pid " "$root/usr/share/fish/vendor_completions.d/bpf-$t.fish"
	done
	[ "$(find "$root" -type f | wc -l)" -eq 12 ]
	run make -s -C "$BATS_TEST_DIRNAME/.." OUTPUT="$BUILD" DESTDIR="$root" PREFIX=/usr \
		APP_PREFIX=bpf- uninstall-completion
	[ "$status" -eq 0 ]
	[ "$(find "$root" -type f | wc -l)" -eq 0 ]
	# a local install stays out of the packages' /usr/share
	root=$T/local
	run make -s -C "$BATS_TEST_DIRNAME/.." OUTPUT="$BUILD" DESTDIR="$root" install-completion
	[ "$status" -eq 0 ]
	[ -f "$root/usr/local/share/bash-completion/completions/readlat" ]
	[ -f "$root/usr/local/share/zsh/site-functions/_readlat" ]
	[ -f "$root/usr/local/share/fish/vendor_completions.d/readlat.fish" ]
	[ ! -e "$root/usr/share" ]
}
