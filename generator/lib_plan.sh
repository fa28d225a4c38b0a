#!/bin/sh
# lib_plan.sh: which generated objects go into which library part (configure --lib-parts).
#
# Usage: lib_plan.sh N PREFIX LIST
#   N       library parts, 1..16
#   PREFIX  writes PREFIX_1.list .. PREFIX_N.list: one object path per line
#   LIST    the generated objects in registry order, one per line (ninja's response file)
#
# Clone parts are runs of copies cut by count (generator/clone.c), so they differ in bytes
# several times over (one held 3.4x the mean at --copies=1000); a library part must stay
# within the 2 GB reach of x86-64 PC-relative code. So the parts are cut here, once the
# objects exist, into N contiguous runs of about equal file size (bytes; each object goes
# to the run its middle byte falls in), the order kept:
# the joined registry (templates/lib_join.c) then has the order one object would have.
# A list is rewritten only when its text changes (the edge is restat). Every part's link
# still lists every object as an input (which it links is the list's business), so a
# changed object relinks all parts.
# Errors: a bad N, an unreadable list or object: a message on stderr, exit 1.
set -eu
n=${1:?usage: lib_plan.sh N PREFIX LIST}
prefix=${2:?usage: lib_plan.sh N PREFIX LIST}
list=${3:?usage: lib_plan.sh N PREFIX LIST}
case $n in '' | *[!0-9]*) echo "lib_plan.sh: N must be a number, got '$n'" >&2; exit 1 ;; esac
[ -r "$list" ] || { echo "lib_plan.sh: cannot read $list" >&2; exit 1; }
# The response file separates paths by spaces or newlines: one per line for stat.
tr ' ' '\n' <"$list" | sed '/^$/d' >"$prefix.objects"
[ -s "$prefix.objects" ] || { echo "lib_plan.sh: no objects in $list" >&2; exit 1; }
# shellcheck disable=SC2046
stat -c '%s %n' $(cat "$prefix.objects") >"$prefix.sizes" ||
	{ echo "lib_plan.sh: cannot stat the objects of $list" >&2; exit 1; }
awk -v n="$n" -v prefix="$prefix" '
	{ size[NR] = $1; path[NR] = $2; total += $1 }
	END {
		if (NR < n) {
			printf "lib_plan.sh: %d objects for %d library parts\n", NR, n > "/dev/stderr"
			exit 1
		}
		# object i goes to the part its middle byte falls in, parts in order, none
		# skipped, and each keeps at least one object
		k = 1; acc = 0
		for (i = 1; i <= NR; i++) {
			want = total > 0 ? 1 + int(n * (acc + size[i] / 2) / total) : 1
			if (want > n) want = n
			if (want > k + 1) want = k + 1
			if (i > 1 && NR - i + 1 <= n - k) want = k + 1
			if (i > 1 && want > k) k = want
			part[i] = k
			acc += size[i]
		}
		for (i = 1; i <= NR; i++)
			print path[i] > (prefix "_" part[i] ".new")
		for (k = 1; k <= n; k++)
			close(prefix "_" k ".new")
	}' "$prefix.sizes"
k=1
while [ "$k" -le "$n" ]; do
	new=${prefix}_$k.new
	[ -f "$new" ] || { echo "lib_plan.sh: part $k got no objects" >&2; exit 1; }
	if cmp -s "$new" "${prefix}_$k.list"; then rm -f "$new"; else mv "$new" "${prefix}_$k.list"; fi
	k=$((k + 1))
done
rm -f "$prefix.objects" "$prefix.sizes"
