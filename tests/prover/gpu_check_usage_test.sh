#!/bin/sh
# wipeproof-gpu-check refuses a bad command line before it touches a runtime: exit 2, status
# "usage" and the reason in its JSON, for an unknown flag, an unknown or second step, a number that
# is not one, a negative number, an m outside the label spec, and a switch given a value. A good
# command line (the model step) still runs.
# Usage: gpu_check_usage_test.sh PATH_TO_wipeproof-gpu-check
set -u
bin=$1
fails=0
expect_usage() {  # WHAT_THE_ERROR_SAYS ARGS...
  want=$1; shift
  out=$("$bin" "$@"); rc=$?
  if [ "$rc" -ne 2 ] || ! printf '%s' "$out" | grep -q '"status": "usage"' ||
     ! printf '%s' "$out" | grep -qF -- "$want"; then
    echo "FAIL: $* -> exit $rc: $out (wanted exit 2 and '$want')"; fails=$((fails + 1))
  fi
}
expect_usage 'unknown flag --bogus' --bogus model
expect_usage 'unknown step' frobnicate
expect_usage 'one step only' info parity
expect_usage "--m wants a non-negative number, got 'abc'" --m=abc fill
expect_usage "--gib wants a non-negative number, got '-1'" --gib=-1 fill
expect_usage "--wave-chunks wants a non-negative number, got '1x'" --wave-chunks=1x fill
expect_usage '--m must be a power of two' --m=3 fill
expect_usage '--max-m must be a power of two' --max-m=2097152 parity
expect_usage '--scratch-teams takes no value' --scratch-teams=1 fill
expect_usage '--gpu needs a value' --gpu model
out=$("$bin" model --gpu=h200 2>/dev/null); rc=$?
if [ "$rc" -ne 0 ] || ! printf '%s' "$out" | grep -q '"status": "ok"'; then
  echo "FAIL: model --gpu=h200 -> exit $rc"; fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] && echo "ok: every bad command line refused with exit 2, a good one runs"
exit "$fails"
