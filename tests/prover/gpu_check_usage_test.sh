#!/bin/sh
# wipeproof-gpu-check refuses a bad command line before it touches a runtime: exit 2, status
# "usage" and the reason in its JSON, for an unknown flag, an unknown or second step, a number that
# is not one, a number out of its range or not whole where it must be, an m outside the label spec,
# a word a text flag does not take, a flag given twice, and a switch given a value; a refused
# command line writes no --json file; an unwritable --json is exit 3; --help prints the usage. A
# good command line (the model step) still runs.
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
expect_usage "--m wants a whole number in [1, 1048576], got 'abc'" --m=abc fill
expect_usage "--gib wants a number in [0, 1048576], got '-1'" --gib=-1 fill
expect_usage "--wave-chunks wants a whole number in [0, 1e+12], got '1x'" --wave-chunks=1x fill
expect_usage '--m must be a power of two' --m=3 fill
expect_usage '--max-m wants a whole number in [1, 1048576]' --max-m=2097152 parity
expect_usage "--runtime takes one of" --runtime=bogus info
expect_usage "--gpu takes one of" --runtime=dry-run --gpu=bogus fill
expect_usage "a dry-run fill takes one shape" --runtime=dry-run --gpu=all fill
expect_usage "--device wants a whole number in [0, 1023], got '1e30'" --device=1e30 info
expect_usage "--team-threads wants a whole number in [1, 1024], got '0.5'" --team-threads=0.5 fill
expect_usage "--issue-efficiency wants a number in [0.01, 1], got '0'" --issue-efficiency=0 model
expect_usage '--gib is given twice' --gib=1 --gib=2 fill
expect_usage 'plans a fill and computes nothing' --runtime=dry-run parity
expect_usage '--scratch-teams takes no value' --scratch-teams=1 fill
expect_usage '--gpu needs a value' --gpu model
# A refused command line writes no --json file (an existing one is left as it was).
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo keep > "$tmp/keep.json"
"$bin" --json="$tmp/keep.json" --m=3 fill >/dev/null
if [ "$(cat "$tmp/keep.json")" != keep ]; then echo "FAIL: a refused command line wrote --json"; fails=$((fails + 1)); fi
# --json that cannot be written is exit 3.
"$bin" model --gpu=h200 --json="$tmp/no/such/folder/x.json" >/dev/null 2>&1; rc=$?
if [ "$rc" -ne 3 ]; then echo "FAIL: an unwritable --json -> exit $rc (wanted 3)"; fails=$((fails + 1)); fi
out=$("$bin" --help); rc=$?
if [ "$rc" -ne 0 ] || ! printf '%s' "$out" | grep -q '^usage: wipeproof-gpu-check'; then
  echo "FAIL: --help -> exit $rc"; fails=$((fails + 1))
fi
# A dry run says it is one (not the emulation it runs on), and times the host's share of a lookup
# in both placements (docs/benchmarks.md "Lookup staging").
out=$("$bin" --runtime=dry-run --gpu=h200 fill --gib=0 --m=16384 2>/dev/null); rc=$?
if [ "$rc" -ne 0 ] || ! printf '%s' "$out" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["runtime"] == "dry-run" and j["status"] == "ok", (j["runtime"], j["status"])
rows = j["host_lookup"]
assert sorted((r["q"], r["halves_placed_by"]) for r in rows) == [(256, "device"), (256, "host"), (4096, "device"), (4096, "host")], rows
'; then
  echo "FAIL: a dry-run fill -> exit $rc, or not labelled dry-run, or no host_lookup in both placements"; fails=$((fails + 1))
fi
out=$("$bin" model --gpu=h200 2>/dev/null); rc=$?
if [ "$rc" -ne 0 ] || ! printf '%s' "$out" | grep -q '"status": "ok"'; then
  echo "FAIL: model --gpu=h200 -> exit $rc"; fails=$((fails + 1))
fi
# The model step carries the lookup model: q = 256 on 1 and 8 streams, labelled modelled.
if ! printf '%s' "$out" | python3 -c '
import json, sys
look = json.load(sys.stdin)["lookups"]
assert look["kind"] == "modelled", look
rows = {r["streams"]: r for r in look["together"]}
assert sorted(rows) == [1, 8] and all(r["q_per_stream"] == 256 for r in rows.values()), rows
assert rows[8]["device_us"] == rows[1]["device_us"], rows  # the device latency once
assert abs(rows[8]["submit_us"] - 8 * rows[1]["submit_us"]) < 0.01, rows  # the host staging and submissions each (JSON keeps ~6 digits)
for r in rows.values():
    assert abs(r["total_us"] - (r["submit_us"] + r["device_us"] + r["copy_us"])) < 0.01, r
'; then
  echo "FAIL: model --gpu=h200 has no lookup model of 1 and 8 streams"; fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] && echo "ok: every bad command line refused with exit 2, a good one runs"
exit "$fails"
