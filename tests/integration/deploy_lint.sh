#!/bin/sh
# deploy_lint.sh: runtime/deploy passes ansible-lint (production profile: every rule, no
# warning), on site.yml and study.yml and the roles they use, and each playbook with its
# example inventory (site.yml: inventory.example.yml, study.yml:
# inventory.study.example.yml) passes ansible-playbook's syntax check.
# Skipped (exit 77, reason last) without ansible-lint or ansible-playbook.
. "$(dirname "$0")/common.inc"

command -v ansible-lint >/dev/null 2>&1 || skip "no ansible-lint (apt-get install ansible-lint)"
command -v ansible-playbook >/dev/null 2>&1 || skip "no ansible-playbook (apt-get install ansible-core)"
D=$FL_SRCDIR/runtime/deploy
# Its caches in $T, not in the source tree or $HOME.
export ANSIBLE_LOCAL_TEMP="$T/ansible" XDG_CACHE_HOME="$T/cache" ANSIBLE_NOCOLOR=1 NO_COLOR=1
(cd "$D" && ansible-lint --offline --profile production -q site.yml study.yml) \
	>"$T/lint.log" 2>&1 || fail "ansible-lint: $(tail -n 12 "$T/lint.log")"
for p in site:inventory.example.yml study:inventory.study.example.yml; do
	ansible-playbook --syntax-check -i "$D/${p#*:}" "$D/${p%%:*}.yml" >"$T/syntax.log" 2>&1 ||
		fail "ansible-playbook --syntax-check ${p%%:*}.yml: $(tail -n 5 "$T/syntax.log")"
done
echo "ansible-lint (production profile) and the syntax check pass on runtime/deploy" \
	"(site.yml, study.yml)"
