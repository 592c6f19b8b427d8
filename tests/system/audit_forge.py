#!/usr/bin/env python3
"""Tampered copies of a ledger export for tests/system/audit_test.sh.

  audit_forge.py answer-byte EXPORT SCHEMA              one byte of the first logged answer changed
  audit_forge.py signature-byte EXPORT SCHEMA           one byte of entry 0's signature changed
  audit_forge.py resigned-answer EXPORT SCHEMA KEY      the answer byte changed by a forger holding
                                                        the challenger's secret key (KEY, a .key
                                                        file): the entry re-signed, the chain and
                                                        the export's fields rebuilt after it
  audit_forge.py colluding-answer EXPORT SCHEMA KEY NODE_KEY SEED N
                                                        an answer byte changed in the label the
                                                        recipe samples first (--sample-seed=SEED
                                                        --labels=N), the transcript re-signed with
                                                        the node's key: only labels catch it
  audit_forge.py receipt-transcript EXPORT SCHEMA KEY    the receipt's embedded copy of the node-signed
                                                        transcript with one signature byte changed,
                                                        the receipt and the chain re-signed with the
                                                        challenger's key (KEY)
  audit_forge.py wave-shift EXPORT SCHEMA KEY NODE_KEY NODE DELTA_US [wave-clock|wall-clock]
                                                        in a wave run: member NODE's order placed
                                                        DELTA_US later, in its verdict
                                                        (orderSentAtUnixUs) and in the wave verdict
                                                        (orderSentAfterWaveUs), so the other members'
                                                        proof rounds seem to precede its fill;
                                                        re-signed by the challenger (KEY) and the node
                                                        (NODE_KEY: its transcript names the verdict
                                                        digest), the receipt (and the transcript it
                                                        embeds), the wave verdict and the chain
                                                        rebuilt. wall-clock: the wave verdict's
                                                        orderSentAfterWaveUs dropped too (as written
                                                        before it existed)
  audit_forge.py wave-gap EXPORT SCHEMA KEY NODE_KEY NODE OTHER GAP_US [wave-clock|wall-clock]
                                                        wave-shift of NODE by just as much that OTHER's
                                                        first proof round comes GAP_US before NODE's
                                                        last fill on the wave clock
  audit_forge.py wave-set EXPORT SCHEMA KEY FIELD=JSON...
                                                        the last wave verdict with each FIELD set to the
                                                        JSON value (null: removed), re-signed with the
                                                        challenger's key (KEY), the chain rebuilt
  audit_forge.py wave-first-member EXPORT SCHEMA KEY [FIELD=JSON...]
                                                        the last wave verdict listing its first member
                                                        alone, FIELDs set as wave-set does, re-signed
  audit_forge.py wave-mix EXPORT SCHEMA KEY NODE OTHER   the last wave verdict re-signed naming NODE's
                                                        session of the first wave verdict and OTHER's of
                                                        the last, orderSentAfterWaveUs chosen so that
                                                        their proof rounds follow both fills on it
  audit_forge.py wave-replay EXPORT SCHEMA KEY           the last wave verdict's record replaced by the
                                                        first's (a valid verdict listed twice), the
                                                        chain re-signed
  audit_forge.py verdict-set EXPORT SCHEMA KEY NODE_KEY FIELD=JSON...
                                                        the first verdict with each FIELD set to the JSON
                                                        value (null: removed), re-signed with the
                                                        challenger's key (KEY); the node-signed transcript
                                                        naming it re-signed with the node's (NODE_KEY),
                                                        the receipt and the chain rebuilt
  audit_forge.py receipt-set EXPORT SCHEMA KEY FIELD=JSON...
                                                        the first receipt with each FIELD set (null:
                                                        removed), re-signed, the chain rebuilt
  audit_forge.py receipt-bad-utf8 EXPORT SCHEMA KEY      the first receipt's nodeName with its last byte
                                                        made invalid UTF-8, re-signed
  audit_forge.py order-set EXPORT SCHEMA KEY FIELD=JSON...
                                                        the first order with each FIELD set (profile.F
                                                        sets the profile's F; delegation="self" puts in a
                                                        delegation signed by KEY itself, as a challenger
                                                        host would make one up), re-signed with the
                                                        challenger's key (KEY), the chain rebuilt: a
                                                        challenger ordering outside its delegation
Writes the tampered export to stdout. Uses docs/audit_recipe.py's capnp helpers.
"""
import json
import os
import random
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs"))
import audit_recipe as recipe  # noqa: E402  pylint: disable=wrong-import-position
from nacl.signing import SigningKey  # noqa: E402  pylint: disable=wrong-import-position


def envelope_parts(schema, envelope_bytes):
    envelope = schema.decode(envelope_bytes, "Envelope")
    return recipe.data(envelope["payload"]), recipe.data(envelope["signature"])


def first_answer_label(schema, document):
    """(entry index, the first 32 answered label bytes, the round log record bytes)."""
    for i, entry in enumerate(document["entries"]):
        if entry["kind"] != "roundLog":
            continue
        payload, _ = envelope_parts(schema, bytes.fromhex(entry["envelope"]))
        record = recipe.data(schema.decode(payload, "LedgerEntry")["record"])
        log = schema.decode(record, "RoundLog")
        return i, recipe.data(log["exchanges"][0]["answer"]["labels"])[:32], record
    raise SystemExit("no round log in the export")


def flip_once(blob, inner):
    at = blob.find(inner)
    assert at >= 0 and blob.find(inner, at + 1) < 0, "the bytes to change must occur once"
    return blob[:at] + bytes([blob[at] ^ 1]) + blob[at + 1:]


def read_seed(path):
    """The secret-seed of a wipeproof .key file."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name.strip() == "secret-seed":
                return bytes.fromhex(value.strip())
    raise SystemExit(f"{path}: no secret-seed")


def resign(schema, envelope, old_inner, new_inner, key, kind):
    """The envelope with `old_inner` replaced by `new_inner` in its payload, signed again by `key`."""
    payload, signature = envelope_parts(schema, envelope)
    new_payload = payload.replace(old_inner, new_inner)
    number = schema.enum("MessageKind")[kind]
    new_signature = key.sign(recipe.ENVELOPE_CONTEXT + struct.pack("<H", number) + new_payload).signature
    return envelope.replace(payload, new_payload).replace(signature, new_signature), new_payload


def rewrite_records(schema, document, new_records, challenger):
    """Puts new record bytes into entries (index -> bytes), re-signs them and every later entry (the chain) with
    the challenger key, and updates the export's fields that derive from them."""
    entries = document["entries"]
    previous_old = previous_new = None
    for n in range(min(new_records), len(entries)):
        envelope = bytes.fromhex(entries[n]["envelope"])
        payload, _ = envelope_parts(schema, envelope)
        record = recipe.data(schema.decode(payload, "LedgerEntry")["record"])
        new_envelope = envelope
        if previous_old is not None:  # link to the previous entry's new digest
            new_envelope, _ = resign(schema, new_envelope, previous_old, previous_new, challenger, "ledgerEntry")
            entries[n]["prev_entry_digest"] = previous_new.hex()
        if n in new_records:
            if len(new_records[n]) != len(record):  # re-encoded: Data of a new length
                entry = schema.decode(envelope_parts(schema, new_envelope)[0], "LedgerEntry")
                entry["record"] = list(new_records[n])
                new_envelope = sign_message(schema, entry, "LedgerEntry", challenger, "ledgerEntry", new_envelope)
            else:
                new_envelope, _ = resign(schema, new_envelope, record, new_records[n], challenger, "ledgerEntry")
            entries[n]["record_digest"] = recipe.blake2b256(new_records[n]).hex()
            if "record_bytes" in entries[n]:
                entries[n]["record_bytes"] = len(new_records[n])
            summary = entries[n]["summary"]
            if "payload_digest" in summary:
                summary["payload_digest"] = recipe.blake2b256(envelope_parts(schema, new_records[n])[0]).hex()
            if entries[n]["kind"] == "transcript":
                inner = envelope_parts(schema, new_records[n])[0]
                summary["digest"] = recipe.data(schema.decode(inner, "TranscriptDigest")["digest"]).hex()
        previous_old, previous_new = recipe.blake2b256(envelope), recipe.blake2b256(new_envelope)
        entries[n]["envelope"] = new_envelope.hex()
        entries[n]["entry_digest"] = previous_new.hex()
    document["head"]["envelope"] = entries[-1]["envelope"]
    document["head"]["entry_digest"] = entries[-1]["entry_digest"]


def records_by_kind(schema, document):
    """{kind: (entry index, record bytes)} of a one-session export."""
    out = {}
    for i, entry in enumerate(document["entries"]):
        payload, _ = envelope_parts(schema, bytes.fromhex(entry["envelope"]))
        out[entry["kind"]] = (i, recipe.data(schema.decode(payload, "LedgerEntry")["record"]))
    return out


def colluding_answer(schema, document, challenger, node, sample_seed, labels):
    """A wrong answer the node signs into its transcript and the challenger into its ledger: the label the
    recipe will sample (same seed) gets one byte changed, the transcript digest is recomputed and signed by the
    node key, the receipt embedding it and the chain by the challenger key."""
    records = records_by_kind(schema, document)
    log_at, log = records["roundLog"]
    rounds = recipe.logged_rounds(schema, [(log_at, log)])
    target = recipe.sample_labels(recipe.answered_labels(rounds), labels, random.Random(sample_seed))[0]
    new_log = flip_once(log, target[4])
    order = envelope_parts(schema, records["order"][1])[0]
    report = envelope_parts(schema, records["fillReport"][1])[0]
    notices = {}  # every device's fill notice payload, by device index
    for entry in document["entries"]:
        if entry["kind"] != "deviceFillNotice":
            continue
        payload, _ = envelope_parts(schema, bytes.fromhex(entry["envelope"]))
        notice = envelope_parts(schema, recipe.data(schema.decode(payload, "LedgerEntry")["record"]))[0]
        notices[int(schema.decode(notice, "DeviceFillNotice").get("deviceIndex", 0))] = notice
    digest = recipe.transcript_digest(schema, order, notices, report,
                                      recipe.logged_rounds(schema, [(log_at, new_log)]))
    transcript_at, transcript = records["transcript"]
    old_payload, old_signature = envelope_parts(schema, transcript)
    old_digest = recipe.data(schema.decode(old_payload, "TranscriptDigest")["digest"])
    new_transcript, new_payload = resign(schema, transcript, old_digest, digest, node, "transcriptDigest")
    new_signature = envelope_parts(schema, new_transcript)[1]
    receipt_at, receipt = records["receipt"]
    new_receipt, _ = resign(schema, receipt, old_payload, new_payload, challenger, "receipt")
    new_receipt, _ = resign(schema, new_receipt, old_signature, new_signature, challenger, "receipt")
    rewrite_records(schema, document, {log_at: new_log, transcript_at: new_transcript, receipt_at: new_receipt},
                    challenger)


def receipt_transcript(schema, document, challenger):
    """One byte of the signature in the receipt's embedded transcript changed; the receipt re-signed."""
    records = records_by_kind(schema, document)
    receipt_at, receipt = records["receipt"]
    _, signature = envelope_parts(schema, records["transcript"][1])
    new_receipt, _ = resign(schema, receipt, signature, flip_once(signature, signature), challenger, "receipt")
    rewrite_records(schema, document, {receipt_at: new_receipt}, challenger)


def sign_message(schema, message, type_name, key, kind, envelope):
    """`envelope` (an Envelope's bytes) with its payload replaced by `message` (capnp JSON of `type_name`) in
    canonical form, signed by `key`."""
    new_payload = schema.canonical(message, type_name)
    old = schema.decode(envelope, "Envelope")
    old["payload"] = list(new_payload)
    old["signature"] = list(key.sign(recipe.ENVELOPE_CONTEXT + struct.pack("<H", schema.enum("MessageKind")[kind])
                                     + new_payload).signature)
    return schema.canonical(old, "Envelope")


def wave_gap(schema, document, node, other, gap_us):
    """The shift of `node` that puts `other`'s first proof round `gap_us` before `node`'s last fill, on the wave
    clock (orderSentAfterWaveUs) the export's wave verdict states."""
    wave = None
    verdicts = {}
    for entry in document["entries"]:
        payload, _ = envelope_parts(schema, bytes.fromhex(entry["envelope"]))
        record = recipe.data(schema.decode(payload, "LedgerEntry")["record"])
        if entry["kind"] == "waveVerdict":
            wave = schema.decode(envelope_parts(schema, record)[0], "WaveVerdict")
        elif entry["kind"] == "verdict":
            v = schema.decode(envelope_parts(schema, record)[0], "Verdict")
            verdicts[v["nodeName"]] = v
    origin = dict(zip(wave["nodeNames"], (int(x) for x in wave["orderSentAfterWaveUs"])))
    n, o = verdicts[node], verdicts[other]
    filled = max([int(n.get("fillMicros", "0"))] + [int(d.get("filledAfterUs", "0")) for d in n.get("devices", [])])
    proof = max(int(r.get("labelsChecked", 0)) for r in o["rounds"])  # proof rounds carry the most labels
    first_proof = next(int(r.get("sentAfterOrderUs", "0")) for r in o["rounds"] if int(r.get("labelsChecked", 0)) == proof)
    return (origin[other] + first_proof) - (origin[node] + filled) + gap_us


def ledger_records(schema, document):
    """{entry index: (kind, record bytes)}."""
    records = {}
    for i, entry in enumerate(document["entries"]):
        payload, _ = envelope_parts(schema, bytes.fromhex(entry["envelope"]))
        records[i] = (entry["kind"], recipe.data(schema.decode(payload, "LedgerEntry")["record"]))
    return records


def replace_verdict(schema, document, records, v, new_record, challenger, node_key, edit_wave=None):
    """Entry v's verdict replaced by `new_record` (signed by the challenger): the session's node-signed transcript
    re-signed (by node_key) naming the new verdict digest, the receipt's verdictDigest and embedded transcript, any
    wave verdict's digest of it (and `edit_wave(wave)`), the chain and the export's summaries rebuilt."""
    old_payload = envelope_parts(schema, records[v][1])[0]
    new_payload = envelope_parts(schema, new_record)[0]
    old_digest, new_digest = recipe.blake2b256(old_payload), recipe.blake2b256(new_payload)
    new_records = {v: new_record}
    session = document["entries"][v].get("session_id")
    old_transcript = new_transcript = None
    for i, (kind, record) in records.items():
        if kind == "transcript" and document["entries"][i].get("session_id") == session:
            new_records[i], _ = resign(schema, record, old_digest, new_digest, node_key, "transcriptDigest")
            old_transcript, new_transcript = envelope_parts(schema, record), envelope_parts(schema, new_records[i])
    for i, (kind, record) in records.items():
        if kind == "receipt" and document["entries"][i].get("session_id") == session:
            # Its verdict digest, and the transcript it embeds (payload and node signature) as re-signed.
            new_records[i], _ = resign(schema, record, old_digest, new_digest, challenger, "receipt")
            if old_transcript is not None:
                new_records[i], _ = resign(schema, new_records[i], old_transcript[1], new_transcript[1], challenger,
                                           "receipt")
        elif kind == "waveVerdict":
            wave = schema.decode(envelope_parts(schema, record)[0], "WaveVerdict")
            wave["verdictDigests"] = [list(new_digest) if bytes(d) == old_digest else d
                                      for d in wave["verdictDigests"]]
            if edit_wave is not None:
                edit_wave(wave)
            new_records[i] = sign_message(schema, wave, "WaveVerdict", challenger, "waveVerdict", record)
    rewrite_records(schema, document, new_records, challenger)

    def replace(value):  # the export's summaries that name the verdict's digest
        if isinstance(value, dict):
            return {k: replace(x) for k, x in value.items()}
        if isinstance(value, list):
            return [replace(x) for x in value]
        return new_digest.hex() if value == old_digest.hex() else value
    for entry in document["entries"]:
        entry["summary"] = replace(entry["summary"])


def wave_shift(schema, document, challenger, node_key, node, delta_us, clock="wave-clock"):
    """Moves member `node`'s timeline by `delta_us`: a forger holding the challenger's and the node's keys."""
    records = ledger_records(schema, document)
    verdicts = [i for i, (kind, record) in records.items() if kind == "verdict" and
                schema.decode(envelope_parts(schema, record)[0], "Verdict")["nodeName"] == node]
    assert len(verdicts) == 1, f"one verdict of {node} expected"
    v = verdicts[0]
    old_payload = envelope_parts(schema, records[v][1])[0]
    sent = int(schema.decode(old_payload, "Verdict")["orderSentAtUnixUs"])
    old_field, new_field = struct.pack("<q", sent), struct.pack("<q", sent + delta_us)
    assert old_payload.count(old_field) == 1, "orderSentAtUnixUs must occur once"
    new_record, _ = resign(schema, records[v][1], old_field, new_field, challenger, "verdict")

    def edit_wave(wave):
        offsets = [int(x) for x in wave.get("orderSentAfterWaveUs", [])]
        if offsets:  # the member's order moved on the wave clock too, from the wave's (new) first order
            offsets = [x + delta_us if n == node else x for x, n in zip(offsets, wave["nodeNames"])]
            wave["orderSentAfterWaveUs"] = [str(x - min(offsets)) for x in offsets]
        if clock == "wall-clock":
            wave.pop("orderSentAfterWaveUs", None)
    replace_verdict(schema, document, records, v, new_record, challenger, node_key, edit_wave)


def verdict_set(schema, document, challenger, node_key, fields):
    """The first verdict with `fields` set (null: removed), re-signed by the challenger, with the transcript that
    names it re-signed by the node: a forger holding both keys."""
    records = ledger_records(schema, document)
    v = next(i for i, (kind, _) in records.items() if kind == "verdict")
    verdict = schema.decode(envelope_parts(schema, records[v][1])[0], "Verdict")
    set_fields(verdict, fields)
    new_record = sign_message(schema, verdict, "Verdict", challenger, "verdict", records[v][1])
    replace_verdict(schema, document, records, v, new_record, challenger, node_key)
    summary = document["entries"][v]["summary"]  # what the export's summary repeats of the verdict
    for field, name in (("pass", "pass"), ("boundStated", "bound_stated"), ("statement", "statement")):
        if field in fields and name in summary:
            summary[name] = verdict.get(field, False if field != "statement" else "")


def entry_records(schema, document):
    """[(kind, session id hex, record bytes)] of every entry, in ledger order."""
    out = []
    for entry in document["entries"]:
        payload, _ = envelope_parts(schema, bytes.fromhex(entry["envelope"]))
        out.append((entry["kind"], entry.get("session_id"), recipe.data(schema.decode(payload, "LedgerEntry")["record"])))
    return out


def assignments(args):
    """{field: JSON value} of FIELD=JSON arguments."""
    return {a.partition("=")[0]: json.loads(a.partition("=")[2]) for a in args}


def set_fields(message, fields):
    """Sets each field (null: removed); a dotted path names a nested one, a number in it a list element
    ("devices.0.capacityBytes", "assumptions.2.held")."""
    for field, value in fields.items():
        *path, last = field.split(".")
        target = message
        for step in path:
            target = target[int(step)] if step.isdigit() else target.setdefault(step, {})
        if last.isdigit():
            target[int(last)] = value
        elif value is None:
            target.pop(last, None)
        else:
            target[last] = value


def order_set(schema, document, challenger, fields):
    """The first order with `fields` set and re-signed by the challenger (delegation="self": a delegation to the
    challenger's own key, signed by it, allowing every profile)."""
    records = ledger_records(schema, document)
    o = next(i for i, (kind, _) in records.items() if kind == "order")
    order = schema.decode(envelope_parts(schema, records[o][1])[0], "WipeOrder")
    for field, value in fields.items():
        if field == "delegation" and value == "self":
            public = bytes(challenger.verify_key)
            delegation = {"challengerPublicKey": list(public), "notBeforeUnixUs": "0",
                          "notAfterUnixUs": "9223372036854775807", "name": "made up", "allowUnsignedProfiles": True}
            payload = schema.canonical(delegation, "Delegation")
            number = schema.enum("MessageKind")["delegation"]
            envelope = {"kind": "delegation", "payload": list(payload), "signerKeyId": list(recipe.key_id(public)),
                        "signature": list(challenger.sign(recipe.ENVELOPE_CONTEXT + struct.pack("<H", number)
                                                          + payload).signature)}
            order["delegation"] = list(schema.canonical(envelope, "Envelope"))
        elif field.startswith("profile."):
            order.setdefault("profile", {})[field[len("profile."):]] = value
        else:
            set_fields(order, {field: value})
    new_record = sign_message(schema, order, "WipeOrder", challenger, "wipeOrder", records[o][1])
    rewrite_records(schema, document, {o: new_record}, challenger)
    summary = document["entries"][o]["summary"]  # what the export's summary repeats of the order
    for field, name in (("roundDeadlineUs", "round_deadline_us"), ("chunkLabels", "chunk_labels")):
        if field in fields and name in summary:
            summary[name] = int(fields[field])


def wave_set(schema, document, challenger, fields):
    """The last wave verdict with `fields` set, re-signed."""
    records = entry_records(schema, document)
    at = max(i for i, (kind, _, _) in enumerate(records) if kind == "waveVerdict")
    wave = schema.decode(envelope_parts(schema, records[at][2])[0], "WaveVerdict")
    set_fields(wave, fields)
    new = sign_message(schema, wave, "WaveVerdict", challenger, "waveVerdict", records[at][2])
    rewrite_records(schema, document, {at: new}, challenger)
    summary = document["entries"][at]["summary"]  # what the export's summary repeats of the wave verdict
    if "statement" in fields and "statement" in summary:
        summary["statement"] = wave.get("statement", "")


def wave_first_member(schema, document, challenger, fields=None):
    """The last wave verdict re-signed listing its first member alone (a wave of one, whose member still says
    wave-complete held), with `fields` set as wave-set does."""
    records = entry_records(schema, document)
    at = max(i for i, (kind, _, _) in enumerate(records) if kind == "waveVerdict")
    wave = schema.decode(envelope_parts(schema, records[at][2])[0], "WaveVerdict")
    for field in ("sessionIds", "nodeNames", "verdictDigests", "orderSentAfterWaveUs"):
        if field in wave:
            wave[field] = wave[field][:1]
    set_fields(wave, fields or {})
    new = sign_message(schema, wave, "WaveVerdict", challenger, "waveVerdict", records[at][2])
    rewrite_records(schema, document, {at: new}, challenger)
    summary = document["entries"][at]["summary"]  # what the export's summary repeats of the wave verdict
    if "members" in summary:
        summary["members"] = 1
    for field, name in (("pass", "pass"), ("complete", "complete"), ("boundStated", "bound_stated"),
                        ("statement", "statement")):
        if field in (fields or {}) and name in summary:
            summary[name] = wave.get(field, "" if field == "statement" else False)


def wave_mix(schema, document, challenger, node, other):
    """The last wave verdict re-signed to name `node`'s session of the first wave verdict and `other`'s of the
    last (runs seconds apart), with orderSentAfterWaveUs placing both members' proof rounds after both fills."""
    records = entry_records(schema, document)
    waves = [schema.decode(envelope_parts(schema, r)[0], "WaveVerdict") for k, _, r in records if k == "waveVerdict"]
    assert len(waves) >= 2, "two wave verdicts expected"

    def member(wave, name):
        sid = bytes(wave["sessionIds"][wave["nodeNames"].index(name)]).hex()
        payload = envelope_parts(schema, [r for k, s, r in records if k == "verdict" and s == sid][-1])[0]
        return sid, payload, schema.decode(payload, "Verdict")
    chosen = [member(waves[0], node), member(waves[-1], other)]
    fills, proofs = [], []
    for _, _, v in chosen:
        fills.append(max([int(v.get("fillMicros", "0"))] + [int(d.get("filledAfterUs", "0")) for d in v["devices"]]))
        q = max(int(r.get("labelsChecked", 0)) for r in v["rounds"])  # proof rounds carry the most labels
        proofs.append(next(int(r["sentAfterOrderUs"]) for r in v["rounds"] if int(r.get("labelsChecked", 0)) == q))
    x = ((fills[0] - proofs[1]) + (proofs[0] - fills[1])) // 2  # `other`'s order x after `node`'s: both fit
    wave = waves[-1]
    wave["sessionIds"] = [list(bytes.fromhex(sid)) for sid, _, _ in chosen]
    wave["nodeNames"] = [node, other]
    wave["verdictDigests"] = [list(recipe.blake2b256(payload)) for _, payload, _ in chosen]
    wave["orderSentAfterWaveUs"] = [str(max(0, -x)), str(max(0, x))]
    at = max(i for i, (kind, _, _) in enumerate(records) if kind == "waveVerdict")
    new = sign_message(schema, wave, "WaveVerdict", challenger, "waveVerdict", records[at][2])
    rewrite_records(schema, document, {at: new}, challenger)


def wave_replay(schema, document, challenger):
    """The last wave verdict's record replaced by the first's: each verifies, the members are listed twice."""
    records = entry_records(schema, document)
    at = [i for i, (kind, _, _) in enumerate(records) if kind == "waveVerdict"]
    assert len(at) >= 2, "two wave verdicts expected"
    rewrite_records(schema, document, {at[-1]: records[at[0]][2]}, challenger)


def receipt_set(schema, document, challenger, fields=None, bad_utf8=False):
    """The first receipt with `fields` set, or its nodeName's last byte made invalid UTF-8; re-signed."""
    records = entry_records(schema, document)
    at = next(i for i, (kind, _, _) in enumerate(records) if kind == "receipt")
    receipt = schema.decode(envelope_parts(schema, records[at][2])[0], "Receipt")
    set_fields(receipt, fields or {})
    payload = schema.canonical(receipt, "Receipt")
    if bad_utf8:
        name = receipt["nodeName"].encode() + b"\0"
        assert payload.count(name) == 1, "the node name must occur once"
        payload = payload.replace(name, name[:-2] + b"\xff\0")
    envelope = schema.decode(records[at][2], "Envelope")
    envelope["payload"] = list(payload)
    number = schema.enum("MessageKind")["receipt"]
    envelope["signature"] = list(challenger.sign(recipe.ENVELOPE_CONTEXT + struct.pack("<H", number) + payload).signature)
    rewrite_records(schema, document, {at: schema.canonical(envelope, "Envelope")}, challenger)


def second_pass(schema, document, challenger):
    """A second pass verdict for the first session (its verdict with orderSentAtUnixUs 1 us later: no node
    signed it), entered just before the session's receipt, which is re-pointed at it; every entry from there
    re-numbered and re-signed (the chain), as a challenger-key holder would move a session on the wall clock."""
    entries = document["entries"]

    def ledger_entry(n):
        return schema.decode(envelope_parts(schema, bytes.fromhex(entries[n]["envelope"]))[0], "LedgerEntry")

    verdict_at = next(n for n, e in enumerate(entries) if e["kind"] == "verdict")
    session = entries[verdict_at].get("session_id")
    receipt_at = next(n for n, e in enumerate(entries) if e["kind"] == "receipt" and e.get("session_id") == session)
    verdict_entry = ledger_entry(verdict_at)
    verdict_record = recipe.data(verdict_entry["record"])
    verdict = schema.decode(envelope_parts(schema, verdict_record)[0], "Verdict")
    assert verdict.get("pass"), "the first session must pass"
    verdict["orderSentAtUnixUs"] = str(int(verdict["orderSentAtUnixUs"]) + 1)
    second = sign_message(schema, verdict, "Verdict", challenger, "verdict", verdict_record)
    decoded = [ledger_entry(n) for n in range(len(entries))]
    new_json = [dict(e) for e in entries[:receipt_at]] + [dict(entries[verdict_at])] + \
        [dict(e) for e in entries[receipt_at:]]
    new_entries = decoded[:receipt_at] + [dict(verdict_entry, record=list(second))] + decoded[receipt_at:]
    receipt_entry = new_entries[receipt_at + 1]
    receipt_record = recipe.data(receipt_entry["record"])
    receipt = schema.decode(envelope_parts(schema, receipt_record)[0], "Receipt")
    receipt["verdictDigest"] = list(recipe.blake2b256(envelope_parts(schema, second)[0]))
    receipt["ledgerSequence"] = str(receipt_at)
    receipt_entry["record"] = list(sign_message(schema, receipt, "Receipt", challenger, "receipt", receipt_record))
    template = bytes.fromhex(entries[0]["envelope"])
    previous = bytes.fromhex(new_json[receipt_at - 1]["entry_digest"])
    for n in range(receipt_at, len(new_entries)):
        entry, out = new_entries[n], new_json[n]
        entry["sequence"] = str(n)
        entry["prevEntryDigest"] = list(previous)
        envelope = sign_message(schema, entry, "LedgerEntry", challenger, "ledgerEntry", template)
        record = bytes(recipe.data(entry["record"]))
        out.update(sequence=n, envelope=envelope.hex(), prev_entry_digest=previous.hex(),
                   record_digest=recipe.blake2b256(record).hex())
        previous = recipe.blake2b256(envelope)
        out["entry_digest"] = previous.hex()
        if "record_bytes" in out:
            out["record_bytes"] = len(record)
        summary = out["summary"] = dict(out.get("summary", {}))
        if "payload_digest" in summary:
            summary["payload_digest"] = recipe.blake2b256(envelope_parts(schema, record)[0]).hex()
        if out["kind"] == "receipt" and out.get("session_id") == session:
            summary["ledger_sequence"] = receipt_at
            summary["verdict_digest"] = bytes(receipt["verdictDigest"]).hex()
        if out["kind"] == "receipt" and out.get("session_id") != session and "ledger_sequence" in summary:
            summary["ledger_sequence"] = int(schema.decode(envelope_parts(schema, record)[0], "Receipt")
                                             ["ledgerSequence"])
    document["entries"] = new_json
    document["head"]["envelope"] = new_json[-1]["envelope"]
    document["head"]["entry_digest"] = new_json[-1]["entry_digest"]
    document["head"]["entry_count"] = len(new_json)
    document["head"]["sequence"] = len(new_json) - 1


def main():
    mode, export_path, schema_path = sys.argv[1:4]
    schema = recipe.Schema(schema_path)
    with open(export_path, encoding="utf-8") as f:
        document = json.load(f)
    entries = document["entries"]
    if mode == "signature-byte":
        envelope = bytes.fromhex(entries[0]["envelope"])
        _, signature = envelope_parts(schema, envelope)
        entries[0]["envelope"] = flip_once(envelope, signature).hex()
    elif mode == "answer-byte":
        i, label, _ = first_answer_label(schema, document)
        entries[i]["envelope"] = flip_once(bytes.fromhex(entries[i]["envelope"]), label).hex()
    elif mode == "resigned-answer":
        i, label, record = first_answer_label(schema, document)
        rewrite_records(schema, document, {i: flip_once(record, label)}, SigningKey(read_seed(sys.argv[4])))
    elif mode == "colluding-answer":
        colluding_answer(schema, document, SigningKey(read_seed(sys.argv[4])), SigningKey(read_seed(sys.argv[5])),
                         int(sys.argv[6]), int(sys.argv[7]))
    elif mode == "receipt-transcript":
        receipt_transcript(schema, document, SigningKey(read_seed(sys.argv[4])))
    elif mode == "wave-shift":
        wave_shift(schema, document, SigningKey(read_seed(sys.argv[4])), SigningKey(read_seed(sys.argv[5])),
                   sys.argv[6], int(sys.argv[7]), *sys.argv[8:9])
    elif mode == "wave-gap":
        delta = wave_gap(schema, document, sys.argv[6], sys.argv[7], int(sys.argv[8]))
        wave_shift(schema, document, SigningKey(read_seed(sys.argv[4])), SigningKey(read_seed(sys.argv[5])),
                   sys.argv[6], delta, *sys.argv[9:10])
    elif mode == "wave-set":
        wave_set(schema, document, SigningKey(read_seed(sys.argv[4])), assignments(sys.argv[5:]))
    elif mode == "wave-first-member":
        wave_first_member(schema, document, SigningKey(read_seed(sys.argv[4])), assignments(sys.argv[5:]))
    elif mode == "wave-mix":
        wave_mix(schema, document, SigningKey(read_seed(sys.argv[4])), sys.argv[5], sys.argv[6])
    elif mode == "wave-replay":
        wave_replay(schema, document, SigningKey(read_seed(sys.argv[4])))
    elif mode == "receipt-set":
        receipt_set(schema, document, SigningKey(read_seed(sys.argv[4])), assignments(sys.argv[5:]))
    elif mode == "verdict-set":
        verdict_set(schema, document, SigningKey(read_seed(sys.argv[4])), SigningKey(read_seed(sys.argv[5])),
                    assignments(sys.argv[6:]))
    elif mode == "order-set":
        order_set(schema, document, SigningKey(read_seed(sys.argv[4])), assignments(sys.argv[5:]))
    elif mode == "inventory-edit":
        # The challenger host's own inventory in the export, under a digest of its own: every byte FROM becomes TO.
        for listed in document.get("documents", []):
            listed["text"] = listed["text"].replace(sys.argv[4], sys.argv[5])
            listed["digest"] = recipe.blake2b256(listed["text"].encode()).hex()
    elif mode == "second-pass":
        second_pass(schema, document, SigningKey(read_seed(sys.argv[4])))
    elif mode == "receipt-bad-utf8":
        receipt_set(schema, document, SigningKey(read_seed(sys.argv[4])), bad_utf8=True)
    else:
        raise SystemExit(f"unknown mode {mode}")
    json.dump(document, sys.stdout, indent=2)


if __name__ == "__main__":
    main()
