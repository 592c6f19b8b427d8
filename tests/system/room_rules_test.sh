#!/usr/bin/env bash
# The rooms' include rules (each room's CMakeLists.txt states them): every #include "..." of a
# source file must name a room that file's room may use. The rules, lowest room first:
#   common/                   common/
#   kernels/ (not gpu/)       common/ kernels/ (never kernels/gpu/)
#   kernels/gpu/              common/ kernels/
#   proto/                    common/ kernels/ proto/
#   prover/backends/          common/ kernels/ prover/backends/
#   prover/agent/             ... proto/ prover/backends/ prover/agent/
#   prover/doctor/            ... proto/ prover/backends/ prover/doctor/
#   prover/cli/               ... proto/ prover/backends/ prover/agent/ prover/doctor/ prover/cli/
#   prover/bench/             ... proto/ prover/backends/ prover/agent/ prover/cli/ prover/bench/
#   prover/main.cc            prover/
#   adversary/                common/ kernels/ proto/ adversary/
#   challenger/parameters/    common/ kernels/ proto/ challenger/parameters/
#   challenger/ledger/        common/ kernels/ proto/ challenger/ledger/
#   challenger/session/       ... parameters/ ledger/ session/
#   challenger/audit/         ... parameters/ ledger/ session/ audit/
#   challenger/fleet/         ... parameters/ ledger/ session/ fleet/
#   challenger/calibration/   ... parameters/ ledger/ session/ fleet/ calibration/
#   challenger/selftest/      ... adversary/ parameters/ ledger/ session/ fleet/ selftest/
#   challenger/cli/, main.cc  common/ kernels/ proto/ adversary/ challenger/
# So prover/ and challenger/ never include each other, kernels/ includes nothing of proto/,
# prover/ or challenger/, and nothing outside tests/ includes tests/. Generated headers
# (proto/wipe.capnp.h) count as proto/.
# Usage: room_rules_test.sh SOURCE_ROOT        Exit status: 0 when every include is allowed.
#        room_rules_test.sh --self-check         checks that a tree with violations fails
set -uo pipefail
if [[ ${1:-} == --self-check ]]; then
  # Each of these must be caught on its own.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  caught=0
  for violation in 'kernels/x.cc:prover/backends/backend.h' 'kernels/y.cc:kernels/gpu/kernel_args.h' \
                   'prover/agent/z.cc:challenger/session/failure.h' 'challenger/session/w.cc:prover/agent/agent_core.h' \
                   'adversary/v.cc:challenger/session/failure.h' 'challenger/ledger/u.cc:challenger/session/failure.h' \
                   'proto/t.cc:prover/cli/cli.h' 'common/s.cc:kernels/label_spec.h' \
                   'challenger/session/r.cc:challenger/audit/session_audit.h' \
                   'challenger/audit/q.cc:challenger/fleet/inventory.h'; do
    rm -rf "$tmp"/*
    file=${violation%%:*}
    mkdir -p "$tmp/common" "$tmp/$(dirname "$file")"
    printf '#include "common/status.h"\n#include "%s"\n' "${violation#*:}" > "$tmp/$file"
    if "$0" "$tmp" > /dev/null; then
      echo "FAIL: the rules let $file include ${violation#*:}"
    else
      caught=$((caught + 1))
    fi
  done
  [[ $caught -eq 10 ]] && echo "ok: all 10 planted violations caught" && exit 0
  exit 1
fi
root=${1:?source root}
cd "$root" || exit 2

allowed() {  # the include prefixes a file may use
  local low="common/ kernels/ proto/"
  case $1 in
    common/*) echo "common/" ;;
    kernels/gpu/*) echo "common/ kernels/" ;;
    kernels/*) echo "common/ kernels/" ;;
    proto/*) echo "common/ kernels/ proto/" ;;
    prover/backends/*) echo "common/ kernels/ prover/backends/" ;;
    prover/agent/*) echo "$low prover/backends/ prover/agent/" ;;
    prover/doctor/*) echo "$low prover/backends/ prover/doctor/" ;;
    prover/cli/*) echo "$low prover/backends/ prover/agent/ prover/doctor/ prover/cli/" ;;
    prover/bench/*) echo "$low prover/backends/ prover/agent/ prover/cli/ prover/bench/" ;;
    prover/*) echo "$low prover/" ;;
    adversary/*) echo "$low adversary/" ;;
    challenger/parameters/*) echo "$low challenger/parameters/" ;;
    challenger/ledger/*) echo "$low challenger/ledger/" ;;
    challenger/session/*) echo "$low challenger/parameters/ challenger/ledger/ challenger/session/" ;;
    challenger/audit/*) echo "$low challenger/parameters/ challenger/ledger/ challenger/session/ challenger/audit/" ;;
    challenger/fleet/*) echo "$low challenger/parameters/ challenger/ledger/ challenger/session/ challenger/fleet/" ;;
    challenger/calibration/*)
      echo "$low challenger/parameters/ challenger/ledger/ challenger/session/ challenger/fleet/ challenger/calibration/" ;;
    challenger/selftest/*)
      echo "$low adversary/ challenger/parameters/ challenger/ledger/ challenger/session/ challenger/fleet/ challenger/selftest/" ;;
    challenger/*) echo "$low adversary/ challenger/" ;;
    *) echo "" ;;
  esac
}

bad=0
checked=0
while IFS= read -r file; do
  rules=$(allowed "$file")
  [[ -z $rules ]] && continue
  while IFS= read -r inc; do
    checked=$((checked + 1))
    ok=0
    for prefix in $rules; do
      [[ $inc == "$prefix"* ]] && ok=1
    done
    # A kernels/ file outside kernels/gpu/ must not reach into the device code.
    if [[ $file == kernels/* && $file != kernels/gpu/* && $inc == kernels/gpu/* ]]; then ok=0; fi
    if [[ $ok -eq 0 ]]; then
      echo "FAIL: $file includes \"$inc\" (allowed: $rules)"
      bad=$((bad + 1))
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\/[^"]*\)".*/\1/p' "$file")
done < <(find common kernels proto prover adversary challenger -type f 2>/dev/null \
           \( -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.hip' \) | sort)

if [[ $checked -eq 0 ]]; then
  echo "FAIL: no includes found under $root (wrong source root?)"
  exit 1
fi
if [[ $bad -ne 0 ]]; then
  echo "$bad include(s) break the room rules"
  exit 1
fi
echo "ok: $checked includes follow the room rules"
