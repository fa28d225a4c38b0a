#!/bin/sh
# install.sh: `ninja install`: copies the binaries, the extractor library, its manifest and
# headers under $DESTDIR$FL_PREFIX. Run from the build directory (or FL_BUILDDIR).
set -eu
src=${FL_SRCDIR:?}
prefix=${FL_PREFIX:?}
build=${FL_BUILDDIR:-.}
dest=${DESTDIR:-}$prefix

install -d "$dest/bin" "$dest/lib" "$dest/share/frontload" "$dest/include/frontload" \
	"$dest/share/frontload/data"
install -m 755 "$build/frontload-gen" "$dest/bin/frontload-gen"
install -m 755 "$build/frontload-extract-bench" "$dest/bin/frontload-extract-bench"
install -m 755 "$build/frontload-leaf" "$dest/bin/frontload-leaf"
install -m 755 "$build/frontload-mock" "$dest/bin/frontload-mock"
install -m 755 "$build/frontload-driver" "$dest/bin/frontload-driver"
install -m 755 "$build/frontload" "$dest/bin/frontload"
install -m 755 "$build/frontload-simreq" "$dest/bin/frontload-simreq"
install -m 755 "$build/frontload-measure" "$dest/bin/frontload-measure"
for f in rpc_dist.json feed_aggregator_req_sizes.json feed_aggregator_resp_sizes.json SOURCES.md \
	profile_categories.txt; do
	install -m 644 "$src/runtime/data/$f" "$dest/share/frontload/data/$f"
done
# The shipped leaf profiles: profile-default.json and one per CPU kind it was fitted on.
for f in "$src"/runtime/data/profile-*.json; do
	install -m 644 "$f" "$dest/share/frontload/data/${f##*/}"
done
install -d "$dest/share/frontload/targets"
install -m 644 "$src/results/targets/production.json" "$dest/share/frontload/targets/production.json"
install -m 644 "$build/libfrontload-extract.so" "$dest/lib/libfrontload-extract.so"
# A library split over several objects (configure --lib-parts): the head finds its parts
# beside itself ($ORIGIN). The count comes from config.json, so stale parts are not copied.
parts=$(sed -n 's/^ *"lib_parts": \([0-9]*\).*/\1/p' "$build/config.json")
if [ "${parts:-1}" -gt 1 ]; then
	k=1
	while [ "$k" -le "$parts" ]; do
		install -m 644 "$build/libfrontload-extract-$k.so" "$dest/lib/libfrontload-extract-$k.so"
		k=$((k + 1))
	done
fi
install -m 644 "$build/manifest.json" "$dest/share/frontload/manifest.json"
install -m 644 "$build/config.json" "$dest/share/frontload/config.json"
install -m 644 "$src/templates/fl_extract.h" "$dest/include/frontload/fl_extract.h"
install -m 644 "$src/runtime/extract/dispatch.h" "$dest/include/frontload/dispatch.h"
# The TLS certificate the mock serves and the leaf trusts, made once per install tree.
"$dest/bin/frontload-mock" --gen-cert "$dest/share/frontload/tls"
echo "installed into $dest"
