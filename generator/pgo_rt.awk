# pgo_rt.awk: configure --pgo's rewrite of build.ninja for the hand-written request path.
#
#   awk -f pgo_rt.awk build.ninja > build.ninja.pgo
#
# The objects frontload-simreq links (the request pipeline: decode, story processing,
# ranking, reply, the wire and corpus code, and the harness's own) are the ones the
# training run executes, so they are the ones it can profile. For each of them this
#   - adds an instrumented twin, obj/train/rt/X.o (rule cc_train_rt, the same source and
#     includes), and links them as gen/train/frontload-simreq, the training's harness;
#   - makes obj/rt/X.o read its profile (pgoflags = $pgo_rt_use, obj/rt/X.gcda, which
#     generator/pgo.sh train copies there) and wait for it (| gen/profile-rt.stamp).
# The leaf's own IO, fanout and ranker-pool code is not on the harness's path: it is
# compiled as without --pgo. Every other line passes through unchanged.
{ line[NR] = $0 }

# An edge is its build line, the lines it continues onto (" $") and its indented
# variable lines; returns the index of its last line.
function edge_end(i) {
	while (line[i] ~ / \$$/) i++
	while ((i + 1) in line && line[i + 1] ~ /^  [a-z_]+ = /) i++
	return i
}

END {
	for (s = 1; s <= NR; s++) if (line[s] ~ /^build frontload-simreq: link /) break
	if (s > NR) { print "pgo_rt.awk: no frontload-simreq link edge in the input" > "/dev/stderr"; exit 1 }
	e = edge_end(s)
	ntrain = 0
	for (i = s; i <= e; i++) {
		t = line[i]
		while (match(t, /obj\/rt\/[A-Za-z0-9_.-]+\.o/)) {
			o = substr(t, RSTART + 7, RLENGTH - 9)
			if (!(o in trained)) { trained[o] = 1; ntrain++ }
			t = substr(t, RSTART + RLENGTH)
		}
	}
	if (ntrain == 0) { print "pgo_rt.awk: frontload-simreq links no obj/rt object" > "/dev/stderr"; exit 1 }

	twins = ""
	found = 0
	for (i = 1; i <= NR; i++) {
		if (match(line[i], /^build obj\/rt\/[A-Za-z0-9_.-]+\.o: cc /)) {
			o = substr(line[i], 14, RLENGTH - 20)
			if (o in trained) {
				found++
				last = edge_end(i)
				b = line[i]
				twin = b
				sub(/^build obj\/rt\//, "build obj/train/rt/", twin)
				sub(/: cc /, ": cc_train_rt ", twin)
				if (index(b, " || ")) sub(/ \|\| /, " | gen/profile-rt.stamp || ", b)
				else b = b " | gen/profile-rt.stamp"
				print b
				twins = twins twin "\n"
				for (k = i + 1; k <= last; k++) { print line[k]; twins = twins line[k] "\n" }
				print "  pgoflags = $pgo_rt_use"
				i = last
				continue
			}
		}
		print line[i]
	}
	if (found != ntrain) {
		print "pgo_rt.awk: " ntrain " objects in frontload-simreq's link, " found " compiled by rule cc" > "/dev/stderr"
		exit 1
	}

	print ""
	print "# ---- configure --pgo: the request path instrumented (generator/pgo_rt.awk) ----"
	printf "%s", twins
	for (i = s; i <= e; i++) {
		t = line[i]
		gsub(/obj\/rt\//, "obj/train/rt/", t)
		sub(/^build frontload-simreq:/, "build gen/train/frontload-simreq:", t)
		print t
	}
	print "  ldflags = $ldflags -fprofile-generate"
}
