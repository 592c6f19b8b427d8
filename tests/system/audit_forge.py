#!/usr/bin/env python3
"""Tampered copies of a ledger export for tests/system/audit_test.sh.

  audit_forge.py answer-byte EXPORT SCHEMA              one byte of the first logged answer changed
  audit_forge.py signature-byte EXPORT SCHEMA           one byte of entry 0's signature changed
  audit_forge.py resigned-answer EXPORT SCHEMA KEY      the answer byte changed by a forger holding
                                                        the challenger's secret key (KEY, a .key
                                                        file): the entry re-signed, the chain and
                                                        the export's fields rebuilt after it
Writes the tampered export to stdout. Uses docs/audit_recipe.py's capnp helpers.
"""
import json
import os
import struct
import sys

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
        seed = None
        with open(sys.argv[4], encoding="utf-8") as f:
            for line in f:
                name, _, value = line.partition(":")
                if name.strip() == "secret-seed":
                    seed = bytes.fromhex(value.strip())
        key = SigningKey(seed)
        i, label, record = first_answer_label(schema, document)
        new_record = flip_once(record, label)
        previous_old = previous_new = None
        for n in range(i, len(entries)):
            envelope = bytes.fromhex(entries[n]["envelope"])
            payload, signature = envelope_parts(schema, envelope)
            if n == i:
                new_payload = payload.replace(record, new_record)
                entries[n]["record_digest"] = recipe.blake2b256(new_record).hex()
            else:  # the entry after a changed one links to its new digest
                new_payload = payload.replace(previous_old, previous_new)
                entries[n]["prev_entry_digest"] = previous_new.hex()
            kind = schema.enum("MessageKind")["ledgerEntry"]
            new_signature = key.sign(recipe.ENVELOPE_CONTEXT + struct.pack("<H", kind) + new_payload).signature
            new_envelope = envelope.replace(payload, new_payload).replace(signature, new_signature)
            previous_old, previous_new = recipe.blake2b256(envelope), recipe.blake2b256(new_envelope)
            entries[n]["envelope"] = new_envelope.hex()
            entries[n]["entry_digest"] = previous_new.hex()
        document["head"]["envelope"] = entries[-1]["envelope"]
        document["head"]["entry_digest"] = entries[-1]["entry_digest"]
    else:
        raise SystemExit(f"unknown mode {mode}")
    json.dump(document, sys.stdout, indent=2)


if __name__ == "__main__":
    main()
