#!/bin/sh
# layers.sh: each runtime folder compiles with its own include path (build.ninja.in,
# inc_FOLDER), so a header from a folder above it, or beside it, does not resolve.
#
# For every folder, the real compile command of one of its objects (ninja -t commands)
# gives the -I flags; a one-line file including a header of each other folder is run
# through the preprocessor with them. Allowed (the layer order of README's architecture
# section): common sees common; extract sees templates and common; request (the pipeline
# stages) sees extract; leaf sees request; mock, driver, run and measure see common only;
# the harness (measure/simreq.c), a second front end of the pipeline, also sees request
# and what request sees, never leaf.
set -u
src=$(cd "${FL_SRCDIR:?FL_SRCDIR must name the source tree}" && pwd) || exit 1
build=$(cd "${FL_BUILDDIR:-.}" && pwd) || exit 1
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$build" || exit 1

# folder  object whose command gives the flags  folders it may include
cat >"$T/layers" <<'LAYERS'
common obj/rt/wire.o common
extract obj/rt/libload.o extract templates common
request obj/rt/pipeline.o request extract templates common
leaf obj/rt/ranker.o leaf request extract templates common
mock obj/rt/mock_server.o mock common
driver obj/rt/driver_engine.o driver common
run obj/rt/run_search.o run common
measure obj/rt/mix.o measure common
harness obj/rt/simreq.o measure request extract templates common
LAYERS
# One header per folder (each compiles alone once its folder's path is given).
header() {
	case $1 in
	common) echo wire.h ;; extract) echo dispatch.h ;; templates) echo fl_extract.h ;;
	request) echo stages.h ;; leaf) echo ranker.h ;; mock) echo mock_shape.h ;; driver) echo schedule.h ;;
	run) echo run_host.h ;; measure) echo mix.h ;;
	esac
}
all="common extract templates request leaf mock driver run measure"
ok=0
refused=0
while read -r folder obj allowed; do
	cmd=$(ninja -t commands -s "$obj" | tail -n 1)
	case $cmd in *" -c "*) ;; *) fail "no compile command for $obj" ;; esac
	flags=
	for w in $cmd; do
		case $w in -I* | -D*) flags="$flags $w" ;; esac
	done
	for g in $all; do
		h=$(header "$g")
		printf '#include "%s"\n' "$h" >"$T/probe.c"
		# shellcheck disable=SC2086 # flags is a word list
		if cc -E $flags "$T/probe.c" -o /dev/null 2>"$T/err"; then got=yes; else got=no; fi
		case " $allowed " in *" $g "*) want=yes ;; *) want=no ;; esac
		if [ "$want" = yes ] && [ "$got" = no ]; then
			fail "$folder ($obj) cannot include $g's $h: $(head -n 1 "$T/err")"
		elif [ "$want" = no ] && [ "$got" = yes ]; then
			fail "$folder ($obj) can include $g's $h, against the layer order"
		fi
		if [ "$got" = yes ]; then ok=$((ok + 1)); else refused=$((refused + 1)); fi
	done
done <"$T/layers"
echo "$(wc -l <"$T/layers") include paths: $ok headers in the layer order resolve, $refused against it do not"
