#!/bin/sh
# expand.sh BINDIR TEMPLATE — a man page's scdoc source with its generated
# parts filled in, to stdout (the Makefile pipes it to scdoc). A line that
# is only a directive is replaced:
#
#   @help PROGRAM [ARGS]@      PROGRAM's own --help text (or what ARGS
#                              print), as a literal block: the options a
#                              page lists are the ones the program takes
#   @floodctl-commands@        one subsection per command of `floodctl
#                              --help`, with `floodctl help NAME`'s text
#   @config-keys@              fg-mangen's sections and keys of
#                              floodgate.conf, from the parser's key table
#
# A program that fails, or prints nothing, fails the page.
set -eu
bin=$1
tpl=$2
top=$(cd "$(dirname "$0")/../.." && pwd)

# scdoc reads a backslash in a literal block as an escape
literal() {
	printf '```\n'
	sed -e 's/\\/\\\\/g'
	printf '```\n'
}

help_of() {
	prog=$1
	shift
	[ $# -gt 0 ] || set -- --help
	out=$("$bin/$prog" "$@" 2>&1) || [ -n "$out" ] || { echo "expand.sh: $prog $* failed" >&2; exit 1; }
	[ -n "$out" ] || { echo "expand.sh: $prog $* printed nothing" >&2; exit 1; }
	printf '%s\n' "$out" | literal
}

floodctl_commands() {
	names=$("$bin/floodctl" --help | sed -n 's/^ *floodctl \([a-z][a-z-]*\) .*/\1/p')
	[ -n "$names" ] || { echo "expand.sh: floodctl --help lists no commands" >&2; exit 1; }
	for n in $names; do
		printf '## %s\n\n' "$n"
		"$bin/floodctl" help "$n" | literal
		printf '\n'
	done
}

while IFS= read -r line; do
	case $line in
	@help\ *@)
		set -- $(printf '%s' "$line" | sed 's/^@help //; s/@$//')
		help_of "$@"
		;;
	@floodctl-commands@) floodctl_commands ;;
	@config-keys@) "$bin/fg-mangen" config-keys "$top/docs/configuration.md" ;;
	*) printf '%s\n' "$line" ;;
	esac
done < "$tpl"
