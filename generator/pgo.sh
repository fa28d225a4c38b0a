#!/bin/sh
# pgo.sh: the training half of configure --pgo (a profile-fed layout of the generated library).
#
#   pgo.sh src IN OUT PATTERN_INDEX VARIANT_INDEX
#       OUT: the variant's first probe IN as a training unit: its extractor renamed to copy 0
#       (the name frontload-simreq's plan reads from the symbols) and registered as copy 0.
#       Only the name and the registry row differ from the probe, and the profile is matched
#       to the probes by the function's position and control flow, which they share.
#   pgo.sh train NPROBES OUT_STAMP OUT_RT_STAMP
#       Run the instrumented harness gen/train/frontload-simreq (generator/pgo_rt.awk) over
#       gen/train/libfrontload-extract.so (both built with -fprofile-generate), then give
#       each variant's profile (obj/train/PNN_vVVV.gcda) to its NPROBES probes
#       (gen/probes/PNN_vVVV_pK.gcda, what gcc -fprofile-use reads when it compiles
#       gen/probes/PNN_vVVV_pK.s) and to the clone step's extra probes
#       (gen/profile/PNN_vVVV.gcda, frontload-gen clone --profile-dir), and each request-path
#       object's (obj/train/rt/X.gcda) to its build twin (obj/rt/X.gcda). The training
#       stream is seeded apart from the measured ones (seed 2, corpus seed 2; validate and
#       run use 1).
set -eu
die() { echo "pgo.sh: $*" >&2; exit 1; }
# restamp STAMP LINE CHANGED: rewrite STAMP only when a profile changed or its line did, so
# the rule's restat spares what depends on it a recompile (a rebuilt harness retrains to the
# same counts).
restamp() {
	if [ "$3" -gt 0 ] || [ "$(cat "$1" 2>/dev/null)" != "$2" ]; then
		echo "$2" >"$1"
	fi
}
case ${1:-} in
src)
	[ $# -eq 5 ] || die "usage: pgo.sh src IN OUT PATTERN_INDEX VARIANT_INDEX"
	in=$2 out=$3
	fn=$(sed -n 's/.*\(fl_P[0-9]*_v[0-9]*\)_probe0(.*/\1_c00000/p' "$in" | head -n 1)
	[ -n "$fn" ] || die "$in: no probe 0 function (fl_PNN_vVVV_probe0) in it"
	{
		sed 's/\(fl_P[0-9]*_v[0-9]*\)_probe0(/\1_c00000(/' "$in"
		printf '\n/* Registered as copy 0 for the training run (generator/pgo.sh). */\n'
		printf 'static const struct fl_fn_entry fl_train_entry[]\n'
		printf '\t__attribute__((section("fl_registry"), used, aligned(8))) = {\n'
		printf '\t{%s, %d, %d, 0},\n};\n' "$fn" "$4" "$5"
	} >"$out.tmp"
	mv "$out.tmp" "$out"
	;;
train)
	[ $# -eq 4 ] || die "usage: pgo.sh train NPROBES OUT_STAMP OUT_RT_STAMP"
	n=$2 stamp=$3 rtstamp=$4
	# gcc adds a run's counts to a profile already there: start from none
	rm -f obj/train/*.gcda obj/train/rt/*.gcda
	gen/train/frontload-simreq --lib gen/train/libfrontload-extract.so --warmup 5 --requests 1000 \
		--seed 2 --corpus-seed 2 >gen/train/train.json 2>gen/train/train.log ||
		die "the training run failed (gen/train/train.log)"
	mkdir -p gen/profile
	got=0
	changed=0
	for g in obj/train/P*_v*.gcda; do
		[ -e "$g" ] || die "the training run wrote no profile (obj/train/*.gcda)"
		b=$(basename "$g" .gcda)
		got=$((got + 1))
		# The same training gives the same counts: an unchanged profile is not rewritten.
		cmp -s "$g" "gen/profile/$b.gcda" && continue
		changed=$((changed + 1))
		cp "$g" "gen/profile/$b.gcda"
		k=0
		while [ "$k" -lt "$n" ]; do
			cp "$g" "gen/probes/${b}_p$k.gcda"
			k=$((k + 1))
		done
	done
	restamp "$stamp" "pgo.sh: $got variant profiles from 1000 training requests (gen/train/train.json)" "$changed"
	# The request path: its own stamp, so a changed leaf source recompiles no probe.
	got=0
	changed=0
	for g in obj/train/rt/*.gcda; do
		[ -e "$g" ] || die "the training run wrote no request-path profile (obj/train/rt/*.gcda)"
		b=$(basename "$g")
		got=$((got + 1))
		cmp -s "$g" "obj/rt/$b" && continue
		changed=$((changed + 1))
		cp "$g" "obj/rt/$b"
	done
	restamp "$rtstamp" "pgo.sh: $got request-path object profiles from 1000 training requests" "$changed"
	;;
*)
	die "usage: pgo.sh src IN OUT PATTERN_INDEX VARIANT_INDEX | pgo.sh train NPROBES OUT_STAMP OUT_RT_STAMP"
	;;
esac
