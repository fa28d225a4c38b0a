#!/bin/sh
# clone_disasm.sh: how often a cloned copy's machine code matches its twin compiled from C,
# up to immediates and addresses. Prints a figure; asserts nothing (the equality of what
# they compute is tests/test_library.c test 4).
# Usage: tests/bench/clone_disasm.sh [BUILD_DIR]   (default: .)
# Needs libfrontload-extract.so and libfrontload-sample.so (the sample compiled from C).
set -eu
b=${1:-.}
tmp=$(mktemp -d /tmp/frontload-disasm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# One file per function: its instructions with numbers, addresses and symbols masked.
split_fns() { # lib outdir
	mkdir -p "$2"
	objdump -d --no-show-raw-insn "$1" | awk -v d="$2" '
		/^[0-9a-f]+ <fl_P[0-9][0-9]_v[0-9]+_c[0-9]+>:$/ {
			if (f != "") close(f)
			name = $2; gsub(/[<>:]/, "", name); f = d "/" name; next }
		/^$/ { if (f != "") close(f); f = "" }
		f != "" && /^ +[0-9a-f]+:/ {
			sub(/^ +[0-9a-f]+:[ \t]*/, "")
			gsub(/<[^>]*>/, "")
			gsub(/(0x)?[0-9a-f]+/, "N")
			print > f }'
}
split_fns "$b/libfrontload-sample.so" "$tmp/c"
split_fns "$b/libfrontload-extract.so" "$tmp/lib"
total=0
same=0
for f in "$tmp"/c/*; do
	n=$(basename "$f")
	total=$((total + 1))
	if cmp -s "$f" "$tmp/lib/$n"; then same=$((same + 1)); fi
done
echo "clone vs C twin: $same of $total sampled copies have identical instructions up to immediates and addresses"
echo "(the library's copies of the sample are clones unless the cloner sent them to C; see manifest.json clone_report)"
