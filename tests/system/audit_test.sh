#!/usr/bin/env bash
# The auditor's two ways to re-check a real session (docs/audit.md): `wipeproof-challenger ledger
# audit` and the recipe with no wipeproof code (docs/audit_recipe.py: the capnp tool, PyNaCl,
# hashlib, pure-Python labels). A session runs over loopback with the real binaries at m = 64 (the
# e2e test's way of starting agent and challenger, its folder kept); its ledger is exported with the
# keys; both must pass it, and both must fail, naming what, on copies with one answer byte changed,
# one signature byte changed, an answer byte changed by a forger who holds the challenger's key and
# re-signs the chain (caught by the node-signed transcript and the recomputed labels), and a wrong
# answer the node signed into its transcript too (caught by the recomputed labels alone), and a
# receipt re-signed around a changed copy of the node-signed transcript it embeds; the recipe with
# every label (--labels=all) and with its default sample, which states what it proves. Then a wave run
# twice by `serve --once`, a session stating a bound (a signed, calibrated profile), certificates of
# a session and of a wave (each checked by both tools, and copies with one byte changed failing both),
# and forgeries of wave verdicts, receipts and bounds (below).
# Usage: audit_test.sh PROVER_BIN CHALLENGER_BIN SOURCE_ROOT
# threat-model: T-AUDIT-REWRITE
set -euo pipefail
prover=$1
challenger=$2
root=$3
python=/usr/bin/python3  # Debian's, with python3-nacl (scripts/setup-deps.sh)
[[ -x $python ]] || python=python3
"$python" -c 'import nacl.signing' 2>/dev/null || { echo "FAIL: PyNaCl missing: apt-get install python3-nacl (scripts/setup-deps.sh)"; exit 1; }
"$python" -c 'import jsonschema' 2>/dev/null ||
  { echo "FAIL: jsonschema missing: apt-get install python3-jsonschema (scripts/setup-deps.sh)"; exit 1; }
command -v capnp >/dev/null || { echo "FAIL: the capnp tool is missing (Debian package capnproto)"; exit 1; }

dir=$(mktemp -d /tmp/wp-audit.XXXXXX)
trap 'rm -rf "$dir"' EXIT
e2e=$dir/e2e
WP_E2E_DIR=$e2e WP_E2E_CHUNK_LABELS=64 "$root/tests/system/e2e_loopback_test.sh" "$prover" "$challenger" >"$dir/e2e.log" 2>&1 ||
  { echo "FAIL: the loopback session did not pass:"; cat "$dir/e2e.log"; exit 1; }

"$challenger" ledger export --ledger="$e2e/ledger.db" --challenger_key="$e2e/inspect-challenger.pub" \
  --authority_key="$e2e/inspect-authority.pub" --inventory="$e2e/inventory.json" --out="$dir/export.json"

audit() {
  "$challenger" ledger audit --export="$1" --authority_key="$e2e/inspect-authority.pub" \
    --challenger_key="$e2e/inspect-challenger.pub" --threads=2
}
recipe() {
  "$python" "$root/docs/audit_recipe.py" "$1" --schema="$root/proto/wipe.capnp" \
    --authority-pub="$e2e/inspect-authority.pub" --challenger-pub="$e2e/inspect-challenger.pub" --labels=8 \
    --sample-seed=7
}
recipe_with() {  # EXPORT OPTIONS...: the recipe with its own sample options
  "$python" "$root/docs/audit_recipe.py" "$1" --schema="$root/proto/wipe.capnp" \
    --authority-pub="$e2e/inspect-authority.pub" --challenger-pub="$e2e/inspect-challenger.pub" "${@:2}"
}
failures=0
expect_pass() {  # NAME COMMAND...
  local name=$1; shift
  if "$@" >"$dir/out" 2>&1; then echo "ok: $name passes"; else
    echo "FAIL: $name should pass:"; cat "$dir/out"; failures=$((failures + 1)); fi
}
expect_said() {  # TEXT [grep option]: the last command's output says TEXT (-E: an extended regex)
  if grep -q "${2:--F}" -- "$1" "$dir/out"; then echo "ok: ... saying '$1'"; else
    echo "FAIL: its output does not say '$1':"; cat "$dir/out"; failures=$((failures + 1)); fi
}
expect_fail() {  # NAME TEXT COMMAND...: exit 1 with TEXT in the output
  local name=$1 text=$2; shift 2
  local code=0
  "$@" >"$dir/out" 2>&1 || code=$?
  if [[ $code -eq 1 ]] && grep -qF -- "$text" "$dir/out"; then echo "ok: $name fails naming '$text'"; else
    echo "FAIL: $name should exit 1 naming '$text' (exit $code):"; cat "$dir/out"; failures=$((failures + 1)); fi
}

expect_pass "ledger audit of the session's export" audit "$dir/export.json"
expect_pass "the recipe on the session's export" recipe "$dir/export.json"
expect_pass "the recipe's label code on label-spec.md's known answers" \
  "$python" "$root/docs/audit_recipe.py" --self-test="$root/tests/testdata/labels-public.json"

forge() {  # MODE [EXPORT] ARGS...: the newer modes name the export, the others forge the session's
  case $1 in
    wave-set | wave-mix | wave-replay | receipt-set | receipt-bad-utf8 | second-pass | verdict-set | order-set | inventory-edit | wave-first-member)
      "$python" "$root/tests/system/audit_forge.py" "$1" "$2" "$root/proto/wipe.capnp" "${@:3}" ;;
    *) "$python" "$root/tests/system/audit_forge.py" "$1" "$dir/export.json" "$root/proto/wipe.capnp" "${@:2}" ;;
  esac
}
forge answer-byte >"$dir/answer.json"
forge signature-byte >"$dir/signature.json"
forge resigned-answer "$e2e/inspect-challenger.key" >"$dir/resigned.json"
forge colluding-answer "$e2e/inspect-challenger.key" "$e2e/node.key" 7 8 >"$dir/colluding.json"
forge receipt-transcript "$e2e/inspect-challenger.key" >"$dir/receipt.json"

# The round log is entry 3: order, the host's fill notice, fill report, round log.
expect_fail "ledger audit, one answer byte changed" "export entries[3]" audit "$dir/answer.json"
expect_fail "the recipe, one answer byte changed" "ledger entry 3: the Ed25519 signature does not verify" \
  recipe "$dir/answer.json"
expect_fail "ledger audit, one signature byte changed" "export entries[0]" audit "$dir/signature.json"
expect_fail "the recipe, one signature byte changed" "ledger entry 0: the Ed25519 signature does not verify" \
  recipe "$dir/signature.json"
expect_fail "ledger audit, an answer byte changed and the chain re-signed" \
  "but the logged answer recomputed from the seed says false: device host, label" audit "$dir/resigned.json"
expect_fail "the recipe, an answer byte changed and the chain re-signed" \
  "a logged round or answer is not what the node answered" recipe "$dir/resigned.json"
expect_fail "ledger audit, a wrong answer the node signed too" \
  "but the logged answer recomputed from the seed says false: device host, label" audit "$dir/colluding.json"
expect_fail "the recipe, a wrong answer the node signed too" "is not the label recomputed from the seed" \
  recipe "$dir/colluding.json"
# Every answered label (--labels=all) catches any forged one, whatever the seed; the default sample is
# sized for power 0.99 against more than 1% forged and says so.
expect_pass "the recipe, every answered label" recipe_with "$dir/export.json" --labels=all
expect_said "labels: every one of the [0-9]+ answered labels recomputed: any forged answer fails this check" -E
expect_fail "the recipe, every answered label, a wrong answer the node signed too" \
  "is not the label recomputed from the seed" recipe_with "$dir/colluding.json" --labels=all --sample-seed=1
expect_pass "the recipe, its default sample" recipe_with "$dir/export.json"
expect_said "of its answers forged \([0-9]+ or more of [0-9]+\) fails this check with probability >= 0\.99" -E
expect_fail "ledger audit, the receipt's embedded transcript changed and re-signed" \
  "the transcript it embeds is not the recorded one" audit "$dir/receipt.json"
expect_fail "the recipe, the receipt's embedded transcript changed and re-signed" \
  "the transcript it embeds is not the recorded one" recipe "$dir/receipt.json"

# threat-model: T-WAVE-TIMELINE
# A wave of two nodes run by `serve --once`: both tools re-check that every member's first proof
# round came after the last member's fill, every member placed on the wave's one monotonic clock
# (the wave verdict's orderSentAfterWaveUs), and both catch node-b's timeline moved 10 s later (so
# node-a's proof rounds seem to precede node-b's fill) by a forger holding the challenger's and
# node-b's keys (its order still within its lifetime); moved 10 s earlier it leaves the order's
# lifetime, which both catch too. Moved so that node-a's first proof round is 5 ms before node-b's
# last fill, both fail it on the wave clock (1 ms tolerance); the same forgery in a wave verdict
# without orderSentAfterWaveUs (as written before it) passes both on the wall clock (50 ms).
wave=$dir/wave
mkdir -p "$wave"
agents=()
stop_agents() { for p in "${agents[@]}"; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$dir"; }
trap stop_agents EXIT
nodes=""
for n in a b; do
  "$prover" keygen --out="$wave/node-$n" >/dev/null
  "$prover" serve --listen=127.0.0.1:0 --node_name="node-$n" --authority_key="$e2e/inspect-authority.pub" \
    --challenger_key="$e2e/inspect-challenger.pub" --challenger_cert="$e2e/inspect-challenger.crt" \
    --node_key="$wave/node-$n.key" --host_budget_bytes=33554432 --devices=host --threads=1 \
    >"$wave/agent-$n.out" 2>"$wave/agent-$n.log" &
  agents+=($!)
  for _ in $(seq 1 100); do grep -q '^listening on ' "$wave/agent-$n.out" && break; sleep 0.1; done
  address=$(sed -n 's/^listening on //p' "$wave/agent-$n.out")
  [[ -n "$address" ]] || { echo "FAIL: agent node-$n did not start"; cat "$wave/agent-$n.log"; exit 1; }
  nodes+="${nodes:+, }{\"name\": \"node-$n\", \"address\": \"$address\", \"public_key\": \"$(sed -n 's/^public-key: //p' "$wave/node-$n.pub")\",
   \"certificate_file\": \"node-$n.crt\", \"devices\": [{\"selector\": \"host\", \"model\": \"host-dram\",
   \"capacity_bytes\": 33554432}]}"
done
cat >"$wave/inventory.json" <<JSON
{"nodes": [$nodes],
 "waves": [{"name": "w2", "nodes": ["node-a", "node-b"], "period_s": 3600, "jitter_s": 0, "complete": true}],
 "reserves": {"host-dram": 0}}
JSON
"$challenger" serve --once --inventory="$wave/inventory.json" --profile="$e2e/profile.json" \
  --authority_key="$e2e/inspect-authority.key" --challenger_key="$e2e/inspect-challenger.key" \
  --ledger="$wave/ledger.db" --threads=2 >"$wave/serve.out" 2>"$wave/serve.log" ||
  { echo "FAIL: the wave did not pass:"; cat "$wave/serve.log"; exit 1; }
# Under the inventory the (lab) delegation names, both members' verdicts say wave-complete held, which
# both audits take only from the wave verdict that lists every node the inventory puts in the wave.
[[ $(grep -c '^  held      wave-complete' "$wave/serve.out") -eq 2 ]] ||
  { echo "FAIL: the wave's members do not both say wave-complete held:"; cat "$wave/serve.out"; exit 1; }
"$challenger" ledger export --ledger="$wave/ledger.db" --challenger_key="$e2e/inspect-challenger.pub" \
  --authority_key="$e2e/inspect-authority.pub" --inventory="$wave/inventory.json" --out="$dir/wave.json"
# Both also report, per member, the challenger's stated fill end minus the node-signed one
# (FillReport.finishedAtUnixUs) and its spread across members (not checked: orders state no
# clock-skew allowance): under 1 s here, about 10 s with node-b's timeline moved 10 s.
lag="fill ends stated by the challenger minus those the nodes signed \\(reported, not checked: the order states no \
clock-skew allowance\\): node-a -?[0-9]+ us, node-b -?[0-9]+ us; spread"  # an extended regex
expect_pass "ledger audit of a wave's export" audit "$dir/wave.json"
expect_said "proof rounds after every member's fill: checked on the wave clock"
expect_said "$lag [0-9]{1,6} us on the wave clock" -E
expect_pass "the recipe on a wave's export" recipe "$dir/wave.json"
expect_said "every member's proof rounds after every member's fill, on the wave clock"
expect_said "$lag [0-9]{1,6} us on the wave clock" -E
wave_shift() { "$python" "$root/tests/system/audit_forge.py" wave-shift "$dir/wave.json" "$root/proto/wipe.capnp" \
  "$e2e/inspect-challenger.key" "$wave/node-b.key" node-b "$1"; }
wave_shift 10000000 >"$dir/wave-late.json"
wave_shift -10000000 >"$dir/wave-early.json"
expect_fail "ledger audit, a member's proof rounds placed before the other's fill" \
  "member node-a: its first proof round" audit "$dir/wave-late.json"
expect_said "$lag (99[0-9]{5}|100[0-9]{5}) us on the wave clock" -E
expect_fail "the recipe, a member's proof rounds placed before the other's fill" \
  "member node-a: its first proof round was sent" recipe "$dir/wave-late.json"
expect_said "$lag (99[0-9]{5}|100[0-9]{5}) us on the wave clock" -E
wave_gap() { "$python" "$root/tests/system/audit_forge.py" wave-gap "$dir/wave.json" "$root/proto/wipe.capnp" \
  "$e2e/inspect-challenger.key" "$wave/node-b.key" node-b node-a 5000 "$1"; }
wave_gap wave-clock >"$dir/wave-5ms.json"
wave_gap wall-clock >"$dir/wave-5ms-old.json"
expect_fail "ledger audit, a proof round 5 ms before a fill on the wave clock" \
  "member node-a: its first proof round (round" audit "$dir/wave-5ms.json"
expect_said "was sent 5000 us before member node-b was filled on the wave clock (allowed: 1000 us)"
expect_fail "the recipe, a proof round 5 ms before a fill on the wave clock" \
  "member node-a: its first proof round was sent 5000 us before the wave's last fill on the wave clock" \
  recipe "$dir/wave-5ms.json"
expect_pass "ledger audit, the same 5 ms in a wave verdict without the wave clock" audit "$dir/wave-5ms-old.json"
expect_said "checked on the wall clock (orderSentAtUnixUs: the wave verdict predates orderSentAfterWaveUs)"
expect_pass "the recipe, the same 5 ms in a wave verdict without the wave clock" recipe "$dir/wave-5ms-old.json"
expect_said "on the wall clock"
expect_fail "ledger audit, a member's order sent before the authority signed it" \
  "is outside the order's lifetime" audit "$dir/wave-early.json"
expect_fail "the recipe, a member's order sent before the authority signed it" \
  "is outside the order's lifetime" recipe "$dir/wave-early.json"

# threat-model: T-AUDIT-REWRITE
# A session that states a bound: node-a wiped under a calibrated profile and a classes file the
# authority signed (a made-up class slow enough, t_min 4.29 ms, for a loopback round deadline of
# 270 ms to meet the deadline rule at m = 64: its floor is 274.9 ms). Both tools recompute its
# bound and pass it. Then a forger holding the challenger's and node-a's keys lowers its
# totalUnwipedBoundBytes, re-signing the verdict, the node's transcript that names it, the receipt
# and the chain; another states a bound for the e2e session's uncalibrated profile; both tools fail
# both (below, with the other forgeries).
cat >"$wave/bound-inventory.json" <<JSON
{"nodes": [{"name": "node-a", "address": "$(sed -n 's/^listening on //p' "$wave/agent-a.out")",
   "public_key": "$(sed -n 's/^public-key: //p' "$wave/node-a.pub")", "certificate_file": "node-a.crt",
   "devices": [{"selector": "host", "model": "host-dram", "capacity_bytes": 33554432}]}],
 "waves": [{"name": "w1", "nodes": ["node-a"], "period_s": 3600, "jitter_s": 0, "complete": true}],
 "reserves": {"host-dram": 0}}
JSON
cat >"$wave/classes.json" <<JSON
{"classes": [{"name": "test-slow", "t_min_ps": 4294967295, "safety_factor": 1.5, "description": "slow enough for loopback"}]}
JSON
cat >"$wave/bound-profile.json" <<JSON
{"name": "bound-test", "chunk_labels": 64, "rounds": 8, "labels_per_round": 32, "round_deadline_us": 270000,
 "fill_deadline_ms": 300000, "adversary": {"class": "test-slow", "t_min_ps": 4294967295, "safety_factor": 1.5},
 "confidence": 0.99, "calibrated": true, "honest_round_p999_us": 1000}
JSON
for what in classes profile; do
  in=$wave/classes.json; [[ $what == profile ]] && in=$wave/bound-profile.json
  "$challenger" sign --what="$what" --in="$in" --out="${in%.json}.signed.json" \
    --authority_key="$e2e/inspect-authority.key" >/dev/null
done
"$challenger" wipe --node=node-a --inventory="$wave/bound-inventory.json" --profile="$wave/bound-profile.signed.json" \
  --classes="$wave/classes.signed.json" --authority_key="$e2e/inspect-authority.key" \
  --challenger_key="$e2e/inspect-challenger.key" --ledger="$wave/bound.db" --threads=2 >"$wave/bound.out" 2>&1 ||
  { echo "FAIL: the session under a signed, calibrated profile did not pass:"; cat "$wave/bound.out"; exit 1; }
"$challenger" ledger export --ledger="$wave/bound.db" --challenger_key="$e2e/inspect-challenger.pub" \
  --authority_key="$e2e/inspect-authority.pub" --inventory="$wave/bound-inventory.json" --out="$dir/bound.json"
expect_pass "ledger audit of a session stating a bound" audit "$dir/bound.json"
expect_said "statement: at 99% confidence at most"
expect_pass "the recipe on a session stating a bound" recipe_with "$dir/bound.json" --labels=all
expect_said "bound: the stated [0-9]+ bytes recomputed from the order's plan and the [0-9]+ chunks the rounds checked" -E
occupancy_session() {  # NAME WINDOW_S PROFILE_FLAGS...: node-a under an occupancy window (mean gap 50 ms, b a
  # quarter of its planned bytes, 8 labels a round), its ledger $wave/NAME.db exported to $dir/NAME.json
  local name=$1 window=$2; shift 2
  "$challenger" wipe --node=node-a --inventory="$wave/bound-inventory.json" "$@" \
    --authority_key="$e2e/inspect-authority.key" --challenger_key="$e2e/inspect-challenger.key" \
    --ledger="$wave/$name.db" --threads=2 --occupancy_window_s="$window" --occupancy_mean_gap_s=0.05 \
    --occupancy_shortfall=0.25 --occupancy_labels=8 >"$wave/$name.out" 2>&1 ||
    { echo "FAIL: the $name session with an occupancy window did not pass:"; cat "$wave/$name.out"; exit 1; }
  "$challenger" ledger export --ledger="$wave/$name.db" --challenger_key="$e2e/inspect-challenger.pub" \
    --authority_key="$e2e/inspect-authority.pub" --inventory="$wave/bound-inventory.json" --out="$dir/$name.json"
}
# The same node held through an occupancy window of 1.5 s at a mean gap of 50 ms
# (challenger/session/occupancy_bound.h): both tools recompute its rounds and its statement.
occupancy_session occupancy 1.5 --profile="$wave/bound-profile.signed.json" --classes="$wave/classes.signed.json"
grep -q "^occupancy: at 99% confidence node node-a's planned memory lacked labels in more than " "$wave/occupancy.out" ||
  { echo "FAIL: wipe does not print the occupancy statement:"; cat "$wave/occupancy.out"; failures=$((failures + 1)); }
expect_pass "ledger audit of a session with an occupancy window" audit "$dir/occupancy.json"
expect_pass "the recipe on a session with an occupancy window" recipe "$dir/occupancy.json"
expect_said "occupancy: [0-9]+ rounds in a window of [0-9]+ us, d\(b\) [0-9.e-]+, T\* \+ U [0-9]+ us: stated" -E
# The same window under the profile unsigned: no bound, so no occupancy or compute statement, each
# saying why in words that quote the verdict's reason (what the order shows: it names no authority
# signature). Both tools pass it, and fail the forgeries below that put a claim into those words.
occupancy_session unsigned 0.3 --profile="$wave/bound-profile.json"
grep -q "^occupancy: no occupancy statement: no bound is stated, and the occupancy statement needs the same conditions (no bound: " \
  "$wave/unsigned.out" ||
  { echo "FAIL: wipe does not say why no occupancy statement:"; cat "$wave/unsigned.out"; failures=$((failures + 1)); }
expect_pass "ledger audit of an occupancy window under an unsigned profile" audit "$dir/unsigned.json"
expect_pass "the recipe on an occupancy window under an unsigned profile" recipe "$dir/unsigned.json"
expect_said "T\* \+ U [0-9]+ us: nothing stated" -E

# threat-model: T-SCHEDULE-SECRET
# A held wave (idle nodes: the inventory's "hold"): serve runs node-a's session with an occupancy
# window as long as the wave's longest gap (period 2 s + jitter 1 s, in the order) that the challenger
# closes at the next run's time, drawn in secret (1 to 3 s after the proof rounds; in no order). Both
# tools recompute the window as it ran, and status shows the share of the last minute it proves held.
"$python" - "$wave/bound-inventory.json" "$wave/held-inventory.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["waves"] = [{"name": "held", "nodes": ["node-a"], "period_s": 2, "jitter_s": 1, "complete": True,
                 "hold": {"mean_gap_s": 0.05, "shortfall": 0.25, "labels_per_round": 8}}]
json.dump(doc, open(sys.argv[2], "w"))
PY
"$challenger" serve --once --inventory="$wave/held-inventory.json" --profile="$wave/bound-profile.signed.json" \
  --classes="$wave/classes.signed.json" --authority_key="$e2e/inspect-authority.key" \
  --challenger_key="$e2e/inspect-challenger.key" --ledger="$wave/held.db" --threads=2 \
  >"$wave/held.out" 2>"$wave/held.log" ||
  { echo "FAIL: the held wave did not pass:"; cat "$wave/held.log"; exit 1; }
grep -q "^wipeproof-challenger serve: wave held (1 node(s), period 2 s, jitter 1 s, held between runs)" \
  "$wave/held.log" || { echo "FAIL: serve does not say the wave is held:"; cat "$wave/held.log"; failures=$((failures + 1)); }
"$challenger" ledger export --ledger="$wave/held.db" --challenger_key="$e2e/inspect-challenger.pub" \
  --authority_key="$e2e/inspect-authority.pub" --inventory="$wave/held-inventory.json" --out="$dir/held.json"
window=$("$challenger" ledger decode --export="$dir/held.json" | grep -o '"occupancyWindowUs": *"[0-9]*"' || true)
if [[ $window =~ \"3000000\"$ ]]; then echo "ok: the held wave's order asks the wave's longest gap, 3 s"; else
  echo "FAIL: the held wave's order asks an occupancy window of '$window', want 3000000 us"
  failures=$((failures + 1)); fi
expect_pass "ledger audit of a held wave's session" audit "$dir/held.json"
expect_pass "the recipe on a held wave's session" recipe "$dir/held.json"
expect_said "occupancy: [0-9]+ rounds in a window of [0-9]+ us" -E
expect_pass "status of a held wave" "$challenger" status --inventory="$wave/held-inventory.json" \
  --ledger="$wave/held.db" --challenger_key="$e2e/inspect-challenger.pub" --capacity_over_s=60
expect_said "^node-a: held: [0-9.]+% of the last 60 s proven occupied" -E

# threat-model: T-AUDIT-REWRITE
# Certificates (docs/certificate.md): of the occupancy session (written with node keys from the
# inventory the ledger records) and of the wave's first run (its wave verdict and both members),
# each checked on its own by `ledger audit --certificate` and by the recipe, and valid under
# docs/certificate.schema.json; both tools' canonical text is Python's json.dumps on awkward strings
# (tests/testdata/canonical-json.json). Then copies with one byte changed (the first, the last and
# every k-th, k a multiple of 97, at most 120 per certificate: tests/system/certificate_flips.py):
# each fails `ledger audit --certificate`, and five of them (the first byte, an indentation space, a
# summary digit, an envelope digit, the last byte) fail the recipe too, each naming its reason. A
# wave member's session alone is refused: its verdict's wave-complete needs the wave's verdict.
certificate() {  # OUT ARGS...: ledger certificate
  "$challenger" ledger certificate --challenger_key="$e2e/inspect-challenger.pub" \
    --authority_key="$e2e/inspect-authority.pub" --threads=2 --out="$1" "${@:2}"
}
check_certificate() {
  "$challenger" ledger audit --certificate="$1" --authority_key="$e2e/inspect-authority.pub" \
    --challenger_key="$e2e/inspect-challenger.pub" --threads=2
}
recipe_certificate() {  # CERTIFICATE [LABELS]
  "$python" "$root/docs/audit_recipe.py" --certificate="$1" --schema="$root/proto/wipe.capnp" \
    --authority-pub="$e2e/inspect-authority.pub" --challenger-pub="$e2e/inspect-challenger.pub" --labels="${2:-8}" \
    --sample-seed=7 --jobs=2
}
occupancy_session=$("$python" -c 'import json, sys
print(next(e["session_id"] for e in json.load(open(sys.argv[1]))["entries"] if e["kind"] == "order"))' \
  "$dir/occupancy.json")
certificate "$dir/certificate-session.json" --ledger="$wave/occupancy.db" --session="$occupancy_session" 2>"$dir/out" ||
  { echo "FAIL: ledger certificate of the occupancy session:"; cat "$dir/out"; exit 1; }
certificate "$dir/certificate-wave.json" --ledger="$wave/ledger.db" --wave=w2 2>"$dir/out" ||
  { echo "FAIL: ledger certificate of the wave:"; cat "$dir/out"; exit 1; }
expect_pass "ledger audit --certificate of a session's certificate" check_certificate "$dir/certificate-session.json"
expect_said "OK: session $occupancy_session: pass"
expect_said "occupancy: at 99% confidence node node-a's planned memory lacked labels in more than "
expect_pass "the recipe on a session's certificate" recipe_certificate "$dir/certificate-session.json"
expect_said "OK: session $occupancy_session: pass; every byte of it recomputed from its signed records"
# A member's session alone: its verdict says wave-complete held, which only the wave's verdict bears out.
member=$("$python" -c 'import json, sys
print(json.load(open(sys.argv[1]))["certified"]["sessions"][0]["session_id"])' "$dir/certificate-wave.json")
code=0
certificate "$dir/certificate-member.json" --ledger="$wave/ledger.db" --session="$member" >"$dir/out" 2>&1 || code=$?
if [[ $code -eq 2 ]] && grep -qF "only that wave's verdict bears out: certify the wave" "$dir/out"; then
  echo "ok: ledger certificate of a wave member's session alone is refused, naming the wave's certificate"
else echo "FAIL: ledger certificate of a wave member's session alone should exit 2 (exit $code):"; cat "$dir/out"
  failures=$((failures + 1)); fi
expect_pass "ledger audit --certificate of a wave's certificate" check_certificate "$dir/certificate-wave.json"
expect_said "OK: wave w2 \(ledger entry [0-9]+\): pass" -E
expect_pass "the recipe on a wave's certificate" recipe_certificate "$dir/certificate-wave.json"
expect_said "OK: wave w2 \(ledger entry [0-9]+\): pass; every byte of it recomputed from its signed records" -E
schema_check() {  # CERTIFICATE...: each valid under docs/certificate.schema.json (Debian python3-jsonschema)
  "$python" - "$root/docs/certificate.schema.json" "$@" <<'PY'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
for path in sys.argv[2:]:
    jsonschema.Draft202012Validator(schema).validate(json.load(open(path)))
    print(f"{path}: valid")
broken = json.load(open(sys.argv[2]))
broken["certified"]["sessions"][0]["devices"][0]["planned_bytes"] = "131072"  # the schema must notice
sys.exit(0 if not jsonschema.Draft202012Validator(schema).is_valid(broken) else 1)
PY
}
expect_pass "docs/certificate.schema.json on both certificates" \
  schema_check "$dir/certificate-session.json" "$dir/certificate-wave.json"
canonical_check() {  # the recipe's canonical text of tests/testdata/canonical-json.json is the file itself
  "$python" - "$root/docs/audit_recipe.py" "$root/tests/testdata/canonical-json.json" <<'PY'
import importlib.util, json, sys
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
spec = importlib.util.spec_from_file_location("recipe", sys.argv[1])
recipe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(recipe)
text = open(sys.argv[2], encoding="utf-8").read()
sys.exit(0 if recipe.canonical_text(json.loads(text)) == text else 1)
PY
}
expect_pass "the recipe's canonical text of awkward strings (as certificate_test's)" canonical_check
for which in session wave; do
  chosen=$("$python" "$root/tests/system/certificate_flips.py" "$dir/certificate-$which.json" "$dir/flips-$which" 120)
  wrong=() count=0
  for copy in "$dir/flips-$which"/*.json; do
    count=$((count + 1))
    code=0
    check_certificate "$copy" >/dev/null 2>&1 || code=$?
    [[ $code -eq 1 ]] || wrong+=("$(basename "$copy" .json):$code")
  done
  if [[ ${#wrong[@]} -eq 0 && $count -ge 100 ]]; then
    echo "ok: ledger audit --certificate fails all $count copies of the $which certificate with one byte changed"
  else
    echo "FAIL: ledger audit --certificate should exit 1 on every copy of the $which certificate with one byte" \
      "changed ($count copies); position:exit ${wrong[*]}"
    failures=$((failures + 1))
  fi
  # The recipe on three copies of the session's certificate and two of the wave's, each failing for
  # its reason: not JSON, not canonical (a tab), a summary digit, an envelope digit, not canonical.
  read -r -a at <<<"$chosen"
  reasons=("is not JSON" "is not in canonical form" "certified.sessions[0].devices[0].planned_bytes is"
           "the Ed25519 signature does not verify" "is not in canonical form")
  picks=(3 4)
  [[ $which == session ]] && picks=(0 1 2)
  for i in "${picks[@]}"; do
    expect_fail "the recipe, the $which certificate with byte ${at[$i]} changed" "${reasons[$i]}" \
      recipe_certificate "$dir/flips-$which/${at[$i]}.json" 0
  done
done

# Forgeries with the challenger's key alone, each failing both tools: a wave verdict naming its
# members' nodes swapped, listing three sessions and nodes but two digests, an empty or out-of-range
# orderSentAfterWaveUs; a receipt filed under another session (its sessionId zeroed), stating no
# reportDigest although the ledger records the fill report, or naming its node in invalid UTF-8.
# They fail before any label is recomputed (--labels=0), and run side by side to save time (a
# forgery's tools run with the next forgeries' writing).
bg=()
run_bg() {  # OUT COMMAND...: COMMAND in the background, its output in OUT, its exit status in OUT.rc
  local out=$1; shift
  { local code=0; "$@" >"$out" 2>&1 || code=$?; echo "$code" >"$out.rc"; } &
  bg+=($!)
}
wait_bg() { for p in "${bg[@]}"; do wait "$p" || true; done; bg=(); }
forged() {  # NAME MODE EXPORT ARGS...: writes $dir/NAME.json in the background
  local name=$1; shift
  { local code=0; forge "$@" >"$dir/$name.json" 2>"$dir/$name.forge" || code=$?; echo "$code" >"$dir/$name.forge.rc"; } &
  bg+=($!)
}
quick_recipe() {
  "$python" "$root/docs/audit_recipe.py" "$1" --schema="$root/proto/wipe.capnp" \
    --authority-pub="$e2e/inspect-authority.pub" --challenger-pub="$e2e/inspect-challenger.pub" --labels=0
}
said_fail() {  # NAME TEXT OUT: OUT (run_bg's) exited 1 naming TEXT
  if [[ $(cat "$3.rc") -eq 1 ]] && grep -qF -- "$2" "$3"; then echo "ok: $1 fails naming '$2'"; else
    echo "FAIL: $1 should exit 1 naming '$2' (exit $(cat "$3.rc")):"; cat "$3"; failures=$((failures + 1)); fi
}
both_fail() {  # NAME=AUDIT_TEXT=RECIPE_TEXT... (each forged as $dir/NAME.json), checked side by side
  local spec name
  for spec in "$@"; do
    name=${spec%%=*}
    [[ $(cat "$dir/$name.forge.rc") -eq 0 ]] || { echo "FAIL: forgery $name:"; cat "$dir/$name.forge"; exit 1; }
    run_bg "$dir/$name.audit" audit "$dir/$name.json"
    run_bg "$dir/$name.recipe" quick_recipe "$dir/$name.json"
  done
  wait_bg
  for spec in "$@"; do
    IFS='=' read -r name audit_text recipe_text <<<"$spec"
    said_fail "ledger audit, $name" "$audit_text" "$dir/$name.audit"
    said_fail "the recipe, $name" "$recipe_text" "$dir/$name.recipe"
  done
}
key=$e2e/inspect-challenger.key
ids=$("$python" -c 'import json, sys; w = json.load(open(sys.argv[1])); print(json.dumps(
  [list(bytes.fromhex(e["session_id"])) for e in w["entries"] if e["kind"] == "order"] + [list(range(1, 17))]))' \
  "$dir/wave.json")
forged wave-nodes-swapped wave-set "$dir/wave.json" "$key" 'nodeNames=["node-b", "node-a"]'
forged wave-three-sessions-two-digests wave-set "$dir/wave.json" "$key" "sessionIds=$ids" \
  'nodeNames=["node-a", "node-b", "node-c"]'
forged wave-clock-empty wave-set "$dir/wave.json" "$key" 'orderSentAfterWaveUs=[]'
forged wave-clock-2-60 wave-set "$dir/wave.json" "$key" 'orderSentAfterWaveUs=["0", "1152921504606846976"]'
forged receipt-session-zeroed receipt-set "$dir/export.json" "$key" 'sessionId=[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]'
forged receipt-no-report-digest receipt-set "$dir/export.json" "$key" 'reportDigest=null'
forged receipt-node-not-utf8 receipt-bad-utf8 "$dir/export.json" "$key"
# A second pass verdict that no node signed (the transcript names the first), moving the session on the
# wall clock: the recipe took the last verdict while checking the transcript against the first.
forged second-pass-verdict second-pass "$dir/export.json" "$key"
# The bound forgeries above (the challenger's and the node's keys), and a wave verdict stating no bound
# re-signed with an unwipedBoundBytes (the challenger's key).
forged bound-lowered verdict-set "$dir/bound.json" "$key" "$wave/node-a.key" 'totalUnwipedBoundBytes="1"'
forged bound-uncalibrated verdict-set "$dir/export.json" "$key" "$e2e/node.key" 'boundStated=true' \
  'totalUnwipedBoundBytes="1000"'
forged wave-bytes-without-bound wave-set "$dir/wave.json" "$key" 'unwipedBoundBytes="12345"'
# threat-model: T-WAVE-VERDICT
# A complete wave's "no bound" reason replaced by claim-like words that keep its prefix.
forged wave-no-bound-claim wave-set "$dir/wave.json" "$key" \
  'statement="no bound for wave w2: at 99.9% confidence at most 0 bytes were not wiped"'
# threat-model: T-OCCUPANCY-FORGED
# An occupancy statement made stronger than its rounds allow (the challenger's and the node's keys).
forged occupancy-shortened verdict-set "$dir/occupancy.json" "$key" "$wave/node-a.key" 'occupancy.shortUs="1"'
forged occupancy-stretched verdict-set "$dir/occupancy.json" "$key" "$wave/node-a.key" \
  'occupancy.windowEndAfterOrderUs="100000000000"'
# threat-model: T-COMPUTE-FORGED
# Statements not stated whose words were made a claim (the flag left false): the occupancy and
# compute statements of the unsigned profile's session, and the compute statement of the signed
# one (its inventory declares no label rate).
forged occupancy-unstated-claim verdict-set "$dir/unsigned.json" "$key" "$wave/node-a.key" \
  'occupancy.statement="at 99% confidence node node-a held its planned memory the whole window"'
forged compute-unstated-claim verdict-set "$dir/unsigned.json" "$key" "$wave/node-a.key" \
  'compute.statement="at 99% confidence node node-a used all of its compute"'
forged compute-unstated-claim-bound verdict-set "$dir/bound.json" "$key" "$wave/node-a.key" \
  'compute.statement="at 99% confidence node node-a used all of its compute"'
# threat-model: T-DELEGATION
# A challenger-key holder orders outside the authority's delegation: under a class the authority did
# not sign (the signed, calibrated session's t_min raised, still naming the signed document), and
# under a delegation it made up for itself.
forged order-undelegated-class order-set "$dir/bound.json" "$key" 'profile.tMinPs="1000000"'
forged order-self-delegated order-set "$dir/export.json" "$key" 'delegation="self"'
# The delegated profile kept byte for byte, the order's round deadline widened (its m or format could
# widen the rule's floor to match; the delegated profile binds all three).
forged order-undelegated-deadline order-set "$dir/bound.json" "$key" 'roundDeadlineUs="7800"'
# threat-model: T-INVENTORY-UNSIGNED
# A challenger-key holder restating the authority's signed inventory its own way: a device's declared
# capacity lowered in the order, an assumption the declarations do not support claimed held in the
# verdict, the inventory the export carries replaced by one of its own (a larger host reserve).
forged order-capacity-restated order-set "$dir/bound.json" "$key" 'devices.0.capacityBytes="1048576"'
forged verdict-assumption-held verdict-set "$dir/bound.json" "$key" "$wave/node-a.key" 'assumptions.2.held=true'
# threat-model: T-WAVE-VERDICT
# A complete wave verdict re-signed listing one of its two declared nodes.
forged wave-of-one-claimed wave-first-member "$dir/wave.json" "$key"
# The same wave of one, re-signed as not complete with its honest reason: the wave verdict stands, and
# node-a's verdict saying wave-complete held is what fails.
forged wave-of-one-incomplete wave-first-member "$dir/wave.json" "$key" 'complete=false' 'confidence=0' \
  'statement="no bound for wave w2: the wave is not complete (not every node of it was in the run, or the inventory does not declare it complete)"'
forged inventory-replaced inventory-edit "$dir/bound.json" '"host-dram": 0' '"host-dram": 4096'
# A wave name with terminal controls (BEL, the C1 control NEL, a bidi isolate) reaches the output
# escaped, never raw. (Only decimal-digit escapes: Debian's capnp tool misreads \u escapes with a-f.)
forged wave-name-controls wave-set "$dir/wave.json" "$key" 'waveName="w\u0007X\u0085\u2066"'
# threat-model: T-WAVE-TIMELINE
# Meanwhile a second run of the wave: each run has sessions of its own, and both tools pass the
# export of both runs. A challenger-key holder re-signs the second wave verdict to pair node-a's
# session of run 1 with node-b's of run 2, on a wave clock chosen to fit: the wall clock (named by
# the node-signed transcripts) puts them seconds apart, and both tools fail it; the first wave
# verdict replayed as the second lists each member session twice, and both fail that.
second_run() {
  "$challenger" serve --once --inventory="$wave/inventory.json" --profile="$e2e/profile.json" \
    --authority_key="$e2e/inspect-authority.key" --challenger_key="$e2e/inspect-challenger.key" \
    --ledger="$wave/ledger.db" --threads=2 >"$wave/serve2.out" 2>"$wave/serve2.log" &&
    "$challenger" ledger export --ledger="$wave/ledger.db" --challenger_key="$e2e/inspect-challenger.pub" \
      --authority_key="$e2e/inspect-authority.pub" --inventory="$wave/inventory.json" --out="$dir/waves.json"
}
run_bg "$dir/second-run" second_run
wait_bg
[[ $(cat "$dir/second-run.rc") -eq 0 ]] || { echo "FAIL: the second wave run did not pass:"; cat "$wave/serve2.log"; exit 1; }
forged wave-pairing-two-runs wave-mix "$dir/waves.json" "$key" node-a node-b
forged wave-replayed wave-replay "$dir/waves.json" "$key"
run_bg "$dir/waves.audit" audit "$dir/waves.json"
run_bg "$dir/waves.recipe" quick_recipe "$dir/waves.json"
zeros=00000000000000000000000000000000
both_fail "wave-nodes-swapped=the session's verdict is for node node-a=the session's verdict is for node node-a" \
  "wave-three-sessions-two-digests=sessionIds, nodeNames and verdictDigests differ in length=sessionIds, nodeNames \
and verdictDigests differ in length (3, 3, 2)" \
  "wave-clock-empty=orderSentAfterWaveUs lists 0 members, sessionIds 2=orderSentAfterWaveUs lists 0 members, \
sessionIds 2" \
  "wave-clock-2-60=orderSentAfterWaveUs is out of range=orderSentAfterWaveUs is out of range" \
  "receipt-session-zeroed=record belongs to session $zeros=the record belongs to session $zeros, the entry names" \
  "receipt-no-report-digest=states no reportDigest, the ledger records a fill report=states no reportDigest, \
the ledger records a fill report" \
  "receipt-node-not-utf8=(ledger entry 6)=a Receipt holds text that is not valid UTF-8" \
  "second-pass-verdict=a second verdict may only supersede a pass with a failure=a second verdict may only \
supersede a pass with a failure" \
  'wave-name-controls=X\u0085\u2066=w\u0007X\u0085\u2066' \
  "bound-lowered=bound: totalUnwipedBoundBytes is 1, recomputed=totalUnwipedBoundBytes is 1, the bound recomputed \
from the order's plan and the chunks the rounds checked" \
  "bound-uncalibrated=bound: boundStated is true, recomputed=boundStated is true, recomputed from the order: false \
(it needs a calibrated profile)" \
  "wave-bytes-without-bound=unwipedBoundBytes is 12345=it states no bound, yet unwipedBoundBytes is 12345" \
  "wave-no-bound-claim=the statement is 'no bound for wave w2: at 99.9%=its statement is not the reason its \
members give: 'no bound for wave w2: at 99.9%" \
  "occupancy-shortened=occupancy: shortUs is 1, recomputed=occupancy shortUs 1, T* + U recomputed" \
  "occupancy-stretched=rounds where its gaps' running time asks about=rounds where its gaps' running time asks about" \
  "occupancy-unstated-claim=occupancy: the statement is \"at 99% confidence=its occupancy statement is not the one \
its figures make: 'at 99% confidence" \
  "compute-unstated-claim=compute: the statement is \"at 99% confidence=it states no compute, yet its words are not \
the reason why: 'at 99% confidence" \
  "compute-unstated-claim-bound=compute: the statement is \"at 99% confidence=it states no compute, yet its words \
are not the reason why: 'at 99% confidence" \
  "order-undelegated-class=does not stand under the authority's delegation: the order's profile=names a signature \
but is not one its delegation lists" \
  "order-self-delegated=the order's delegation does not verify under the authority key=its delegation: signed by key" \
  "order-undelegated-deadline=are not its delegated profile=its roundDeadlineUs 7800 is not its delegated profile's" \
  "order-capacity-restated=the order's device 0 host capacityBytes is 1048576, the signed inventory declares 33554432\
=the order's device 0 (selector, model, capacity, reserve) is ('host', 'host-dram', 1048576, 0)" \
  "verdict-assumption-held=assumption no-nvme-in-reach reads held, and recomputed from the authority's signed \
declarations it does not=assumption no-nvme-in-reach reads held, which the authority's signed declarations do not" \
  "inventory-replaced=, which the export does not carry=, which the export does not carry" \
  "wave-of-one-incomplete=its verdict says wave-complete held, and=its verdict says wave-complete held, and" \
  "wave-of-one-claimed=the wave verdict says complete and lists nodes node-a, the signed inventory its order stands \
under declares wave w2's nodes node-a, node-b=the wave verdict says complete and lists nodes node-a, the signed \
inventory its order stands under declares wave w2's nodes node-a, node-b"
for tool in audit recipe; do
  if LC_ALL=C grep -qP '\x07|\xc2\x85|\xe2\x81\xa6' "$dir/wave-name-controls.$tool"; then
    echo "FAIL: $tool printed a raw terminal control:"; cat -v "$dir/wave-name-controls.$tool"; failures=$((failures + 1))
  else echo "ok: $tool prints no raw terminal control"; fi
done
for tool in audit recipe; do
  text="audit: OK: 4 session(s) and 2 wave verdict(s)"
  [[ $tool == recipe ]] && text="4 session(s) and 2 wave verdict(s) re-verified"
  if [[ $(cat "$dir/waves.$tool.rc") -eq 0 ]] && grep -qF -- "$text" "$dir/waves.$tool"; then
    echo "ok: $tool passes two runs of a wave, saying '$text'"
  else echo "FAIL: $tool should pass two runs of a wave, saying '$text':"; cat "$dir/waves.$tool"; failures=$((failures + 1)); fi
done
both_fail "wave-pairing-two-runs=before member node-b was filled on the wall clock=before the wave's last fill on \
the wall clock" \
  "wave-replayed=is listed by wave verdict (ledger entry=is listed by wave verdict (ledger entry"

[[ $failures -eq 0 ]] && echo "audit test passed" && exit 0
echo "$failures check(s) failed"
exit 1
