#!/usr/bin/env python3
"""Re-verify a wipeproof ledger export with no wipeproof code: the recipe of docs/audit.md.

It uses only what an auditor can get elsewhere:
  - the official Cap'n Proto tool (`capnp convert`) and proto/wipe.capnp, to decode the signed
    records and to re-encode logged rounds in canonical form;
  - PyNaCl (Debian: python3-nacl) for Ed25519, and hashlib for BLAKE2b-256 and SHA-256;
  - docs/label-spec.md, implemented below in pure Python (BLAKE3's compression function as the
    BLAKE3 specification gives it, the graph of label-spec.md section 3, the node hashes of sections
    4 and 5), to recompute a sample of the answered labels from the seed in the signed order;
  - the closed form of the bound (threat-model.md "The claim"), ported below, to recompute every
    stated bound from the order's plan and the chunks the logged rounds checked.

Orders are signed by the pinned challenger key under the authority's delegation each carries, which
must verify under the pinned authority key and list the order's profile (open_order): the class,
t_min and safety a bound rests on come from authority-signed text only.

What the label sample proves: k of a session's n answered labels drawn uniformly without replacement
miss every forged one of more than f*n with probability at most C(n-b, k) / C(n, k) <= (1 - f)^k
(b = the least count above f*n). By default k is the smallest sample that makes this at most
1 - power (f = 1%, power 0.99: at most ceil(ln 0.01 / ln 0.99) = 459 labels per session); the recipe
prints the figure for every session and the time the recomputation will take.

Usage:
  audit_recipe.py EXPORT.json --schema=proto/wipe.capnp --authority-pub=A.pub --challenger-pub=C.pub
                  [--labels=auto|N|all] [--forged-fraction=0.01] [--power=0.99] [--sample-seed=S]
                  [--jobs=N] [--capnp=capnp] [--self-test=labels-public.json]
  audit_recipe.py --certificate=CERTIFICATE.json --schema=... --authority-pub=... --challenger-pub=... [options above]

Exit status: 0 every check held; 1 a check failed (the first one is named); 2 bad usage or input.
"""

import argparse
import fractions
import hashlib
import json
import math
import multiprocessing
import os
import random
import re
import struct
import subprocess
import sys
import time

from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey


class AuditFailure(Exception):
    """A check that did not hold: the message names the entry, session and field."""


def terminal_safe(text):
    """`text` as it may reach a terminal: names and statements come from the export, so control characters
    (C0, DEL, C1), bidi controls, line/paragraph separators and the backslash are escaped (\\u00XX, \\\\), as the
    binaries print them."""
    out = []
    for ch in str(text):
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif code < 0x20 or 0x7f <= code <= 0x9f or code in (0x61c, 0x200e, 0x200f, 0x2028, 0x2029) or \
                0x202a <= code <= 0x202e or 0x2066 <= code <= 0x2069 or 0xd800 <= code <= 0xdfff:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def fail(message):
    raise AuditFailure(message)


def blake2b256(data):
    return hashlib.blake2b(data, digest_size=32).digest()


def key_id(public_key):
    """A key id: the first 8 bytes of BLAKE2b-256 of the 32-byte Ed25519 public key."""
    return blake2b256(public_key)[:8]


def read_public_key_file(path):
    """A wipeproof .pub file: 'format: wipeproof-ed25519-public-v1', 'key-id: ...', 'public-key: <64 hex>'."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name.strip() == "public-key":
                key = bytes.fromhex(value.strip())
                if len(key) == 32:
                    return key
    raise ValueError(f"{path}: no 'public-key: <64 hex digits>' line")


# ------------------------------------------------------------------------------------------------
# Cap'n Proto: the official tool decodes and re-encodes; this program parses no capnp bytes itself.

class Schema:
    def __init__(self, path, capnp="capnp"):
        self.path = path
        self.capnp = capnp
        with open(path, "rb") as f:
            self.text = f.read().decode("utf-8")
        self.sha256 = hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def decode(self, data, type_name):
        """Canonical (flat) bytes of a message of `type_name` as JSON (Data as byte lists, 64-bit ints as strings)."""
        run = subprocess.run([self.capnp, "convert", "flat:json", "--short", self.path, type_name],
                             input=data, capture_output=True, check=False)
        if run.returncode != 0:
            fail(f"capnp cannot decode a {type_name}: {run.stderr.decode(errors='replace').strip()}")
        try:
            return json.loads(run.stdout.decode("utf-8"))
        except UnicodeDecodeError as error:
            fail(f"a {type_name} holds text that is not valid UTF-8 ({error.reason} at byte {error.start} of its "
                 f"JSON form)")

    def canonical(self, obj, type_name):
        """The canonical bytes of a message given as capnp JSON (what the transcript hashes)."""
        run = subprocess.run([self.capnp, "convert", "json:canonical", self.path, type_name],
                             input=json.dumps(obj).encode(), capture_output=True, check=False)
        if run.returncode != 0:
            fail(f"capnp cannot encode a {type_name}: {run.stderr.decode(errors='replace').strip()}")
        return run.stdout

    def enum(self, name):
        """{enumerant: number} of enum `name`, read from the schema text."""
        block = re.search(r"enum\s+" + name + r"\s*\{(.*?)\n\}", self.text, re.S)
        if block is None:
            raise ValueError(f"{self.path}: no enum {name}")
        return {m.group(1): int(m.group(2)) for m in re.finditer(r"(\w+)\s*@(\d+)\s*;", block.group(1))}


def data(value):
    """A capnp JSON Data field (a list of byte values; absent means empty) as bytes."""
    return bytes(value or [])


# ------------------------------------------------------------------------------------------------
# Envelopes (wipe.capnp Envelope): Ed25519 over "wipeproof/v1/envelope" || kind (UInt16 LE) || payload.

ENVELOPE_CONTEXT = b"wipeproof/v1/envelope"


def open_envelope(schema, envelope_bytes, kind, public_key, what):
    """Checks the envelope's kind, signer key id and signature; returns its payload bytes."""
    envelope = schema.decode(envelope_bytes, "Envelope")
    if envelope.get("kind") != kind:
        fail(f"{what}: a {envelope.get('kind')} envelope, want {kind}")
    if data(envelope.get("signerKeyId")) != key_id(public_key):
        fail(f"{what}: signed by key {data(envelope.get('signerKeyId')).hex()}, want {key_id(public_key).hex()}")
    payload = data(envelope.get("payload"))
    number = schema.enum("MessageKind")[kind]
    try:
        VerifyKey(public_key).verify(ENVELOPE_CONTEXT + struct.pack("<H", number) + payload,
                                     data(envelope.get("signature")))
    except BadSignatureError:
        fail(f"{what}: the Ed25519 signature does not verify under key {key_id(public_key).hex()}")
    return payload


def open_order(schema, envelope_bytes, authority, challenger, what):
    """A wipe order (wipe.capnp WipeOrder; proto/delegation.h): signed by the pinned challenger key, carrying the
    authority's delegation, which must verify under the pinned authority key, name that challenger key, be in force
    when the order was issued, and list the order's profile field for field (or allow an unsigned one). The class,
    t_min and safety a bound rests on are thus the authority's signed word. Returns the decoded order."""
    order = schema.decode(open_envelope(schema, envelope_bytes, "wipeOrder", challenger, what), "WipeOrder")
    if not order.get("delegation"):
        fail(f"{what}: the order carries no delegation from the authority")
    delegation = schema.decode(open_envelope(schema, data(order["delegation"]), "delegation", authority,
                                             f"{what}: its delegation"), "Delegation")
    if data(delegation.get("challengerPublicKey")) != challenger:
        fail(f"{what}: its delegation is for challenger key {key_id(data(delegation.get('challengerPublicKey'))).hex()}"
             f", not the pinned {key_id(challenger).hex()}")
    issued = int(order.get("issuedAtUnixUs", "0"))
    if not int(delegation.get("notBeforeUnixUs", "0")) <= issued < int(delegation.get("notAfterUnixUs", "0")):
        fail(f"{what}: issued at {issued} us, outside its delegation's period [{delegation.get('notBeforeUnixUs', '0')}"
             f", {delegation.get('notAfterUnixUs', '0')})")
    profile = order.get("profile", {})
    if profile in delegation.get("profiles", []):
        # A listed profile binds the deadline rule's inputs too: the order's m, format and round deadline.
        for field, default in (("chunkLabels", 0), ("format", "posedbBlake3C1"), ("roundDeadlineUs", "0")):
            if str(order.get(field, default)) != str(profile.get(field, default)):
                fail(f"{what}: its {field} {order.get(field, default)} is not its delegated profile's "
                     f"{profile.get(field, default)}")
    else:
        if data(profile.get("authorityKeyId")) or data(profile.get("documentDigest")):
            fail(f"{what}: its profile '{profile.get('name', '')}' names a signature but is not one its delegation "
                 f"lists")
        if not delegation.get("allowUnsignedProfiles"):
            fail(f"{what}: its profile '{profile.get('name', '')}' is unsigned and its delegation allows none")
    return order


def named_inventory(schema, order):
    """The inventory digest (bytes) the order's delegation names (Delegation.inventoryDigest), or None. open_order
    verified the delegation first."""
    envelope = schema.decode(data(order["delegation"]), "Envelope")
    digest = data(schema.decode(data(envelope.get("payload")), "Delegation").get("inventoryDigest"))
    return digest if len(digest) == 32 else None


ASSUMPTIONS = ("host-memory-in-plan", "wave-complete", "no-nvme-in-reach", "physical-binding",
               "device-capacity-as-declared", "no-egress-during-session", "no-uncovered-memory")


def within_reach(order, inventory):
    """Whether the order's round deadline is within the inventory's reach_round_deadline_us (True without one):
    only then do its reach declarations (no NVMe in reach, a wave complete) speak of the session, and only then
    may the order say waveComplete (session/session_plan.h RoundDeadlineWithinReach)."""
    reach = int(inventory.get("reach_round_deadline_us", 0))
    return reach == 0 or int(order.get("roundDeadlineUs", "0")) <= reach


def allowed_assumptions(order, node, inventory, report):
    """Per assumption (ASSUMPTIONS), whether the authority's signed declarations let it hold
    (challenger/session/assumptions.h): the verdict may say held only where this says True."""
    devices = order["devices"]
    chunk_bytes = 32 * int(order.get("chunkLabels", 0))
    host = [d for d in devices if d["selector"] == "host"]
    physical = int(node.get("host_physical_memory_bytes", 0))
    host_ok = bool(order.get("hostMemoryInPlan")) and bool(host) and physical > 0 and \
        physical - min(physical, 32 * int(host[0]["labelCount"]) + int(host[0].get("allowedReserveBytes", "0"))) \
        < max(1, chunk_bytes)
    reach_ok = within_reach(order, inventory)
    wave = next((w for w in inventory.get("waves", []) if node["name"] in w.get("nodes", [])), None)
    wave_ok = wave is not None and bool(wave.get("complete")) and bool(order.get("waveComplete")) and reach_ok
    slices = {}
    for d in node["devices"]:
        if d.get("partition_of"):
            slices.setdefault(d["partition_of"], [d.get("partitions", 0), 0])[1] += 1
    totals = [int(d.get("totalBytes", "0")) for d in (report or {}).get("devices", [])]
    capacity_ok = report is not None and all(listed >= partitions for partitions, listed in slices.values()) and \
        not any(d["selector"].startswith("MIG-") and not d.get("partition_of") for d in node["devices"]) and \
        len(totals) == len(devices) and \
        all(0 < t <= int(d.get("capacityBytes", "0")) for t, d in zip(totals, devices))
    return {"host-memory-in-plan": host_ok, "wave-complete": wave_ok,
            "no-nvme-in-reach": bool(node.get("no_nvme_in_reach")) and reach_ok, "physical-binding": False,
            "device-capacity-as-declared": capacity_ok,
            "no-egress-during-session": bool(node.get("network_isolated_during_wipe")),
            "no-uncovered-memory": False}


# ------------------------------------------------------------------------------------------------
# Labels (docs/label-spec.md), pure Python. BLAKE3 compression as in the BLAKE3 specification.

IV = (0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19)
MSG_PERMUTATION = (2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8)
CHUNK_START, CHUNK_END, ROOT, KEYED_HASH, DERIVE_KEY_CONTEXT, DERIVE_KEY_MATERIAL = 1, 2, 8, 16, 32, 64


def _make_compress():
    """BLAKE3's compress(cv, block words, counter, block_len, flags) -> 16 output words.

    The spec's 7 rounds of G (columns, then diagonals; the message words permuted between rounds)
    are written out once as straight-line Python and compiled: the same function, about twice as
    fast as the loop, which matters because a label takes up to 6.5 * m compressions."""
    lines = ["def compress(cv, m, counter, block_len, flags):",
             "    v0, v1, v2, v3, v4, v5, v6, v7 = cv",
             "    v8, v9, v10, v11 = IV[0], IV[1], IV[2], IV[3]",
             "    v12, v13, v14, v15 = counter & 0xFFFFFFFF, (counter >> 32) & 0xFFFFFFFF, block_len, flags",
             "    " + ", ".join(f"m{i}" for i in range(16)) + " = m"]
    schedule = list(range(16))
    quarters = ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
                (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14))
    for _ in range(7):
        for i, (a, b, c, d) in enumerate(quarters):  # G(a, b, c, d, m[2i], m[2i+1])
            a, b, c, d = f"v{a}", f"v{b}", f"v{c}", f"v{d}"
            x, y = f"m{schedule[2 * i]}", f"m{schedule[2 * i + 1]}"
            lines += [
                f"    {a} = ({a} + {b} + {x}) & 0xFFFFFFFF; {d} ^= {a}; {d} = ({d} >> 16) | (({d} << 16) & 0xFFFFFFFF)",
                f"    {c} = ({c} + {d}) & 0xFFFFFFFF; {b} ^= {c}; {b} = ({b} >> 12) | (({b} << 20) & 0xFFFFFFFF)",
                f"    {a} = ({a} + {b} + {y}) & 0xFFFFFFFF; {d} ^= {a}; {d} = ({d} >> 8) | (({d} << 24) & 0xFFFFFFFF)",
                f"    {c} = ({c} + {d}) & 0xFFFFFFFF; {b} ^= {c}; {b} = ({b} >> 7) | (({b} << 25) & 0xFFFFFFFF)"]
        schedule = [schedule[p] for p in MSG_PERMUTATION]
    lines.append("    return (v0 ^ v8, v1 ^ v9, v2 ^ v10, v3 ^ v11, v4 ^ v12, v5 ^ v13, v6 ^ v14, v7 ^ v15,"
                 " v8 ^ cv[0], v9 ^ cv[1], v10 ^ cv[2], v11 ^ cv[3], v12 ^ cv[4], v13 ^ cv[5], v14 ^ cv[6],"
                 " v15 ^ cv[7])")
    namespace = {"IV": IV}
    exec("\n".join(lines), namespace)  # pylint: disable=exec-used
    return namespace["compress"]


compress = _make_compress()


def words(b):
    return struct.unpack(f"<{len(b) // 4}I", b)


def word_bytes(w):
    return struct.pack(f"<{len(w)}I", *w)


def blake3_one_chunk(key_words, message, flags):
    """BLAKE3 (32-byte output) of a message of at most 1024 bytes (one chunk) under key words and mode flags."""
    assert len(message) <= 1024
    blocks = [message[i:i + 64] for i in range(0, len(message), 64)] or [b""]
    cv = tuple(key_words)
    for i, block in enumerate(blocks):
        block_flags = flags | (CHUNK_START if i == 0 else 0) | (CHUNK_END | ROOT if i == len(blocks) - 1 else 0)
        cv = compress(cv, words(block.ljust(64, b"\0")), 0, len(block), block_flags)[:8]
    return word_bytes(cv)


def context_key(context):
    return blake3_one_chunk(IV, context.encode(), DERIVE_KEY_CONTEXT)


def derive_key(context, material):
    return blake3_one_chunk(words(context_key(context)), material, DERIVE_KEY_MATERIAL)


def keyed_hash(key, message):
    return blake3_one_chunk(words(key), message, KEYED_HASH)


def be64(x):
    return struct.pack(">Q", x)


def graph(m):
    """label-spec.md section 3: (preds, outputs); preds[i] are node i's predecessors in emission order."""
    preds = []

    def node(*p):
        preds.append(tuple(sorted(p)))
        return len(preds) - 1

    def connector(dim, inputs):
        w = 1 << dim
        prev = [node(inputs[i]) for i in range(w)]
        for layer in range(dim):
            bit = 1 << (dim - 1 - layer)
            prev = [node(prev[i], prev[i ^ bit]) for i in range(w)]
        return prev

    def merged_center_ingress(dim, primary, ingress):
        if dim == 0:
            x = node(ingress[0])
            return [node(primary[0], x)]
        w = 1 << dim
        ing = [node(ingress[i]) for i in range(w)]
        for layer in range(1, dim + 1):
            bit = 1 << (dim - layer)
            ing = [node(ing[i], ing[i ^ bit]) for i in range(w)]
        ctr = [node(primary[i], ing[i]) for i in range(w)]
        for layer in range(1, dim + 1):
            bit = 1 << (dim - layer)
            ctr = [node(ctr[i], ctr[i ^ bit]) for i in range(w)]
        return ctr

    def standalone(level):
        if level == 0:
            return [node()]
        left = standalone(level - 1)
        center = connector(level - 1, left)
        return left + connected(level - 1, 1 << (level - 1), center)

    def connected(level, width, inputs):
        if level == 0:
            return [node(inputs[0])]
        h = width // 2
        left = connected(level - 1, h, inputs[:h])
        center = merged_center_ingress(level - 1, left, inputs[h:])
        return left + connected(level - 1, h, center)

    n = 0 if m <= 1 else (m - 1).bit_length() - 1
    half = 1 << n
    a = standalone(n + 1)
    b = standalone(n + 1)
    return preds, a[half:2 * half] + b[half:half + (m - half)]


_chain_prefixes = {}


def exclusive_chain_prefix(m):
    """kernels/exclusive_chains.h over a second transcription of label-spec.md section 3: each output's exclusive
    chain (a path ending at it that shares no node with another output's), by the same greedy: a node extends the
    open chain of a predecessor that is not an output (a one-input node its input; a butterfly node its own
    column's; a merge node the primary's when longer, else the ingress side's), else starts one. Returns the sums
    of the k shortest chain lengths, k = 0..m. m = 2^17 (36 M nodes) takes about a minute and a few hundred MB."""
    if m in _chain_prefixes:
        return _chain_prefixes[m]
    from array import array

    def run(outputs):
        length, is_open = array("I"), bytearray()

        def extendable(p):
            return is_open[p] and (outputs is None or not outputs[p])

        def new(l):
            length.append(l)
            is_open.append(1)
            return len(length) - 1

        def source():
            return new(1)

        def single(p):
            if extendable(p):
                is_open[p] = 0
                return new(length[p] + 1)
            return new(1)

        def merge(primary, ingress):
            a, b = extendable(primary), extendable(ingress)
            if a and (not b or length[primary] > length[ingress]):
                is_open[primary] = 0
                return new(length[primary] + 1)
            if b:
                is_open[ingress] = 0
                return new(length[ingress] + 1)
            return new(1)

        def butterfly_layer(v, bit):
            # node(v[i], v[i ^ bit]) for every i: each extends its own column's chain, as the in-place schedule does
            return [single(v[i]) for i in range(len(v))]

        def connector(dim, inputs):
            w = 1 << dim
            prev = [single(inputs[i]) for i in range(w)]
            for layer in range(dim):
                prev = butterfly_layer(prev, 1 << (dim - 1 - layer))
            return prev

        def merged_center_ingress(dim, primary, ingress):
            if dim == 0:
                x = single(ingress[0])
                return [merge(primary[0], x)]
            w = 1 << dim
            ing = [single(ingress[i]) for i in range(w)]
            for layer in range(1, dim + 1):
                ing = butterfly_layer(ing, 1 << (dim - layer))
            ctr = [merge(primary[i], ing[i]) for i in range(w)]
            for layer in range(1, dim + 1):
                ctr = butterfly_layer(ctr, 1 << (dim - layer))
            return ctr

        def standalone(level):
            if level == 0:
                return [source()]
            left = standalone(level - 1)
            center = connector(level - 1, left)
            return left + connected(level - 1, 1 << (level - 1), center)

        def connected(level, width, inputs):
            if level == 0:
                return [single(inputs[0])]
            h = width // 2
            left = connected(level - 1, h, inputs[:h])
            center = merged_center_ingress(level - 1, left, inputs[h:])
            return left + connected(level - 1, h, center)

        n = 0 if m <= 1 else (m - 1).bit_length() - 1
        half = 1 << n
        a = standalone(n + 1)
        b = standalone(n + 1)
        return length, a[half:2 * half] + b[half:half + (m - half)]

    first, output_nodes = run(None)
    outputs = bytearray(len(first))
    for v in output_nodes:
        outputs[v] = 1
    del first
    length, output_nodes = run(outputs)
    prefix = [0]
    for l in sorted(length[v] for v in output_nodes):
        prefix.append(prefix[-1] + l)
    _chain_prefixes[m] = prefix
    return prefix


def least_nodes_for_outputs(prefix, chunks, held):
    """LeastNodesForOutputs: the held shortest chains over `chunks` chunk graphs (each chunk's k shortest and r
    chunks' (k+1)-th for held = chunks*k + r), saturating at 2^64 - 1."""
    m = len(prefix) - 1
    if m == 0 or chunks == 0 or held == 0:
        return 0
    k = min(held // chunks, m)
    r = 0 if k == m else held - k * chunks
    total = chunks * prefix[k] + r * (prefix[k + (r > 0)] - prefix[k])
    return min(total, 2 ** 64 - 1)


def node_label_rate(node, inventory):
    """challenger/fleet/inventory.h NodeComputeRate: (the node's CPUs' rate plus each non-host device model's label
    rate, in the inventory's order; or 0 and why not)."""
    if not node.get("cpu_compressions_per_s"):
        return 0.0, f"the inventory declares no CPU label rate (cpu_compressions_per_s) for node {node['name']}"
    total = float(node["cpu_compressions_per_s"])
    rates = inventory.get("label_rates", {})
    for d in node["devices"]:
        if d["selector"] == "host":
            continue
        if d["model"] not in rates:
            return 0.0, f"the inventory's label_rates has no entry for model '{d['model']}' (device {d['selector']})"
        total += float(rates[d["model"]]["compressions_per_s"])
    return total, ""


def compute_statement(node_name, m, label_format, confidence, bound_total, devices, rate, rate_problem, isolated,
                      ingress_per_s, interval_us):
    """challenger/session/compute_statement.cc for a passing session with a stated bound `bound_total`: devices are
    (capacityBytes, labelCount). Returns (stated, heldLabels, ingressLabels, workCompressions, minComputeUs,
    statement)."""
    none = "no compute statement: "
    planned = sum(count for _, count in devices)
    reserves = sum(capacity - min(capacity, 32 * count) for capacity, count in devices)
    chunks = sum(-(-count // m) + 1 for _, count in devices)
    missing = bound_total - min(bound_total, reserves)
    held = planned - min(planned, -(-missing // 32))
    if held == 0:
        return False, held, 0, 0, 0, none + "the bound leaves no planned label held"
    if rate <= 0:
        return False, held, 0, 0, 0, none + (rate_problem or "the node's label rate is not declared")
    ingress = 0
    if isolated:
        words = "the node declared network-isolated"
    elif ingress_per_s:
        scaled = ingress_per_s * interval_us
        ingress = min(-(-(-(-scaled // 1000000)) // 32), 2 ** 64 - 1)
        words = f"less {ingress} labels its declared ingress of {ingress_per_s} bytes/s could have brought in"
    else:
        return False, held, 0, 0, 0, none + ("the inventory declares neither network isolation nor an ingress "
                                             f"bandwidth for node {node_name}: labels computed elsewhere could have "
                                             "come in")
    computed = held - min(held, ingress)
    if computed == 0:
        return False, held, ingress, 0, 0, none + "the declared ingress could have brought in every held label"
    nodes = least_nodes_for_outputs(exclusive_chain_prefix(m), chunks, computed)
    work = min(nodes * (1 if label_format == "posedbBlake3C1" else 2), 2 ** 64 - 1)
    seconds = float(work) / rate
    min_us = 2 ** 64 - 1 if seconds * 1e6 >= 1.8e19 else int(math.floor(seconds * 1e6))
    if interval_us == 0:
        return False, held, ingress, work, min_us, none + "no proof round was answered"
    share = float(min_us) / float(interval_us)
    statement = (f"at {'%.6g' % (confidence * 100.0)}% confidence node {node_name}'s fill required at least {work} "
                 f"BLAKE3 compressions ({computed} labels computed on the node: {held} of its {planned} planned labels "
                 f"held by the bound, {words}; each chunk's cheapest exclusive chains, m = {m}): at least "
                 f"{'%.6g s' % (min_us / 1e6)} of the whole node's compute at its fastest declared rate of "
                 f"{'%.6g' % rate} compressions/s, {'%.4g' % (share * 100.0)}% of the {'%.6g s' % (interval_us / 1e6)} "
                 f"from its order to its last proof round's answer")
    return True, held, ingress, work, min_us, statement


_graphs = {}
ZERO_LABEL = (0,) * 8


def chunk_labels(label_format, seed, m, chunk, ranks, graph_labels=None):
    """{rank: label} for output ranks `ranks` of chunk `chunk` (label-spec.md sections 4-6), computing
    the chunk's graph only up to the highest of them. graph_labels: m' of a 192 trailing partial chunk."""
    size = graph_labels or m
    if size not in _graphs:
        _graphs[size] = graph(size)
    preds, outputs = _graphs[size]
    last = max(outputs[r] for r in ranks)
    labels = []
    if label_format == "posedbBlake3C1":
        key = words(derive_key("wipeproof/posedb-blake3-c1/chunk-key", seed + be64(chunk) + be64(m)))
        flags = CHUNK_START | CHUNK_END | ROOT | KEYED_HASH
        for i in range(last + 1):
            p = preds[i]
            p0 = labels[p[0]] if len(p) > 0 else ZERO_LABEL
            p1 = labels[p[1]] if len(p) > 1 else ZERO_LABEL
            labels.append(compress(key, p0 + p1, i, 64, flags)[:8])
    elif label_format == "posedbBlake3N192":
        n_prime = 0 if size <= 1 else (size - 1).bit_length() - 1
        block2 = (derive_key("pose-db/chunk-seed", seed + be64(chunk))
                  + derive_key("pose-db/descriptor", be64(size) + be64(n_prime) + be64(256)))
        src, internal = context_key("pose-db/label/src"), context_key("pose-db/label/int")
        for i in range(last + 1):
            p = preds[i]
            p0 = word_bytes(labels[p[0]]) if len(p) > 0 else bytes(32)
            p1 = word_bytes(labels[p[1]]) if len(p) > 1 else bytes(32)
            message = be64(i) + bytes(56) + p0 + p1 + block2
            labels.append(words(keyed_hash(src if not p else internal, message)))
    else:
        raise ValueError(f"unknown label format {label_format}")
    return {r: word_bytes(labels[outputs[r]]) for r in ranks}


def graph_size(label_format, m, chunk, region_end):
    """The graph a chunk's labels come from: m, or for a 192 trailing partial chunk its own m' (section 2)."""
    if label_format == "posedbBlake3N192" and (chunk + 1) * m > region_end:
        return region_end - chunk * m
    return m


# ------------------------------------------------------------------------------------------------
# Many chunks side by side. chunk_labels above is the specification, one chunk at a time: CPython runs
# about 27,000 compressions a second, so one label of m = 4096 (up to 557,054 nodes) takes up to 20 s. The
# audit recomputes its sample with the same arithmetic on many chunks at once: each 32-bit word is one
# Python integer holding one lane per chunk, LANE_BITS bits apart, and one big-integer +, ^, & or shift
# works on every lane (some 30 times the per-chunk rate at a few hundred lanes). The lanes share one
# graph: copies A and B of section 3 are the same graph, B numbered on from S = len(A), so a label of
# B is computed on A's node numbers with S added to the node number (c1's counter, 192's be64(i)); a
# lane is a (chunk, copy). Only the requested outputs' ancestors are computed, and each label is kept
# until its last successor among them is. Chunks are shared out among --jobs processes.

LANE_BITS = 34  # a 32-bit word and 2 spare bits per lane: room for the carries of a + b + m
LANE_MEMORY_BYTES = 1 << 30  # per process: the lane count is capped so that the live labels fit
LANE_BATCH = 64  # lanes: wider batches gain little per lane, narrower ones share fewer ancestors
_lane_compressors = {}


def lane_compress(lanes):
    """(compress, ones): compress(cv, m, counter_lo, block_len, flags) on `lanes` lanes, every argument a
    word per lane packed as above (counter_hi is 0: node numbers stay below 2^32), returning the 8 words
    of the output chaining value; ones has 1 in every lane. Sums are masked back to 32 bits per lane
    (the carries land in the spare bits) and rotations mask before they shift, so no lane spills into
    its neighbour."""
    if lanes not in _lane_compressors:
        ones = sum(1 << (LANE_BITS * j) for j in range(lanes))
        lines = ["def compress(cv, m, counter_lo, block_len, flags):",
                 "    v0, v1, v2, v3, v4, v5, v6, v7 = cv",
                 "    v8, v9, v10, v11, v12, v13, v14, v15 = IV0, IV1, IV2, IV3, counter_lo, 0, block_len, flags",
                 "    " + ", ".join(f"m{i}" for i in range(16)) + " = m"]

        def rotr(v, n):  # rotate right by n within each lane
            return f"(({v} & H{n}) >> {n}) | (({v} & L{n}) << {32 - n})"
        schedule = list(range(16))
        quarters = ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
                    (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14))
        for _ in range(7):
            for i, (a, b, c, d) in enumerate(quarters):  # G(a, b, c, d, m[2i], m[2i+1]), as in _make_compress
                a, b, c, d = f"v{a}", f"v{b}", f"v{c}", f"v{d}"
                x, y = f"m{schedule[2 * i]}", f"m{schedule[2 * i + 1]}"
                lines += [f"    {a} = ({a} + {b} + {x}) & M; {d} ^= {a}; {d} = {rotr(d, 16)}",
                          f"    {c} = ({c} + {d}) & M; {b} ^= {c}; {b} = {rotr(b, 12)}",
                          f"    {a} = ({a} + {b} + {y}) & M; {d} ^= {a}; {d} = {rotr(d, 8)}",
                          f"    {c} = ({c} + {d}) & M; {b} ^= {c}; {b} = {rotr(b, 7)}"]
            schedule = [schedule[p] for p in MSG_PERMUTATION]
        lines.append("    return (v0 ^ v8, v1 ^ v9, v2 ^ v10, v3 ^ v11, v4 ^ v12, v5 ^ v13, v6 ^ v14, v7 ^ v15)")
        namespace = {"M": ones * 0xFFFFFFFF}
        namespace.update({f"IV{i}": ones * IV[i] for i in range(4)})
        for n in (16, 12, 8, 7):
            namespace[f"L{n}"] = ones * ((1 << n) - 1)
            namespace[f"H{n}"] = ones * (0xFFFFFFFF ^ ((1 << n) - 1))
        exec("\n".join(lines), namespace)  # pylint: disable=exec-used
        _lane_compressors[lanes] = (namespace["compress"], ones)
    return _lane_compressors[lanes]


def pack_lanes(values):
    """One packed word from a value per lane."""
    out = 0
    for j, value in enumerate(values):
        out |= value << (LANE_BITS * j)
    return out


def bswap32(x):
    return int.from_bytes(x.to_bytes(4, "little"), "big")


def chunk_graph(size):
    if size not in _graphs:
        _graphs[size] = graph(size)
    return _graphs[size]


class LaneBatch:
    """Chunks of one graph size computed side by side: `lanes` [(chunk, copy offset)], `wanted` {node of copy A:
    [(lane, (chunk, rank))]}, `order` the requested nodes' ancestors (themselves included), ascending."""

    def __init__(self, label_format, seed, m, size, lanes, wanted):
        self.label_format, self.seed, self.m, self.size = label_format, seed, m, size
        self.lanes, self.wanted = lanes, wanted
        preds = chunk_graph(size)[0]
        seen, stack = set(wanted), list(wanted)
        while stack:
            for q in preds[stack.pop()]:
                if q not in seen:
                    seen.add(q)
                    stack.append(q)
        self.order = sorted(seen)

    def compressions(self):
        return len(self.order) * (1 if self.label_format == "posedbBlake3C1" else 3)

    def run(self):
        """{(chunk, rank): label bytes} of every requested output."""
        preds, _ = chunk_graph(self.size)
        copy_size = len(preds) // 2
        last_use = {}
        for i in self.order:
            for q in preds[i]:
                last_use[q] = i
        lane_compress_fn, ones = lane_compress(len(self.lanes))
        offsets = pack_lanes(offset for _, offset in self.lanes)
        block_len = 64 * ones
        if self.label_format == "posedbBlake3C1":
            keys = [words(derive_key("wipeproof/posedb-blake3-c1/chunk-key", self.seed + be64(chunk) + be64(self.m)))
                    for chunk, _ in self.lanes]
            cv = tuple(pack_lanes(k[w] for k in keys) for w in range(8))
            flags = (CHUNK_START | CHUNK_END | ROOT | KEYED_HASH) * ones

            def label(i, p0, p1):
                return lane_compress_fn(cv, p0 + p1, ones * i + offsets, block_len, flags)
        elif self.label_format == "posedbBlake3N192":
            n_prime = 0 if self.size <= 1 else (self.size - 1).bit_length() - 1
            descriptor = derive_key("pose-db/descriptor", be64(self.size) + be64(n_prime) + be64(256))
            blocks = [words(derive_key("pose-db/chunk-seed", self.seed + be64(chunk)) + descriptor)
                      for chunk, _ in self.lanes]
            block2 = tuple(pack_lanes(b[w] for b in blocks) for w in range(16))
            src = tuple(w * ones for w in words(context_key("pose-db/label/src")))
            internal = tuple(w * ones for w in words(context_key("pose-db/label/int")))
            in_b = pack_lanes(1 if offset else 0 for _, offset in self.lanes)
            in_a = ones - in_b
            first = (KEYED_HASH | CHUNK_START) * ones
            middle = KEYED_HASH * ones
            last = (KEYED_HASH | CHUNK_END | ROOT) * ones
            zeros = (0,) * 14

            def label(i, p0, p1):
                # Block 0 is be64(node number) and 56 zero bytes: word 1 holds the low 32 bits, byte-swapped.
                number = in_a * bswap32(i) + in_b * bswap32(i + copy_size)
                h = lane_compress_fn(internal if preds[i] else src, (0, number) + zeros, 0, block_len, first)
                h = lane_compress_fn(h, p0 + p1, 0, block_len, middle)
                return lane_compress_fn(h, block2, 0, block_len, last)
        else:
            raise ValueError(f"unknown label format {self.label_format}")
        zero = (0,) * 8
        labels = {}
        out = {}
        for i in self.order:
            p = preds[i]
            value = label(i, labels[p[0]] if p else zero, labels[p[1]] if len(p) > 1 else zero)
            if i in last_use:
                labels[i] = value
            for q in p:
                if last_use[q] == i:
                    labels.pop(q, None)
            for lane, request in self.wanted.get(i, ()):
                shift = LANE_BITS * lane
                out[request] = word_bytes(tuple((w >> shift) & 0xFFFFFFFF for w in value))
        return out


def plan_lane_batches(label_format, seed, m, requests, jobs):
    """LaneBatches for `requests` {graph size: {(chunk, rank)}}. Per size the lanes are sorted by their highest
    requested node and cut into runs of about LANE_BATCH lanes or more (lanes of low nodes share a smaller set of
    ancestors: a quarter less work than one batch of all), at least one per process where there are lanes enough,
    and as many as LANE_MEMORY_BYTES requires."""
    batches = []
    for size, wanted in sorted(requests.items()):
        preds, outputs = chunk_graph(size)
        copy_size = len(preds) // 2
        by_lane = {}
        for chunk, rank in wanted:
            node = outputs[rank]
            offset = copy_size if node >= copy_size else 0
            by_lane.setdefault((chunk, offset), []).append((node - offset, (chunk, rank)))
        lanes = sorted(by_lane, key=lambda lane: max(node for node, _ in by_lane[lane]))
        half = 1 << (0 if size <= 1 else (size - 1).bit_length() - 1)
        # label-spec.md section 3: about 6.5 * half labels live at once, 8 words of LANE_BITS bits per lane each.
        cap = max(1, int(LANE_MEMORY_BYTES / (6.5 * half * 8) - 32) * 8 // LANE_BITS)
        count = max(-(-len(lanes) // cap), min(len(lanes), jobs), min(len(lanes) // LANE_BATCH, 8 * jobs))
        for b in range(count):
            mine = lanes[b * len(lanes) // count:(b + 1) * len(lanes) // count]
            wanted_nodes = {}
            for j, lane in enumerate(mine):
                for node, request in by_lane[lane]:
                    wanted_nodes.setdefault(node, []).append((j, request))
            batches.append(LaneBatch(label_format, seed, m, size, mine, wanted_nodes))
    return batches


_lane_plan = []  # the batches a forked worker runs, by index


def _run_lane_batch(index):
    return _lane_plan[index].run()


_compression_seconds = {}


def seconds_per_compression(lanes):
    """Measured (about 0.1 s): seconds of one lane_compress call on `lanes` lanes, with the loop around it (~15%)."""
    if lanes not in _compression_seconds:
        fn, ones = lane_compress(lanes)
        cv = tuple(ones * (0x01234567 + w) for w in range(8))
        m = tuple(ones * (0x89ABCDEF ^ w) for w in range(16))
        reps = max(5, min(1000, 40000 // lanes))
        start = time.perf_counter()
        for i in range(reps):
            cv = fn(cv, m, ones * i, 64 * ones, 27 * ones)
        _compression_seconds[lanes] = (time.perf_counter() - start) / reps * 1.15
    return _compression_seconds[lanes]


def estimate_seconds(batches, jobs):
    """About how long running `batches` on `jobs` processes takes."""
    costs = sorted((b.compressions() * seconds_per_compression(len(b.lanes)) for b in batches), reverse=True)
    loads = [0.0] * max(1, jobs)
    for cost in costs:  # longest first, each to the least loaded process: what Pool.imap_unordered does
        loads[loads.index(min(loads))] += cost
    return max(loads)


def run_lane_batches(batches, jobs):
    """{(chunk, rank): label} of every batch, on up to `jobs` processes (forked, so the graphs are shared)."""
    global _lane_plan  # pylint: disable=global-statement
    out = {}
    if jobs <= 1 or len(batches) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        for batch in batches:
            out.update(batch.run())
        return out
    _lane_plan = sorted(batches, key=lambda b: -b.compressions() * len(b.lanes))
    try:
        with multiprocessing.get_context("fork").Pool(min(jobs, len(batches))) as pool:
            for result in pool.imap_unordered(_run_lane_batch, range(len(_lane_plan))):
                out.update(result)
    finally:
        _lane_plan = []
    return out


def format_seconds(seconds):
    if seconds < 60:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60)} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"


def self_test(path, max_graph, jobs=1):
    """Checks the label code, one chunk at a time (chunk_labels) and side by side in lanes (LaneBatch, what the
    audit runs), against label-spec.md section 7's known answers whose chunk graph has at most `max_graph`
    outputs (pure Python takes seconds per thousand outputs)."""
    with open(path, encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    names = {"posedb-blake3-c1": "posedbBlake3C1", "posedb-blake3-192": "posedbBlake3N192"}
    checked = 0
    for case in cases:
        label_format, m = names[case["format"]], case["chunk_labels"]
        seed = bytes.fromhex(case["session_seed"])
        chunks = {}
        for g, want in case["labels"].items():
            chunks.setdefault(int(g) // m, {})[int(g) % m] = want
        requests = {}  # graph size -> {(chunk, rank)}: every label of the case at once, for the lanes
        for chunk, wanted in sorted(chunks.items()):
            size = graph_size(label_format, m, chunk, case["first"] + case["count"])
            if size > max_graph:
                continue
            requests.setdefault(size, set()).update((chunk, rank) for rank in wanted)
            got = chunk_labels(label_format, seed, m, chunk, sorted(wanted), size)
            for rank, want in wanted.items():
                if got[rank].hex() != want:
                    fail(f"self-test: {case['format']} m={m} label {chunk * m + rank}: got {got[rank].hex()}, "
                         f"want {want}")
                checked += 1
        lanes = run_lane_batches(plan_lane_batches(label_format, seed, m, requests, jobs), jobs)
        for chunk, rank in sorted(set().union(*requests.values())):
            want = chunks[chunk][rank]
            if lanes[(chunk, rank)].hex() != want:
                fail(f"self-test: {case['format']} m={m} label {chunk * m + rank}, computed in lanes: got "
                     f"{lanes[(chunk, rank)].hex()}, want {want}")
    print(f"self-test: {checked} known-answer labels of label-spec.md reproduced, one chunk at a time and side by "
          f"side in lanes (chunk graphs up to {max_graph})")


# ------------------------------------------------------------------------------------------------
# The audit.

TRANSCRIPT_CONTEXT = b"wipeproof/v2/transcript"
WAVE_SEND_TOLERANCE_US = 50_000  # wave members on the wall clock; and how far it may disagree with the wave clock
WAVE_CLOCK_TOLERANCE_US = 1_000  # wave members on the wave clock (its granularity)
TIME_LIMIT_US = 1 << 60  # times beyond it are not placed (as `ledger audit`)


def transcript_item(tag, payload):
    return bytes([tag]) + struct.pack("<Q", len(payload)) + payload


def transcript_digest(schema, order_payload, notice_payloads, report_payload, rounds):
    """wipe.capnp TranscriptDigest.digest over the recorded order, fill notices ({device index: payload}),
    fill report and logged rounds: each kind of item in a fixed place, whatever order they crossed the
    wire in (the rounds hashed into a digest of their own)."""
    rounds_hash = hashlib.blake2b(digest_size=32)
    for _, exchange, _ in rounds:
        rounds_hash.update(transcript_item(3, schema.canonical(exchange["round"], "ChallengeRound")))
        rounds_hash.update(transcript_item(4, schema.canonical(exchange["answer"], "RoundAnswer")))
    h = hashlib.blake2b(digest_size=32)
    h.update(TRANSCRIPT_CONTEXT)
    h.update(transcript_item(1, order_payload))
    for device in sorted(notice_payloads):
        h.update(transcript_item(6, notice_payloads[device]))
    h.update(transcript_item(2, report_payload))
    h.update(transcript_item(7, rounds_hash.digest()))
    h.update(transcript_item(5, struct.pack("<I", len(rounds))))
    return h.digest()


def logged_rounds(schema, round_log_records, session=None):
    """[(timing, exchange, ledger sequence)] of a session's RoundLog records, checked to continue one another (and,
    given `session` in hex, to belong to it)."""
    rounds = []
    for sequence, record in round_log_records:
        log = schema.decode(record, "RoundLog")
        if session is not None and data(log.get("sessionId")).hex() != session:
            fail(f"round log (ledger entry {sequence}): the record belongs to session "
                 f"{data(log.get('sessionId')).hex()}, the entry names session {session}")
        if int(log.get("firstRound", 0)) != len(rounds):
            fail(f"round log (ledger entry {sequence}) does not continue the previous one")
        for timing, exchange in zip(log.get("rounds", []), log.get("exchanges", [])):
            rounds.append((timing, exchange, sequence))
    return rounds


def answered_labels(rounds):
    """[(round, ledger sequence, device index, global label index, the 32 answered bytes)] in log order: every
    answer of the rounds the log marks all correct (the answers a verdict counts as right; a failed session's
    wrong answer is in a round marked otherwise)."""
    answered = []
    for timing, exchange, sequence in rounds:
        if "answer" not in exchange or not timing.get("allCorrect"):
            continue
        labels = data(exchange["answer"].get("labels"))
        k = 0
        for device in exchange["round"]["devices"]:
            for g in device["labelIndices"]:
                answered.append((timing.get("roundIndex", 0), sequence, device.get("deviceIndex", 0), int(g),
                                 labels[32 * k:32 * k + 32]))
                k += 1
    return answered


def sample_labels(answered, count, rng):
    """The labels to recompute: all when count is None, else `count` drawn by rng uniformly without replacement."""
    return answered if count is None else rng.sample(answered, min(count, len(answered)))


# ------------------------------------------------------------------------------------------------
# What a sample proves. k of a session's n answers drawn uniformly without replacement all avoid the
# b forged ones with probability C(n-b, k) / C(n, k) = prod_{i<k} (n-b-i) / (n-i) (hypergeometric),
# which is at most (1 - b/n)^k. "More than a fraction f forged" means b >= floor(f*n) + 1 > f*n, so a
# session with more than f*n forged answers passes the label check with probability below (1 - f)^k.


def least_forged(n, fraction):
    """The least count of n answers that is more than `fraction` (a Fraction) of them."""
    return math.floor(fraction * n) + 1


def miss_probability(n, k, forged):
    """P(k of n answers drawn uniformly without replacement hold none of `forged` given ones)."""
    if forged <= 0:
        return 1.0
    if k > n - forged:
        return 0.0
    p = 1.0
    for i in range(k):
        p *= (n - forged - i) / (n - i)
    return p


def sized_sample(n, fraction, power):
    """The least k <= n for which a session of n answers with more than `fraction` of them forged fails the label
    check with probability >= power; never more than binomial_sample(fraction, power)."""
    forged = least_forged(n, fraction)
    p = 1.0
    for k in range(n + 1):
        if p <= 1 - power or forged > n:
            return k
        p *= (n - forged - k) / (n - k)
    return n


def binomial_sample(fraction, power):
    """ceil(ln(1 - power) / ln(1 - fraction)): the k of (1 - f)^k <= 1 - power, for any n."""
    return math.ceil(math.log(1 - power) / math.log(1 - float(fraction)))


def floor_digits(p, digits=4):
    """p rounded down to `digits` decimals, as text: a lower bound stays one."""
    scaled = math.floor(p * 10 ** digits)
    return "1" if scaled >= 10 ** digits else f"0.{scaled:0{digits}d}"


class LabelSample:
    """How many answered labels a session gets recomputed, and what that proves. `labels`: "auto" (sized for
    `power` against more than `fraction` forged), "all", or a count."""

    def __init__(self, labels, fraction, power):
        self.labels, self.fraction, self.power = labels, fraction, power

    def size(self, n):
        """None (every one) or the count to draw of n answered labels."""
        if self.labels == "all":
            return None
        if self.labels == "auto":
            return sized_sample(n, self.fraction, self.power)
        return min(int(self.labels), n)

    def percent(self):
        return f"{float(self.fraction) * 100:g}%"

    def describe(self):
        """The run's rule, for its first lines."""
        if self.labels == "all":
            return "every answered label of every session recomputed"
        cap = binomial_sample(self.fraction, self.power)
        if self.labels == "auto":
            return (f"per session the least uniform sample (without replacement) of its answered labels that a "
                    f"session with more than {self.percent()} of its answers forged fails with probability >= "
                    f"{self.power:g} (hypergeometric; at most ceil(ln({1 - self.power:.6g}) / ln(1 - "
                    f"{float(self.fraction):g})) = {cap} labels; --labels=all for every one)")
        return (f"{self.labels} uniformly drawn answered labels per session (without replacement; {cap} would give "
                f"power {self.power:g} against more than {self.percent()} forged; --labels=all for every one)")

    def statement(self, n, k):
        """What recomputing k of n answered labels, all found right, shows."""
        if n == 0:
            return "no answered label to recompute"
        if k >= n:
            return f"every one of the {n} answered labels recomputed: any forged answer fails this check"
        if k == 0:
            return f"none of the {n} answered labels recomputed: forged answers go unnoticed by this check"
        forged = least_forged(n, self.fraction)
        caught = 1 - miss_probability(n, k, forged)
        text = (f"{k} of {n} answered labels recomputed: a session with more than {self.percent()} of its answers "
                f"forged ({forged} or more of {n}) fails this check with probability >= {floor_digits(caught)}")
        if caught < self.power:  # what the smaller sample does reach at the stated power: (1 - f)^k <= 1 - power
            reach = -math.expm1(math.log(1 - self.power) / k)
            text += (f"; at >= {self.power:g} it catches sessions with more than {reach * 100:.3g}% of their "
                     f"answers forged")
        return text


# ------------------------------------------------------------------------------------------------
# The bound: a port of challenger/session/bound.cc, operation for operation (threat-model.md "The claim";
# the derivation is in bound.h). Device d: capacity C_d, planned bytes P_d, N_d distinct chunks checked.
# unwiped <= sum_d (C_d - P_d) + M, M = max { sum_d f_d P_d : sum_d N_d * -ln(1 - f_d) <= -ln(1 - c) },
# reached at f_d = max(0, 1 - lambda / r_d), r_d = P_d / N_d, for the one prefix of the devices sorted by
# r_d (largest first) whose lambda lies between its last ratio and the next. A device never checked
# counts in full. M is rounded up after adding 1e-12 of itself and 1e-14 of the planned bytes (bound.h
# "Units"), so a stated bound may differ from this one by that padding and the ceiling, no more
# (bound_slack): another platform's libm may round the logarithms differently.

UINT64_MAX = (1 << 64) - 1
STATED_SAFETY_MINIMUM = 1.5  # parameter_profile.h kMinStatedSafetyFactor
HONEST_ROUND_MARGIN = 1.2  # deadline_rule.h kHonestRoundMargin


def _saturating_add(a, b):
    return min(a + b, UINT64_MAX)


def _round_up_bytes(x):
    padded = x + x * 1e-12
    if not padded < 18446744073709551616.0:
        return UINT64_MAX
    padded = math.ceil(padded)
    return 0 if padded <= 0 else min(padded, UINT64_MAX)


def maximize_missing(planned, checked, confidence):
    """M (bytes, a float) of bound.cc MaximizeMissing: planned and checked are floats per device."""
    missing = 0.0
    budget = -math.log1p(-confidence)
    order = []
    for d, (p, n) in enumerate(zip(planned, checked)):
        if not p > 0:
            continue
        if not n > 0:
            missing += p  # never checked: all of it
            continue
        order.append(d)
    if not order:
        return missing
    log_ratio = {d: math.log(planned[d]) - math.log(checked[d]) for d in order}
    order.sort(key=lambda d: -log_ratio[d])  # stable: ties keep device order, as std::stable_sort
    sum_n = sum_n_log_r = 0.0
    active = 0
    for k, d in enumerate(order):
        sum_n += checked[d]
        sum_n_log_r += checked[d] * log_ratio[d]
        log_lambda = (sum_n_log_r - budget) / sum_n
        active = k + 1
        # The prefix whose lambda is at least the next ratio: no device outside it would be active.
        if k + 1 == len(order) or log_lambda >= log_ratio[order[k + 1]]:
            break
    # f_d = -expm1(ln lambda - ln r_d), with both logarithms taken relative to the largest ratio (bound.cc).
    top_ratio = planned[order[0]] / checked[order[0]]
    weighted = 0.0
    for j in order[:active]:
        weighted += checked[j] * math.log((planned[j] / checked[j]) / top_ratio)
    log_lambda_over_top = (weighted - budget) / sum_n
    for d in order[:active]:
        exponent = log_lambda_over_top - math.log((planned[d] / checked[d]) / top_ratio)
        missing += -math.expm1(min(0.0, exponent)) * planned[d]
    return missing


def joint_bound(devices, confidence):
    """bound.cc ComputeJointBound: devices [(capacity, planned, checked chunks)] (integers, planned <= capacity)
    -> {outside, planned, missing, total} in bytes."""
    outside = planned_total = 0
    for capacity, planned, _ in devices:
        outside = _saturating_add(outside, capacity - planned)
        planned_total = _saturating_add(planned_total, planned)
    m = maximize_missing([float(p) for _, p, _ in devices], [float(n) for _, _, n in devices], confidence)
    missing = min(_round_up_bytes(m + 1e-14 * float(planned_total)), planned_total)
    return {"outside": outside, "planned": planned_total, "missing": missing,
            "total": _saturating_add(outside, missing), "unpadded": m}


def device_diagnostics(devices, confidence):
    """bound.cc ComputeBound's per-device figures (diagnostics only): capacity - planned + ceil((1 - (1 - c_d)^(1/N_d))
    * planned) at c_d = 1 - (1 - c) / D; a device never checked: its capacity."""
    per_device = 1.0 - (1.0 - confidence) / float(max(1, len(devices)))
    out = []
    for capacity, planned, checked in devices:
        if checked == 0:
            out.append(capacity)
            continue
        fraction = -math.expm1(math.log1p(-per_device) / float(checked))
        out.append(_saturating_add(capacity - planned, math.ceil(fraction * float(planned))))
    return out


def occupancy_detection(devices, shortfall):
    """d(b) of challenger/session/occupancy_bound.h: devices [(planned bytes, labels per occupancy round)], b in
    bytes -> the least chance one occupancy round detects a shortfall of more than b (L(b) lowered by 1e-12)."""
    remaining = float(shortfall)
    asked = []
    for planned, labels in devices:
        if planned == 0:
            continue
        if labels == 0:
            remaining -= float(planned)  # never asked: short at no cost
            continue
        asked.append((float(planned), float(labels), float(planned) / float(labels)))
    if remaining < 0 or not asked:
        return 0.0
    asked.sort(key=lambda a: -a[2])
    sum_p = sum_o = mu = 0.0
    active = 0
    for k, (planned, labels, _) in enumerate(asked):
        sum_p += planned
        sum_o += labels
        mu = (sum_p - remaining) / sum_o
        active = k + 1
        if k + 1 == len(asked) or mu >= asked[k + 1][2]:
            break
    if not mu > 0:
        return 0.0
    exponent = sum(labels * math.log(ratio / mu) for _, labels, ratio in asked[:active])
    return -math.expm1(-max(0.0, exponent * (1 - 1e-12)))


def occupancy_rounds_log_lower_tail(rounds, expected):
    """ln P[X <= rounds] for X Poisson with mean `expected` (occupancy_bound.cc OccupancyRoundsLogLowerTail); 0 when
    rounds >= expected."""
    if not expected > rounds:
        return 0.0
    log_top = -expected + rounds * math.log(expected) - math.lgamma(rounds + 1)
    total, term, i = 0.0, 1.0, rounds
    while True:
        total += term
        if i == 0 or term < 1e-17 * total:
            break
        term *= i / expected
        i -= 1
    return log_top + math.log(total)


OCCUPANCY_ROUNDS_IMPLAUSIBLE = 1e-9  # occupancy_bound.h kOccupancyRoundsImplausible
OCCUPANCY_OVERRUN_SLACK_US = 1000000  # occupancy_bound.h kOccupancyOverrunSlackUs


def occupancy_short_us(detection, confidence, mean_gap_us, unprotected_us):
    """T* + U of occupancy_bound.h in microseconds (T* rounded up after adding 1e-12 of itself); UINT64_MAX when
    d(b) = 0."""
    if not detection > 0:
        return UINT64_MAX
    t = float(mean_gap_us) * -math.log1p(-confidence) / detection
    padded = math.ceil(t + t * 1e-12)
    short = UINT64_MAX if not padded < 18446744073709551616.0 else int(padded)
    return _saturating_add(short, unprotected_us)


def bound_slack(bound):
    """How far a stated bound may be from joint_bound's: the padding bound.cc adds, and one byte of ceiling."""
    return math.ceil(1e-12 * bound["unpadded"] + 1e-14 * float(bound["planned"])) + 1


def recomputed_bound(what, device, inputs, confidence, field, stated, over):
    """bound.h's closed form over `inputs` [(capacity, planned bytes, chunks checked)]; fails unless no device is
    planned beyond its capacity and `stated` (the verdict's `field`) is within bound_slack of it. Returns
    (bound, slack)."""
    if any(planned > capacity for capacity, planned, _ in inputs):
        fail(f"{what}: {device} is planned beyond its declared capacity: no bound can be stated")
    bound = joint_bound(inputs, confidence)
    slack = bound_slack(bound)
    if abs(stated - bound["total"]) > slack:
        fail(f"{what}: {field} is {stated}, the bound recomputed {over} (bound.h's closed form) is {bound['total']} "
             f"(allowed difference: {slack} byte(s))")
    return bound, slack


def deadline_rule(order):
    """deadline_rule.cc CheckDeadlineRule for an order: (holds, recompute floor in us), the rule being round deadline
    (us) * 1e6 <= 1.5 * m * c_node * t_min (ps) / safety, c_node = 1 for c1 and 2 for 192."""
    profile = order.get("profile", {})
    c_node = 1 if order.get("format", "posedbBlake3C1") == "posedbBlake3C1" else 2
    safety = float(profile.get("safetyFactor", 0))
    product = 1.5 * float(int(order.get("chunkLabels", 0))) * c_node * float(int(profile.get("tMinPs", "0")))
    floor_ps = product / safety if safety else (math.inf if product > 0 else math.nan)  # as IEEE division
    return float(int(order.get("roundDeadlineUs", "0"))) * 1e6 <= floor_ps, floor_ps / 1e6


class Recipe:
    def __init__(self, schema, document, authority, challenger, sample, sample_seed, jobs=1):
        self.schema = schema
        self.document = document
        self.authority = authority
        self.challenger = challenger
        self.sample = sample  # a LabelSample: how many answered labels to recompute per session
        self.sample_seed = sample_seed
        self.rng = random.Random(sample_seed)
        self.jobs = jobs  # processes recomputing labels
        self.labels_seconds = 0.0
        self.say = lambda line: print(terminal_safe(line), flush=True)

    def run(self):
        doc = self.document
        if doc.get("schema_sha256") != self.schema.sha256:
            fail(f"the export was written with the schema of SHA-256 {doc.get('schema_sha256')}, "
                 f"{self.schema.path} has {self.schema.sha256}: decode with the schema it names")
        if doc.get("challenger_key_id") != key_id(self.challenger).hex():
            fail(f"the export is of challenger key {doc.get('challenger_key_id')}, "
                 f"not the pinned {key_id(self.challenger).hex()}")
        if "authority_public_key" in doc and bytes.fromhex(doc["authority_public_key"]) != self.authority:
            fail("the export lists another authority key than the pinned one")
        self.inventories = {}  # digest hex -> the text of a signed inventory the export carries (read when named)
        documents = doc.get("documents", [])
        if not isinstance(documents, list):
            fail("the export's documents are not a list")
        for i, listed in enumerate(documents):
            if not isinstance(listed, dict) or not all(isinstance(listed.get(f), str) for f in ("kind", "digest", "text")):
                fail(f"the export's document {i} is not an object with text fields kind, digest and text")
            try:
                text_bytes = listed["text"].encode()
            except UnicodeEncodeError:
                fail(f"the export's document {i} holds text that is not valid Unicode")
            if blake2b256(text_bytes).hex() != listed["digest"]:
                fail(f"the export's document {listed['digest']} is not the digest of its text")
            if listed["kind"] == "inventory":
                self.inventories[listed["digest"]] = listed["text"]
        self.nodes = {}
        for node in doc.get("nodes", []):
            public_key = bytes.fromhex(node["public_key"])
            self.nodes[key_id(public_key)] = (node["name"], public_key)
        self.say(f"schema: {self.schema.path} sha256 {self.schema.sha256} (the export's)")
        self.say(f"labels: {self.sample.describe()}; sample seed {self.sample_seed}; BLAKE3 in pure Python (Debian has "
                 f"no Python BLAKE3 module), chunks side by side as big-integer lanes, {self.jobs} process(es)")
        entries = self.check_chain()
        sessions = {}
        waves = []
        for entry in entries:
            if not entry["session"] and entry["kind"] == "waveVerdict":
                waves.append(entry)  # a wave's statement: filed under no session
                continue
            sessions.setdefault(entry["session"], []).append(entry)
        self.wave_claims = {}  # session -> (node, the signed wave's members) where wave-complete reads held
        self.first_pass = {}  # session -> (node, whether its first verdict passed)
        for session, records in sessions.items():
            self.check_session(session, records)
        listed = {}  # member session -> the wave verdict that lists it
        for entry in waves:
            self.check_wave(entry, sessions, listed)
        self.check_wave_claims(listed)
        self.say(f"recipe: OK: {len(entries)} entries chained and signed, {len(sessions)} session(s) and "
                 f"{len(waves)} wave verdict(s) re-verified, every stated bound recomputed; labels recomputed in "
                 f"{format_seconds(self.labels_seconds)}")

    def check_wave(self, entry, sessions, listed):
        """A wave verdict: signed by the challenger, naming each member session's final verdict by digest (its node
        and session as the wave lists them); a pass only when every member passed; no member session listed by an
        earlier wave verdict (`listed`: session -> that verdict's ledger entry); when complete, exactly the nodes the
        signed inventory declares for the wave; when not, no bound and one of SignWaveVerdict's two reasons; its
        bound, confidence and words recomputed (check_wave_bound)."""
        where = f"wave verdict (ledger entry {entry['sequence']})"
        payload = open_envelope(self.schema, entry["record"], "waveVerdict", self.challenger, where)
        wave = self.schema.decode(payload, "WaveVerdict")
        sids, names, digests = (wave.get(f, []) for f in ("sessionIds", "nodeNames", "verdictDigests"))
        if not len(sids) == len(names) == len(digests):
            fail(f"{where}: sessionIds, nodeNames and verdictDigests differ in length "
                 f"({len(sids)}, {len(names)}, {len(digests)})")
        passes = []
        placed = []  # per member: (node, verdict, labels of a proof round)
        signed_ends = []  # per member: the node-signed fill end (FillReport.finishedAtUnixUs; 0: no report)
        for sid, node, digest in zip(sids, names, digests):
            session = data(sid).hex()
            records = sessions.get(session)
            if records is None:
                fail(f"{where}: member {node} (session {session}): the export holds no record of it")
            verdicts = [r for r in records if r["kind"] == "verdict"]
            if not verdicts:
                fail(f"{where}: member {node}: the export holds no verdict of session {session}")
            final = open_envelope(self.schema, verdicts[-1]["record"], "verdict", self.challenger,
                                  f"{where}: member {node}")
            if blake2b256(final) != data(digest):
                fail(f"{where}: member {node}: the verdict digest is not the session's final verdict's")
            member = self.schema.decode(final, "Verdict")
            if member.get("nodeName", "") != node:
                fail(f"{where}: member {node} (session {session}): the session's verdict is for node "
                     f"{member.get('nodeName', '')}")
            if data(member.get("sessionId")).hex() != session:
                fail(f"{where}: member {node} (session {session}): the session's verdict is of session "
                     f"{data(member.get('sessionId')).hex()}")
            passes.append(bool(member.get("pass")))
            orders = [r for r in records if r["kind"] == "order"]
            if not orders:
                fail(f"{where}: member {node}: the session has no order")
            order = open_order(self.schema, orders[0]["record"], self.authority, self.challenger,
                               f"{where}: member {node}: order")
            # The delegated order says which wave the node was wiped in, and whether that run was complete.
            if order.get("waveName", "") != wave.get("waveName", ""):
                fail(f"{where}: member {node}: its order is for wave '{order.get('waveName', '')}', "
                     f"not '{wave.get('waveName', '')}'")
            if wave.get("complete") and not order.get("waveComplete"):
                fail(f"{where}: member {node}: the wave verdict says complete, the member's order does not")
            if wave.get("complete"):
                # A complete wave lists exactly the nodes the signed inventory declares for it: a failed member
                # left out would make the rest a complete, passing wave.
                declared = self.declarations(f"{where}: member {node}: order", order)
                if declared is not None:
                    decl_node, inventory = declared
                    decl_wave = next((w for w in inventory.get("waves", []) if decl_node["name"] in w.get("nodes", [])),
                                     {"nodes": []})
                    if sorted(names) != sorted(decl_wave["nodes"]):
                        fail(f"{where}: member {node}: the wave verdict says complete and lists nodes "
                             f"{', '.join(sorted(names))}, the signed inventory its order stands under declares wave "
                             f"{wave.get('waveName', '')}'s nodes {', '.join(sorted(decl_wave['nodes']))}")
            placed.append((node, member, sum(int(d.get("labelsPerRound", 0)) for d in order["devices"])))
            reports = [r for r in records if r["kind"] == "fillReport"]  # its signature: the session's check
            signed_ends.append(int(self.schema.decode(data(self.schema.decode(reports[0]["record"], "Envelope")
                                                           .get("payload")), "FillReport")
                                   .get("finishedAtUnixUs", "0")) if reports else 0)
        members = list(zip(sids, names))
        if not members or len({bytes(data(s)) for s, _ in members}) != len(members) or \
                len({n for _, n in members}) != len(members):
            fail(f"{where}: it must name at least one member, each node and session once")
        if wave.get("pass") and not all(passes):
            fail(f"{where}: says pass, but a member failed")
        # Each member's order on one clock: the wall clock (each verdict's orderSentAtUnixUs: the node-signed
        # transcript names the verdict, the delegated order bounds it), always; and, when the wave verdict
        # states orderSentAfterWaveUs (microseconds after the wave's first order on the monotonic clock of the one
        # challenger process that ran every member; signed by the challenger alone), the wave clock too, once it
        # agrees with the wall clock within 50 ms.
        wave_clock = None
        if "orderSentAfterWaveUs" in wave:
            wave_clock = [int(x) for x in wave["orderSentAfterWaveUs"]]
            if len(wave_clock) != len(placed):
                fail(f"{where}: orderSentAfterWaveUs lists {len(wave_clock)} members, sessionIds {len(placed)}")
            if any(not 0 <= x < TIME_LIMIT_US for x in wave_clock):
                fail(f"{where}: orderSentAfterWaveUs is out of range")
        clock = "wave clock" if wave_clock is not None else "wall clock"
        # Reported, not checked (the order states no clock-skew allowance): per member with a fill time, the
        # challenger's stated fill end on the wall clock (orderSentAtUnixUs + fillMicros) minus the node-signed
        # one; and the spread of that difference across members with each order on the clock stated for it.
        lags, spread, no_fill = [], [], []
        for k, ((node, v, _), signed_end) in enumerate(zip(placed, signed_ends)):
            sent_at, fill = int(v.get("orderSentAtUnixUs", "0")), int(v.get("fillMicros", "0"))
            if signed_end and sent_at and not fill:
                no_fill.append(node)  # failed before its report reached the challenger: no lag to report
            elif signed_end and sent_at:
                lags.append(f"{node} {sent_at + fill - signed_end} us")
                spread.append((wave_clock[k] if wave_clock is not None else sent_at) + fill - signed_end)
        if lags or no_fill:
            self.say(f"{where}: fill ends stated by the challenger minus those the nodes signed (reported, not "
                     f"checked: the order states no clock-skew allowance): {', '.join(lags)}"
                     + (f"; spread {max(spread) - min(spread)} us on the {clock}" if len(spread) > 1 else "")
                     + (f"{'; ' if lags else ''}no fill time stated: {', '.join(no_fill)}" if no_fill else ""))
        if passes and all(passes):
            for node, v, _ in placed:
                if not 0 < int(v.get("orderSentAtUnixUs", "0")) < TIME_LIMIT_US:
                    fail(f"{where}: member {node}: no orderSentAtUnixUs below 2^60 us to place in the wave")
            wall = [int(v.get("orderSentAtUnixUs", "0")) for _, v, _ in placed]
            self.place_proofs(where, placed, wall, "wall clock")
            if wave_clock is not None:
                for (node, _, _), on_wave, on_wall in zip(placed, wave_clock, wall):
                    on_wave, on_wall = on_wave - wave_clock[0], on_wall - wall[0]
                    if abs(on_wave - on_wall) > WAVE_SEND_TOLERANCE_US:
                        fail(f"{where}: member {node}: its order was sent {on_wave} us after member {placed[0][0]}'s "
                             f"on the wave clock (orderSentAfterWaveUs), {on_wall} us on the wall clock "
                             f"(orderSentAtUnixUs): the clocks disagree by {abs(on_wave - on_wall)} us (allowed: "
                             f"{WAVE_SEND_TOLERANCE_US} us)")
                self.place_proofs(where, placed, wave_clock, "wave clock")
                self.say(f"{where}: every member's proof rounds after every member's fill, on the wave clock, "
                         f"agreeing with the wall clock within {WAVE_SEND_TOLERANCE_US} us")
            else:
                self.say(f"{where}: every member's proof rounds after every member's fill, on the wall clock")
        if not wave.get("complete"):
            # No bound, in one of SignWaveVerdict's two reasons (wave_verdict.cc): not complete, or a node of the wave
            # without a verdict, which no member shows (so any node it does not list).
            if wave.get("boundStated"):
                fail(f"{where}: a wave that is not complete states no bound")
            prefix = f"no bound for wave {wave.get('waveName', '')}: "
            not_complete = (prefix + "the wave is not complete (not every node of it was in the run, or the inventory "
                            "does not declare it complete)")
            statement = wave.get("statement", "")
            head, tail = prefix + "node ", " has no verdict"
            missing = statement[len(head):-len(tail)] if statement.startswith(head) and statement.endswith(tail) and \
                len(statement) > len(head) + len(tail) else None
            if statement != not_complete and (missing is None or missing in names):
                fail(f"{where}: a wave that is not complete says why in one of two ways, {not_complete!r} or "
                     f"'{head}N{tail}' for a node N it does not list; it says {statement!r}")
        for sid in sids:  # an honest challenger runs each member session in one wave run only
            session = data(sid).hex()
            if listed.setdefault(session, entry["sequence"]) != entry["sequence"]:
                fail(f"{where}: member session {session} is listed by wave verdict (ledger entry "
                     f"{listed[session]}) too")
        self.check_wave_bound(where, wave, [v for _, v, _ in placed])
        self.say(f"wave {wave.get('waveName')}: {'pass' if wave.get('pass') else 'fail'}; {len(passes)} member(s); "
                 f"statement: {wave.get('statement', '')}")

    @staticmethod
    def place_proofs(where, placed, starts, clock):
        """Every member's first proof round after the last member's fill (its report or a notice), each member's
        order at starts[i] on `clock`: within 1 ms on the wave clock (its granularity); within 50 ms + 0.1% of the
        span on the wall clock (slew)."""
        def filled_at(start, v):
            return start + max(
                [int(v.get("fillMicros", "0"))] + [int(d.get("filledAfterUs", "0")) for d in v.get("devices", [])])
        last_fill = max(filled_at(start, v) for start, (_, v, _) in zip(starts, placed))
        for start, (node, v, q) in zip(starts, placed):
            proofs = [t for t in v.get("rounds", []) if int(t.get("labelsChecked", 0)) == q]
            if not proofs:
                fail(f"{where}: member {node}: no proof round to place in the wave")
            sent = start + int(proofs[0].get("sentAfterOrderUs", "0"))
            allowed = WAVE_CLOCK_TOLERANCE_US if clock == "wave clock" else \
                WAVE_SEND_TOLERANCE_US + max(0, last_fill - start) // 1000
            if sent + allowed < last_fill:
                fail(f"{where}: member {node}: its first proof round was sent {last_fill - sent} us before the "
                     f"wave's last fill on the {clock} (allowed: {allowed} us)")

    def check_chain(self):
        """Every entry: a ledgerEntry envelope signed by the challenger, sequence n, prevEntryDigest = BLAKE2b-256
        of entry n-1's envelope bytes; the last is the signed head."""
        doc = self.document
        if doc.get("session_filter") is not None:
            fail("a filtered export: the chain cannot be re-verified (export the whole ledger)")
        head = doc["head"]
        if len(doc["entries"]) != head["entry_count"]:
            fail(f"the export lists {len(doc['entries'])} entries, its head counts {head['entry_count']}")
        previous = bytes(32)
        out = []
        for n, exported in enumerate(doc["entries"]):
            if "envelope" not in exported:
                fail(f"entry {n}: no signed envelope in the export (export with --envelopes)")
            envelope_bytes = bytes.fromhex(exported["envelope"])
            what = f"ledger entry {n}"
            payload = open_envelope(self.schema, envelope_bytes, "ledgerEntry", self.challenger, what)
            entry = self.schema.decode(payload, "LedgerEntry")
            if int(entry.get("sequence", "0")) != n:
                fail(f"{what}: the signed entry says sequence {entry.get('sequence')}")
            if data(entry.get("prevEntryDigest")) != previous:
                fail(f"{what}: prevEntryDigest does not link to entry {n - 1}: the chain is broken")
            previous = blake2b256(envelope_bytes)
            out.append({"sequence": n, "kind": entry.get("kind"), "record": data(entry.get("record")),
                        "session": data(entry.get("sessionId")).hex()})
        if out and bytes.fromhex(head["envelope"]) != bytes.fromhex(doc["entries"][-1]["envelope"]):
            fail("the signed head is not the last entry")
        self.say(f"chain: {len(out)} entries, each signed by challenger key {key_id(self.challenger).hex()}, "
                 f"linked from entry 0 to the signed head")
        return out

    def check_session(self, session, records):
        where = f"session {session}"
        by_kind = {}
        for r in records:
            by_kind.setdefault(r["kind"], []).append(r)
        unknown = set(by_kind) - {"order", "deviceFillNotice", "fillReport", "roundLog", "verdict", "transcript",
                                  "receipt"}
        if unknown:
            fail(f"{where}: records of kinds this recipe does not check: {sorted(unknown)}")
        if len(by_kind.get("order", [])) != 1 or records[0]["kind"] != "order":
            fail(f"{where}: one order, first, is needed")
        order_entry = by_kind["order"][0]
        order = open_order(self.schema, order_entry["record"], self.authority, self.challenger,
                           f"{where}: order (ledger entry {order_entry['sequence']})")
        order_payload = data(self.schema.decode(order_entry["record"], "Envelope").get("payload"))

        def same_session(what, message):  # each record names the session its ledger entry is filed under
            if data(message.get("sessionId")).hex() != session:
                fail(f"{where}: {what}: the record belongs to session {data(message.get('sessionId')).hex()}, "
                     f"the entry names session {session}")
        same_session(f"order (ledger entry {order_entry['sequence']})", order)
        if data(order.get("challengerKeyId")) != key_id(self.challenger):
            fail(f"{where}: the order names another challenger key")
        node_key_id = data(order.get("nodeKeyId"))
        declared = self.declarations(where, order)
        if declared is not None:
            node_key = bytes.fromhex(declared[0]["public_key"])  # check_declarations: its id is the order's
        elif node_key_id not in self.nodes or self.nodes[node_key_id][0] != order["nodeName"]:
            fail(f"{where}: the export lists no key {node_key_id.hex()} for node {order['nodeName']}")
        else:
            node_key = self.nodes[node_key_id][1]
        verdicts = by_kind.get("verdict", [])
        if not verdicts:
            self.say(f"{where}: node {order['nodeName']}: order without a verdict (count it as a failed wipe)")
            return
        verdict_payloads = [open_envelope(self.schema, v["record"], "verdict", self.challenger,
                                          f"{where}: verdict (ledger entry {v['sequence']})") for v in verdicts]
        for v, payload in zip(verdicts, verdict_payloads):
            same_session(f"verdict (ledger entry {v['sequence']})", self.schema.decode(payload, "Verdict"))
        # One verdict, or a pass and the failure that superseded it (a late finding): never a second pass,
        # which no node signed (the node's transcript names the first verdict only).
        if len(verdicts) > 2:
            fail(f"{where}: verdict (ledger entry {verdicts[2]['sequence']}): a third verdict; a session has one, "
                 "or a pass and the failure that superseded it")
        if len(verdicts) == 2 and (not self.schema.decode(verdict_payloads[0], "Verdict").get("pass") or
                                   self.schema.decode(verdict_payloads[1], "Verdict").get("pass")):
            fail(f"{where}: verdict (ledger entry {verdicts[1]['sequence']}): a second verdict may only supersede a "
                 "pass with a failure")
        verdict = self.schema.decode(verdict_payloads[-1], "Verdict")
        if data(verdict.get("orderDigest")) != blake2b256(order_payload):
            fail(f"{where}: the verdict's orderDigest is not the order's")
        report = report_payload = None
        if "fillReport" in by_kind:
            entry = by_kind["fillReport"][0]
            report_payload = open_envelope(self.schema, entry["record"], "fillReport", node_key,
                                           f"{where}: fill report (ledger entry {entry['sequence']})")
            report = self.schema.decode(report_payload, "FillReport")
            same_session(f"fill report (ledger entry {entry['sequence']})", report)
            if data(report.get("orderDigest")) != blake2b256(order_payload):
                fail(f"{where}: the fill report's orderDigest is not the order's")
        notices = {}  # device index -> (payload, decoded): the node-signed notice of each filled device
        for entry in by_kind.get("deviceFillNotice", []):
            payload = open_envelope(self.schema, entry["record"], "deviceFillNotice", node_key,
                                    f"{where}: fill notice (ledger entry {entry['sequence']})")
            notice = self.schema.decode(payload, "DeviceFillNotice")
            same_session(f"fill notice (ledger entry {entry['sequence']})", notice)
            device = int(notice.get("deviceIndex", 0))
            if data(notice.get("orderDigest")) != blake2b256(order_payload):
                fail(f"{where}: fill notice (ledger entry {entry['sequence']}): orderDigest is not the order's")
            if device >= len(order["devices"]) or device in notices or \
                    notice["fill"]["selector"] != order["devices"][device]["selector"]:
                fail(f"{where}: fill notice (ledger entry {entry['sequence']}) is not one device of the order, once")
            notices[device] = (payload, notice)
        try:
            rounds = logged_rounds(self.schema, [(e["sequence"], e["record"]) for e in by_kind.get("roundLog", [])],
                                   session)
        except AuditFailure as failure:
            fail(f"{where}: {failure}")
        self.check_receipt(where, session, by_kind, verdict, verdict_payloads[-1], verdicts[-1]["sequence"],
                           order_payload, report_payload)
        if verdict.get("pass"):
            self.check_pass(where, order, order_payload, notices, report, report_payload, rounds, verdict,
                            verdict_payloads, by_kind, node_key)
            outcome = "pass"
        else:
            outcome = f"fail ({verdict.get('failure', {}).get('reason')})"
        bound_stated = self.check_bound(where, order, verdict, verdicts[-1]["sequence"], declared is not None)
        self.check_occupancy(where, order, verdict, verdicts[-1]["sequence"], rounds, bound_stated)
        self.check_compute(where, order, verdict, verdicts[-1]["sequence"], rounds, bound_stated, declared)
        self.check_assumptions(where, order, verdict, declared, report)
        self.first_pass[session] = (order["nodeName"], bool(self.schema.decode(verdict_payloads[0], "Verdict")
                                                             .get("pass")))
        if any(a.get("name") == "wave-complete" and a.get("held") for a in verdict.get("assumptions", [])):
            wave = next((w for w in declared[1].get("waves", []) if order["nodeName"] in w.get("nodes", [])), {})
            self.wave_claims[session] = (order["nodeName"], list(wave.get("nodes", [])))
        sampled = self.check_labels(where, order, rounds)
        self.say(f"{where}: node {order['nodeName']}: {outcome}; {len(rounds)} rounds; {sampled} labels recomputed; "
                 f"statement: {verdict.get('statement', '')}")

    def check_pass(self, where, order, order_payload, notices, report, report_payload, rounds, verdict,
                   verdict_payloads, by_kind, node_key):
        """A pass: the report holds the plan, the fill and every round within their deadlines, every answer
        marked right, chunksChecked as the rounds show, and the transcript the node signed over exactly these
        records."""
        if report is None:
            fail(f"{where}: the verdict says pass without a fill report")
        devices = order["devices"]
        for plan, fill in zip(devices, report["devices"]):
            if int(fill["labelCount"]) < int(plan["labelCount"]) or int(fill["bytesHeld"]) < 32 * int(plan["labelCount"]):
                fail(f"{where}: device {plan['selector']} holds less than its plan")
        fill_us = int(verdict["fillMicros"])
        if fill_us > int(order["fillDeadlineUs"]):
            fail(f"{where}: the fill took {fill_us} us, past the order's fill deadline")
        for d, plan in enumerate(devices):
            if d not in notices:
                fail(f"{where}: the verdict says pass without a fill notice of device {plan['selector']}")
            fill = notices[d][1]["fill"]
            if int(fill["labelCount"]) < int(plan["labelCount"]) or int(fill["bytesHeld"]) < 32 * int(plan["labelCount"]):
                fail(f"{where}: device {plan['selector']}'s fill notice holds less than its plan")
            # Each device against its own deadline, from the time its notice arrived (the report's if none is stated).
            filled_after = int(verdict["devices"][d].get("filledAfterUs", "0")) or fill_us
            if filled_after > int(plan["fillDeadlineUs"]):
                fail(f"{where}: device {plan['selector']} was filled after {filled_after} us, "
                     f"past its fill deadline of {plan['fillDeadlineUs']} us")
        if not rounds:
            fail(f"{where}: a pass without rounds")
        deadline = int(order["roundDeadlineUs"])
        m = int(order["chunkLabels"])
        chunks = [set() for _ in devices]
        # Send times (sentAfterOrderUs, microseconds from the order on the challenger's clock): one round in
        # flight at a time, a device challenged only from its notice on, a proof round only after every fill.
        if not int(verdict.get("orderSentAtUnixUs", "0")):
            fail(f"{where}: the verdict states no orderSentAtUnixUs: the round send times cannot be placed")
        sent_at = int(verdict.get("orderSentAtUnixUs", "0"))
        if not int(order["issuedAtUnixUs"]) <= sent_at < int(order["expiresAtUnixUs"]):
            fail(f"{where}: orderSentAtUnixUs {sent_at} is outside the order's lifetime")
        # The verdict's own list of rounds must be the logged one (a wave is placed by the verdict's list).
        stated = verdict.get("rounds", [])
        if len(stated) != len(rounds):
            fail(f"{where}: the verdict lists {len(stated)} rounds, the round log {len(rounds)}")
        for r, (row, (timing, _, sequence)) in enumerate(zip(stated, rounds)):
            for field in ("roundIndex", "elapsedUs", "labelsChecked", "deadlineMet", "allCorrect", "sentAfterOrderUs"):
                if str(row.get(field, 0)) != str(timing.get(field, 0)):
                    fail(f"{where}: round {r}'s {field} in the verdict is not the round log's (ledger entry {sequence})")
        filled = [int(verdict["devices"][d].get("filledAfterUs", "0")) or fill_us for d in range(len(devices))]
        all_filled = max([fill_us] + filled)
        answered = 0
        for timing, exchange, sequence in rounds:
            r = timing.get("roundIndex", 0)
            sent = int(timing.get("sentAfterOrderUs", "0"))
            if sent < answered:
                fail(f"{where}: round {r} (ledger entry {sequence}) was sent at {sent} us, before the round before "
                     f"it was answered ({answered} us)")
            answered = sent + int(timing["elapsedUs"])
            parts = exchange["round"].get("devices", [])
            for device in parts:
                index = device.get("deviceIndex", 0)
                if index < len(filled) and sent < filled[index]:
                    fail(f"{where}: round {r} (ledger entry {sequence}) challenges device {index} at {sent} us, "
                         f"before its fill notice ({filled[index]} us)")
            if len(parts) == len(devices) and all(
                    len(p.get("labelIndices", [])) == int(devices[p.get("deviceIndex", 0)].get("labelsPerRound", 0))
                    for p in parts if p.get("deviceIndex", 0) < len(devices)) and sent < all_filled:
                fail(f"{where}: proof round {r} (ledger entry {sequence}) was sent at {sent} us, before the report "
                     f"and every notice were in ({all_filled} us)")
        for timing, exchange, sequence in rounds:
            r = timing.get("roundIndex", 0)
            if int(timing["elapsedUs"]) > deadline:
                fail(f"{where}: round {r} (ledger entry {sequence}) took {timing['elapsedUs']} us, "
                     f"the deadline is {deadline} us")
            if not timing.get("allCorrect") or "answer" not in exchange:
                fail(f"{where}: round {r} (ledger entry {sequence}) is not marked all correct")
            # Only proof rounds count: every planned device with exactly its labelsPerRound indices
            # (holding rounds carry fewer and may come before the last fill).
            parts = exchange["round"].get("devices", [])
            sizes = [0] * len(devices)
            for device in parts:
                index = device.get("deviceIndex", 0)
                if index >= len(devices) or sizes[index]:
                    fail(f"{where}: round {r} (ledger entry {sequence}) names device {index} twice or "
                         f"outside the order's {len(devices)}")
                first, count = int(devices[index].get("firstLabel", "0")), int(devices[index]["labelCount"])
                for g in device.get("labelIndices", []):
                    if not first <= int(g) < first + count:
                        fail(f"{where}: round {r} (ledger entry {sequence}): label {g} is outside device "
                             f"{devices[index]['selector']}'s range")
                sizes[index] = len(device.get("labelIndices", [])) or -1
            if any(size != int(plan.get("labelsPerRound", 0)) for size, plan in zip(sizes, devices)):
                continue
            for device in parts:
                for g in device["labelIndices"]:
                    chunks[device.get("deviceIndex", 0)].add(int(g) // m)
        for plan, stated, count in zip(devices, verdict["devices"], chunks):
            if int(stated.get("chunksChecked", "0")) != len(count) or not count:
                fail(f"{where}: device {plan['selector']}: the verdict says {stated.get('chunksChecked')} chunks "
                     f"checked, the rounds show {len(count)}")
        # The transcript rule of wipe.capnp TranscriptDigest, over the recorded messages.
        if "transcript" not in by_kind:
            fail(f"{where}: a pass without the node-signed transcript")
        entry = by_kind["transcript"][0]
        payload = open_envelope(self.schema, entry["record"], "transcriptDigest", node_key,
                                f"{where}: transcript (ledger entry {entry['sequence']})")
        transcript = self.schema.decode(payload, "TranscriptDigest")
        if data(transcript.get("sessionId")) != data(order.get("sessionId")):
            fail(f"{where}: transcript (ledger entry {entry['sequence']}): the record belongs to session "
                 f"{data(transcript.get('sessionId')).hex()}, the entry names session {data(order.get('sessionId')).hex()}")
        digest = transcript_digest(self.schema, order_payload, {d: p for d, (p, _) in notices.items()},
                                   report_payload, rounds)
        if int(transcript.get("roundCount", 0)) != len(rounds):
            fail(f"{where}: the node signed {transcript.get('roundCount')} rounds, the round log holds {len(rounds)}")
        if data(transcript.get("digest")) != digest:
            fail(f"{where}: transcript (ledger entry {entry['sequence']}): the digest recomputed over the recorded "
                 f"order, fill report and rounds is {digest.hex()}, the node signed "
                 f"{data(transcript.get('digest')).hex()}: a logged round or answer is not what the node answered")
        if data(transcript.get("verdictDigest")) != blake2b256(verdict_payloads[0]):
            fail(f"{where}: the transcript's verdictDigest is not the verdict sent in finish")

    def check_receipt(self, where, session, by_kind, final, final_payload, final_sequence, order_payload,
                      report_payload):
        """The receipt: signed by the challenger, stating the final verdict's outcome and node, the digests of the
        recorded order, fill report and final verdict, that verdict's ledger entry, and, when it embeds the
        node-signed transcript, exactly the recorded one (byte for byte, re-encoded in canonical form)."""
        if len(by_kind.get("receipt", [])) != 1:
            fail(f"{where}: one receipt is needed")
        entry = by_kind["receipt"][0]
        what = f"{where}: receipt (ledger entry {entry['sequence']})"
        payload = open_envelope(self.schema, entry["record"], "receipt", self.challenger, what)
        receipt = self.schema.decode(payload, "Receipt")
        if data(receipt.get("sessionId")).hex() != session:
            fail(f"{what}: the record belongs to session {data(receipt.get('sessionId')).hex()}, the entry names "
                 f"session {session}")
        if bool(receipt.get("pass")) != bool(final.get("pass")):
            fail(f"{what}: its pass flag is not the final verdict's")
        if receipt.get("nodeName", "") != final.get("nodeName", ""):
            fail(f"{what}: names node {receipt.get('nodeName', '')}, the verdict {final.get('nodeName', '')}")
        if data(receipt.get("orderDigest")) != blake2b256(order_payload):
            fail(f"{what}: orderDigest is not the recorded order's")
        if report_payload is not None and data(receipt.get("reportDigest")) != blake2b256(report_payload):
            fail(f"{what}: " + ("states no reportDigest, the ledger records a fill report"
                                if not data(receipt.get("reportDigest")) else
                                "reportDigest is not the recorded fill report's"))
        if data(receipt.get("verdictDigest")) != blake2b256(final_payload):
            fail(f"{what}: the receipt's verdictDigest is not the final verdict's")
        if int(receipt.get("ledgerSequence", "0")) != final_sequence:
            fail(f"{what}: the receipt names ledger entry {receipt.get('ledgerSequence')} as the verdict")
        if "transcript" in receipt:
            recorded = by_kind.get("transcript", [])
            embedded = self.schema.canonical(receipt["transcript"], "Envelope")
            if not recorded or embedded != recorded[0]["record"]:
                fail(f"{what}: the transcript it embeds is not the recorded one")

    def check_labels(self, where, order, rounds):
        """Answered labels recomputed from the order's seed: a uniform sample without replacement of the answers in
        rounds marked all correct, sized by self.sample, all of them with --labels=all; says what the sample proves
        and, first, about how long it will take."""
        seed = data(order["seed"])
        m = int(order["chunkLabels"])
        devices = order["devices"]
        answered = answered_labels(rounds)
        sample = sample_labels(answered, self.sample.size(len(answered)), self.rng)
        by_label = {}  # (chunk, rank) -> [(round, sequence, selector, g, answered bytes)]
        requests = {}  # graph size -> {(chunk, rank)}
        label_format = order.get("format", "posedbBlake3C1")
        for r, sequence, d, g, got in sample:
            if d >= len(devices):
                fail(f"{where}: round {r} (ledger entry {sequence}) asks device {d}, the order plans {len(devices)}")
            plan = devices[d]
            first, count = int(plan.get("firstLabel", "0")), int(plan["labelCount"])
            if not first <= g < first + count:
                fail(f"{where}: round {r} asks label {g}, outside device {plan['selector']}")
            chunk, rank = g // m, g % m
            by_label.setdefault((chunk, rank), []).append((r, sequence, plan["selector"], g, got))
            requests.setdefault(graph_size(label_format, m, chunk, first + count), set()).add((chunk, rank))
        if sample:
            batches = plan_lane_batches(label_format, seed, m, requests, self.jobs)
            jobs = min(self.jobs, len(batches))
            seconds = estimate_seconds(batches, jobs)
            if seconds < 1:  # less than starting the processes would cost
                jobs, seconds = 1, estimate_seconds(batches, 1)
            chunks = len({chunk for chunk, _ in by_label})
            self.say(f"{where}: labels: recomputing {len(sample)} of {len(answered)} answered labels, in {chunks} "
                     f"chunk(s) of m = {m}: about {format_seconds(seconds)} on {jobs} process(es)")
            started = time.perf_counter()
            wanted = run_lane_batches(batches, jobs)
            self.labels_seconds += time.perf_counter() - started
            for key, labels in sorted(by_label.items()):
                for r, sequence, selector, g, got in labels:
                    if got != wanted[key]:
                        fail(f"{where}: round {r} (ledger entry {sequence}), device {selector}, label {g}: the logged "
                             f"answer {got.hex()} is not the label recomputed from the seed {wanted[key].hex()}")
        self.say(f"{where}: labels: {self.sample.statement(len(answered), len(sample))}"
                 + (f" (recomputed in {format_seconds(time.perf_counter() - started)})" if sample else ""))
        return len(sample)

    def declarations(self, where, order):
        """When the order's delegation names an inventory (the authority's findings: node keys, capacities,
        reserves, physical memory, reach, waves): the export carries it, it lists the order's node, and the order
        restates it (node key id; devices with model, capacity and the model's reserve, in order; hostMemoryInPlan;
        waveName; waveComplete only for a complete wave and within the reach deadline), as session/declared_node.h
        checks. Returns (node,
        inventory), or None when the delegation names none."""
        digest = named_inventory(self.schema, order)
        if digest is None:
            return None
        text = self.inventories.get(digest.hex())
        if text is None:
            fail(f"{where}: the order's delegation names inventory {digest.hex()}, which the export does not carry")
        try:  # as the challenger's JSON reader: a leading byte-order mark is skipped
            inventory = json.loads(text[1:] if text.startswith("\ufeff") else text)
        except (ValueError, RecursionError) as e:
            fail(f"{where}: the inventory {digest.hex()} its delegation names is not JSON: {e}")
        if not isinstance(inventory, dict) or not isinstance(inventory.get("nodes"), list) or \
                not all(isinstance(n, dict) for n in inventory["nodes"]):
            fail(f"{where}: the inventory {digest.hex()} its delegation names lists no nodes")
        node = next((n for n in inventory.get("nodes", []) if n.get("name") == order["nodeName"]), None)
        if node is None or "public_key" not in node:
            fail(f"{where}: the signed inventory {digest.hex()} lists no node {order['nodeName']} with its key inline")
        if key_id(bytes.fromhex(node["public_key"])) != data(order.get("nodeKeyId")):
            fail(f"{where}: the order's nodeKeyId is not the id of node {order['nodeName']}'s key in the signed "
                 f"inventory")
        devices = order["devices"]
        if len(devices) != len(node.get("devices", [])):
            fail(f"{where}: the order plans {len(devices)} devices, the signed inventory declares "
                 f"{len(node.get('devices', []))}")
        reserves = inventory.get("reserves", {})
        for i, (d, want) in enumerate(zip(devices, node["devices"])):
            got = (d["selector"], d.get("model", ""), int(d.get("capacityBytes", "0")),
                   int(d.get("allowedReserveBytes", "0")))
            declared = (want["selector"], want["model"], int(want["capacity_bytes"]), int(reserves.get(want["model"], -1)))
            if got != declared:
                fail(f"{where}: the order's device {i} (selector, model, capacity, reserve) is {got}, the signed "
                     f"inventory declares {declared}")
            m = int(order.get("chunkLabels", 0))
            fits = (max(0, declared[2] - declared[3]) // 32) // m * m if m else 0
            if int(d["labelCount"]) != fits:
                fail(f"{where}: the order's device {i} plans {d['labelCount']} labels, not the {fits} whole chunks of "
                     f"m = {m} its capacity less its reserve holds")
        if bool(order.get("hostMemoryInPlan")) != any(d["selector"] == "host" for d in devices):
            fail(f"{where}: the order's hostMemoryInPlan does not say whether host memory is among its devices")
        wave = next((w for w in inventory.get("waves", []) if order["nodeName"] in w.get("nodes", [])), None)
        if order.get("waveName", "") != (wave["name"] if wave else ""):
            fail(f"{where}: the order's waveName is '{order.get('waveName', '')}', the signed inventory declares "
                 f"'{wave['name'] if wave else ''}'")
        if order.get("waveComplete") and not (wave and wave.get("complete")):
            fail(f"{where}: the order says its wave is complete, the signed inventory does not")
        if order.get("waveComplete") and not within_reach(order, inventory):
            fail(f"{where}: the order says its wave is complete with a round deadline of {order.get('roundDeadlineUs')}"
                 f" us, the signed inventory declares waves complete only up to "
                 f"{inventory.get('reach_round_deadline_us')} us (reach_round_deadline_us)")
        return node, inventory

    def check_wave_claims(self, listed):
        """wave-complete held in a wave the signed inventory declares with other nodes: a wave verdict lists the
        session, names exactly the declared nodes, and every other member's first verdict passed."""
        members = {}  # wave verdict entry -> its member sessions
        for session, sequence in listed.items():
            members.setdefault(sequence, []).append(session)
        for session, (node, declared) in self.wave_claims.items():
            where = f"session {session}: its verdict says wave-complete held"
            if declared == [node]:
                continue
            if session not in listed:
                fail(f"{where}, and no wave verdict lists the session")
            sessions = members[listed[session]]
            names = sorted(self.first_pass[s][0] for s in sessions)
            if names != sorted(declared):
                fail(f"{where}, and its wave verdict (ledger entry {listed[session]}) lists nodes {', '.join(names)}, "
                     f"not the wave's {', '.join(sorted(declared))} the signed inventory declares")
            for other in sessions:
                if other != session and not self.first_pass[other][1]:
                    fail(f"{where}, and member {self.first_pass[other][0]} of its wave run failed")

    def check_assumptions(self, where, order, verdict, declared, report):
        """The verdict's assumptions claim no more than the authority's signed declarations allow
        (allowed_assumptions); without a signed inventory none reads held."""
        stated = verdict.get("assumptions", [])
        if [a.get("name") for a in stated] != list(ASSUMPTIONS):
            fail(f"{where}: the verdict's assumptions are {[a.get('name') for a in stated]}, want {list(ASSUMPTIONS)}")
        allowed = allowed_assumptions(order, declared[0], declared[1], report) if declared else {}
        for a in stated:
            if a.get("held") and not allowed.get(a["name"], False):
                fail(f"{where}: assumption {a['name']} reads held, which " +
                     ("the authority's signed declarations do not support" if declared else
                      "no assumption may without an inventory the delegation names"))

    def check_bound(self, where, order, verdict, sequence, inventory_signed):
        """The final verdict's bound, recomputed from the delegated order (open_order) as `ledger audit` does: its devices
        are the order's plan (selector, planned bytes, capacity, reserve) and its confidences the profile's;
        deadlineRuleSatisfied and boundStated are what the order gives (bound.h's conditions: a pass, a calibrated
        profile that names the pinned authority's signature, safety >= 1.5, the deadline rule, the honest round
        margin); a stated bound is the closed form over the order's plan and the verdict's chunksChecked (for a
        pass, check_pass confirmed them from the rounds) within bound_slack, and the statement is verdict.cc's words
        for it; with none stated every bound field is 0 and the statement is the first unmet condition's words."""
        what = f"{where}: verdict (ledger entry {sequence})"
        devices = order["devices"]
        stated = verdict.get("devices", [])
        if len(stated) != len(devices):
            fail(f"{what}: lists {len(stated)} devices, the order plans {len(devices)}")
        profile = order.get("profile", {})
        confidence = float(profile.get("confidence", 0))
        if float(verdict.get("confidence", 0)) != confidence:
            fail(f"{what}: its confidence {verdict.get('confidence', 0)} is not the order's profile's {confidence}")
        per_device = 1.0 - (1.0 - confidence) / float(max(1, len(devices)))
        for plan, got in zip(devices, stated):
            if got.get("selector", "") != plan["selector"] or \
                    int(got.get("plannedBytes", "0")) != 32 * int(plan["labelCount"]) or \
                    int(got.get("capacityBytes", "0")) != int(plan.get("capacityBytes", "0")) or \
                    int(got.get("allowedReserveBytes", "0")) != int(plan.get("allowedReserveBytes", "0")):
                fail(f"{what}: device {plan['selector']}: its plan (selector, planned bytes, capacity, reserve) is not "
                     f"the order's")
            if 32 * int(plan["labelCount"]) > int(plan.get("capacityBytes", "0")):
                fail(f"{what}: device {plan['selector']} plans more bytes than its declared capacity")
            if float(got.get("confidence", 0)) != per_device:
                fail(f"{what}: device {plan['selector']}: confidence {got.get('confidence', 0)}, 1 - (1 - c) / D is "
                     f"{per_device}")
        rule, floor_us = deadline_rule(order)
        if bool(verdict.get("deadlineRuleSatisfied")) != rule:
            fail(f"{what}: deadlineRuleSatisfied is {str(bool(verdict.get('deadlineRuleSatisfied'))).lower()}, the "
                 f"order's round deadline {order.get('roundDeadlineUs', '0')} us against its recompute floor "
                 f"{floor_us:.2f} us says {str(rule).lower()}")
        deadline = float(int(order.get("roundDeadlineUs", "0")))
        p999 = int(profile.get("honestRoundP999Us", "0"))
        conditions = (
            ("a pass", bool(verdict.get("pass"))),
            ("a calibrated profile", bool(profile.get("calibrated"))),
            (f"a profile the delegation lists as signed by the pinned authority key {key_id(self.authority).hex()}",
             data(profile.get("authorityKeyId")) == key_id(self.authority) and
             len(data(profile.get("documentDigest"))) == 32),
            ("an inventory the delegation names (the declared capacities and reserves)", inventory_signed),
            (f"a safety factor >= {STATED_SAFETY_MINIMUM:g}",
             float(profile.get("safetyFactor", 0)) >= STATED_SAFETY_MINIMUM),
            ("the deadline rule", rule),
            (f"a round deadline >= {HONEST_ROUND_MARGIN:g} x the honest p99.9 round time",
             p999 > 0 and deadline >= HONEST_ROUND_MARGIN * float(p999)))
        unmet = [name for name, held in conditions if not held]
        # The statement's words for each reason, as verdict.cc SummarizeVerdict writes them.
        name, klass = profile.get("name", ""), profile.get("adversaryClass", "")
        reasons = {
            "a pass": f"session failed ({(verdict.get('failure') or {}).get('reason', 'none')})",
            "a calibrated profile": f"parameters not calibrated (profile {name})",
            conditions[2][0]: f"profile {name} is not signed by the authority (the order names no authority signature "
                              f"of its profile)",
            conditions[3][0]: "the authority's delegation names no inventory (delegate --inventory): the declared "
                              "capacities and reserves the bound counts are not the authority's word",
            conditions[4][0]: f"safety factor {'%g' % float(profile.get('safetyFactor', 0))} of class {klass} is below "
                              f"{'%g' % STATED_SAFETY_MINIMUM}",
            "the deadline rule": f"deadline rule not met for class {klass} (round deadline "
                                 f"{int(order.get('roundDeadlineUs', '0'))} us > recompute floor "
                                 f"{('%.2f' % floor_us).rstrip('0').rstrip('.')} us for class {klass})",
            conditions[6][0]: (f"honest round time not measured (profile {name} has no honest_round_p999_us)"
                               if p999 == 0 else
                               f"round deadline {int(order.get('roundDeadlineUs', '0'))} us is not at least "
                               f"{'%g' % HONEST_ROUND_MARGIN} x the honest p99.9 round time {p999} us (profile "
                               f"{name}): honest nodes would fail rounds")}
        if bool(verdict.get("boundStated")) != (not unmet):
            fail(f"{what}: boundStated is {str(bool(verdict.get('boundStated'))).lower()}, recomputed from the order: "
                 + ("true (every condition holds)" if not unmet else f"false (it needs {unmet[0]})"))
        total = int(verdict.get("totalUnwipedBoundBytes", "0"))
        if unmet:
            # Why none is stated: the first condition unmet, in verdict.cc's words.
            if verdict.get("statement", "") != "no bound: " + reasons[unmet[0]]:
                fail(f"{what}: it states no bound, yet its statement is not the reason why: "
                     f"{verdict.get('statement', '')!r}, want {'no bound: ' + reasons[unmet[0]]!r}")
            if total or any(int(d.get("unwipedBoundBytes", "0")) for d in stated):
                fail(f"{what}: it states no bound, yet totalUnwipedBoundBytes is {total} and the devices' "
                     f"unwipedBoundBytes {[int(d.get('unwipedBoundBytes', '0')) for d in stated]}: both must be 0")
            return False
        inputs = [(int(plan.get("capacityBytes", "0")), 32 * int(plan["labelCount"]),
                   int(got.get("chunksChecked", "0"))) for plan, got in zip(devices, stated)]
        bound, slack = recomputed_bound(what, "a device", inputs, confidence, "totalUnwipedBoundBytes", total,
                                        "from the order's plan and the chunks the rounds checked")
        for plan, got, want in zip(devices, stated, device_diagnostics(inputs, confidence)):
            if abs(int(got.get("unwipedBoundBytes", "0")) - want) > 1:
                fail(f"{what}: device {plan['selector']}: the diagnostic unwipedBoundBytes is "
                     f"{got.get('unwipedBoundBytes', '0')}, recomputed: {want}")
        # The statement's words, from the order and the verdict's own (checked) figures, as verdict.cc
        # BoundStatement writes them.
        planned = sum(32 * int(plan["labelCount"]) for plan in devices)
        outside = sum(int(plan.get("capacityBytes", "0")) - 32 * int(plan["labelCount"]) for plan in devices)
        want = (f"at {'%.6g' % (confidence * 100)}% confidence at most {total} bytes of node {order['nodeName']}'s "
                f"planned memory (devices {', '.join(plan['selector'] for plan in devices)}, taken together) were not "
                f"wiped: up to {total - min(total, outside)} of its {planned} planned bytes, plus all {outside} bytes "
                f"of allowed reserves and sub-chunk remainders. Per device (diagnostic only: it assumes no label "
                f"moved to another device, which a prover can do; at {'%.6g' % (per_device * 100)}% each): "
                + ", ".join(f"{plan['selector']} {int(got.get('unwipedBoundBytes', '0'))} bytes"
                            for plan, got in zip(devices, stated)))
        if verdict.get("statement", "") != want:
            fail(f"{what}: its statement is not the one its figures make: {verdict.get('statement', '')!r}, "
                 f"want {want!r}")
        self.say(f"{where}: bound: the stated {total} bytes recomputed from the order's plan and the "
                 f"{sum(n for _, _, n in inputs)} chunks the rounds checked: {bound['total']} bytes"
                 + ("" if total == bound["total"] else f" (within the {slack} byte(s) of padding bound.h allows)"))
        return True

    def check_compute(self, where, order, verdict, sequence, rounds, bound_stated, declared):
        """The verdict's compute statement (challenger/session/compute_statement.h), when it has one (older verdicts
        make no compute claim): stated exactly when the session passed, the bound is stated and the signed inventory
        declares the node's label rates and its isolation or ingress; a stated one's figures and words recomputed
        from the order, the bound, the inventory and the round log (the interval ends at the last proof round's
        answer)."""
        what = f"{where}: verdict (ledger entry {sequence})"
        claim = verdict.get("compute")
        if claim is None:
            return
        devices = order["devices"]
        proof_shape = [int(d.get("labelsPerRound", 0)) for d in devices]
        interval = 0
        for timing, exchange, _ in rounds:
            parts = exchange["round"].get("devices", [])
            sizes = [0] * len(devices)
            for part in parts:
                if part.get("deviceIndex", 0) < len(devices):
                    sizes[part.get("deviceIndex", 0)] += len(part.get("labelIndices", []))
            if len(parts) == len(devices) and sizes == proof_shape:
                interval = max(interval, int(timing.get("sentAfterOrderUs", "0")) + int(timing["elapsedUs"]))
        none = "no compute statement: "
        if not verdict.get("pass"):
            want = (False, none + "the session failed")
        elif not bound_stated:
            want = (False, f"{none}it rests on the bound, and none is stated ({verdict.get('statement', '')})")
        else:  # check_bound states a bound only with the inventory the delegation names: `declared` is there
            node, inventory = declared
            rate, problem = node_label_rate(node, inventory)
            want = compute_statement(order["nodeName"], int(order.get("chunkLabels", 0)), order.get("format",
                                     "posedbBlake3C1"), float(order.get("profile", {}).get("confidence", 0)),
                                     int(verdict.get("totalUnwipedBoundBytes", "0")),
                                     [(int(d.get("capacityBytes", "0")), int(d["labelCount"])) for d in devices],
                                     rate, problem, bool(node.get("network_isolated_during_wipe")),
                                     int(node.get("ingress_bytes_per_s", 0)), interval)
        if bool(claim.get("stated")) != want[0]:
            fail(f"{what}: compute stated is {str(bool(claim.get('stated'))).lower()}, recomputed from the order, the "
                 f"bound, the signed inventory and the round log: {str(want[0]).lower()}")
        if not want[0]:
            # An unstated statement's figures claim nothing; its words must still be the reason why, exactly.
            if claim.get("statement", "") != want[-1]:
                fail(f"{what}: it states no compute, yet its words are not the reason why: "
                     f"{claim.get('statement', '')!r}, want {want[-1]!r}")
            return
        _, held, ingress, work, min_us, statement = want
        stated = (int(claim.get("heldLabels", "0")), int(claim.get("ingressLabels", "0")),
                  int(claim.get("workCompressions", "0")), int(claim.get("minComputeUs", "0")),
                  int(claim.get("intervalUs", "0")), float(claim.get("rateCompressionsPerS", 0)))
        if stated != (held, ingress, work, min_us, interval, rate) or claim.get("statement", "") != statement:
            fail(f"{what}: its compute statement is not the one the records make: heldLabels, ingressLabels, "
                 f"workCompressions, minComputeUs, intervalUs, rate {stated} and {claim.get('statement', '')!r}, "
                 f"want {(held, ingress, work, min_us, interval, rate)} and {statement!r}")
        self.say(f"{where}: compute: at least {work} compressions, {min_us} us of the node's compute in {interval} us")

    def check_occupancy(self, where, order, verdict, sequence, rounds, bound_stated):
        """The verdict's occupancy statement (challenger/session/occupancy_bound.h), as `ledger audit` recomputes it:
        present exactly when the order asks a window and the proof rounds passed; it opens at the last proof round's
        answer; the rounds after that one sent before its end are occupancy rounds (every device at its
        occupancyLabels) and their count, answered right and in time, is `rounds`; unprotectedUs (the challenger's
        measurement) is at least their time in flight and at most the window; detection is d(b) and shortUs is
        T* + U, both recomputed from the order; it is stated only with the bound and T* + U
        below the length the window ran (one closed before its order's length says so in its words)."""
        what = f"{where}: verdict (ledger entry {sequence})"
        window = int(order.get("occupancyWindowUs", "0"))
        occupancy = verdict.get("occupancy")
        if occupancy is None:
            if window and verdict.get("pass"):
                fail(f"{what}: passed without the occupancy statement its order's window asks for")
            return
        if not window:
            fail(f"{what}: states an occupancy window its order did not ask for")
        devices = order["devices"]
        start = int(occupancy.get("windowStartAfterOrderUs", "0"))
        end = int(occupancy.get("windowEndAfterOrderUs", "0"))
        if end < start:
            fail(f"{what}: its occupancy window ends before it starts")

        def shape(exchange):
            sizes = [0] * len(devices)
            for part in exchange["round"].get("devices", []):
                index = part.get("deviceIndex", 0)
                if index < len(devices):
                    sizes[index] += len(part.get("labelIndices", []))
            return sizes

        proof_shape = [int(d.get("labelsPerRound", 0)) for d in devices]
        occupancy_shape = [int(d.get("occupancyLabels", 0)) for d in devices]
        last = max((i for i, (_, exchange, _) in enumerate(rounds) if shape(exchange) == proof_shape), default=None)
        if last is None or int(rounds[last][0].get("sentAfterOrderUs", "0")) + int(rounds[last][0]["elapsedUs"]) != start:
            fail(f"{what}: its occupancy window does not open at the last proof round's answer")
        deadline = int(order.get("roundDeadlineUs", "0"))
        count = in_flight = 0
        for timing, exchange, _ in rounds[last + 1:]:
            if int(timing.get("sentAfterOrderUs", "0")) >= end:
                break
            if shape(exchange) != occupancy_shape or len(exchange["round"].get("devices", [])) != len(devices):
                fail(f"{what}: round {timing.get('roundIndex', 0)}, sent inside the occupancy window, is not an "
                     f"occupancy round (every device at its occupancyLabels)")
            count += bool(timing.get("allCorrect")) and "answer" in exchange and int(timing["elapsedUs"]) <= deadline
            in_flight += min(int(timing["elapsedUs"]), end - int(timing.get("sentAfterOrderUs", "0")))
        if int(occupancy.get("rounds", 0)) != count:
            fail(f"{what}: occupancy rounds {occupancy.get('rounds', 0)}, the round log shows {count} answered right "
                 f"and in time inside the window")
        unprotected = int(occupancy.get("unprotectedUs", "0"))
        if not in_flight <= unprotected <= end - start:
            fail(f"{what}: occupancy unprotectedUs {unprotected} is not in [the occupancy rounds' time in flight "
                 f"{in_flight} us, the window's length]")
        mean_gap = int(order.get("occupancyMeanGapUs", "0"))
        expected = float(end - start - unprotected) / float(max(1, mean_gap))
        if occupancy_rounds_log_lower_tail(count, expected) < math.log(OCCUPANCY_ROUNDS_IMPLAUSIBLE):
            fail(f"{what}: its occupancy window shows {count} rounds where its gaps' running time asks about "
                 f"{int(expected)}: fewer has a chance below 1e-9 (a window stretched, or rounds left out)")
        longest = window + int(order.get("roundDeadlineUs", "0")) + OCCUPANCY_OVERRUN_SLACK_US
        if end - start > longest:
            fail(f"{what}: its occupancy window ran {end - start} us, longer than its order's {window} us allow (with "
                 f"a round deadline and {OCCUPANCY_OVERRUN_SLACK_US} us of the timer's slack: {longest} us)")
        confidence = float(order.get("profile", {}).get("confidence", 0))
        detection = occupancy_detection([(32 * int(d["labelCount"]), int(d.get("occupancyLabels", 0))) for d in devices],
                                        int(order.get("occupancyShortfallBytes", "0")))
        stated_detection = float(occupancy.get("detection", 0))
        if abs(stated_detection - detection) > 1e-12 * max(1.0, detection):
            fail(f"{what}: occupancy detection {stated_detection}, d(b) recomputed from the order: {detection}")
        short = occupancy_short_us(detection, confidence, int(order.get("occupancyMeanGapUs", "0")), unprotected)
        stated_short = int(occupancy.get("shortUs", "0"))
        if abs(stated_short - short) > 1 + short * 1e-9:
            fail(f"{what}: occupancy shortUs {stated_short}, T* + U recomputed: {short}")
        length = end - start
        stated = bool(verdict.get("pass")) and bound_stated and short < length
        if bool(occupancy.get("stated")) != stated:
            fail(f"{what}: occupancy stated is {str(bool(occupancy.get('stated'))).lower()}, recomputed: "
                 f"{str(stated).lower()}")

        def seconds(us):
            return "%.6g s" % (us / 1e6)

        # The statement's words, from the order and the verdict's own (checked) figures, as verdict.cc writes them.
        none = "no occupancy statement: "
        if not verdict.get("pass"):
            want = f"{none}session failed ({(verdict.get('failure') or {}).get('reason', 'none')})"
        elif not bound_stated:
            want = (f"{none}no bound is stated, and the occupancy statement needs the same conditions "
                    f"({verdict.get('statement', '')})")
        elif not stated:
            want = (f"{none}T* + U = {seconds(stated_short)} is not below the window's {seconds(length)}: shorten the "
                    f"mean gap or ask more labels per round")
        if stated:
            outside = sum(int(d.get("capacityBytes", "0")) - 32 * int(d["labelCount"]) for d in devices)
            shortfall = int(order.get("occupancyShortfallBytes", "0"))
            want = (f"at {'%.6g' % (confidence * 100)}% confidence node {order['nodeName']}'s planned memory lacked "
                    f"labels in more than {outside + shortfall} bytes (b = {shortfall} of its planned bytes plus all "
                    f"{outside} bytes of allowed reserves and sub-chunk remainders) for at most {seconds(stated_short)} "
                    f"of its {seconds(length)} occupancy window"
                    + (f" (closed by the challenger before the {seconds(window)} its order allowed: at its wave's next "
                       f"run, or with its pool of rounds used up)" if length < window else "")
                    + f" ({count} occupancy rounds, all answered in time, at a "
                    f"mean gap of {seconds(mean_gap)}, each detecting such a shortfall with probability at least "
                    f"{'%g' % stated_detection}; {seconds(unprotected)} of the window unprotected: rounds in flight "
                    f"and the challenger's own delays, counted in full)")
        if occupancy.get("statement", "") != want:
            fail(f"{what}: its occupancy statement is not the one its figures make: "
                 f"{occupancy.get('statement', '')!r}, want {want!r}")
        self.say(f"{where}: occupancy: {count} rounds in a window of {length} us, d(b) {detection:.6g}, "
                 f"T* + U {short} us: " + ("stated" if stated else "nothing stated"))

    @staticmethod
    def wave_no_bound_reason(members):
        """Why a complete wave states no bound, in verdict.cc SummarizeWaveBound's words and order (members in the
        wave verdict's order); None when its members allow one."""
        if not members:
            return "no members"
        for v in members:
            if not v.get("pass"):
                return f"node {v.get('nodeName', '')} failed"
        confidence = float(members[0].get("confidence", 0))
        for v in members:
            if not v.get("boundStated"):
                return f"node {v.get('nodeName', '')} states no bound"
            c = float(v.get("confidence", 0))
            if c != confidence or not 0 < c < 1:
                return "its members' verdicts are at different confidences"
            if any(int(d.get("plannedBytes", "0")) > int(d.get("capacityBytes", "0")) for d in v.get("devices", [])):
                return f"node {v.get('nodeName', '')} has a device planned beyond its capacity"
        return None

    def check_wave_bound(self, where, wave, members):
        """A wave verdict's bound: with one stated, a complete wave whose members all passed stating bounds at the
        wave's confidence, and the closed form over every member's devices (as the member sessions confirmed
        them) within bound_slack, in verdict.cc's words; with none, unwipedBoundBytes 0 and, for a complete wave,
        its members' reason in verdict.cc's words."""
        stated = int(wave.get("unwipedBoundBytes", "0"))
        if not wave.get("boundStated"):
            if stated:
                fail(f"{where}: it states no bound, yet unwipedBoundBytes is {stated}: it must be 0")
            # Its confidence is the first member's once the wave is complete and has members, else 0 (verdict.cc
            # SummarizeWaveBound), as the C++ audit rechecks it.
            want_confidence = float(members[0].get("confidence", 0)) if wave.get("complete") and members else 0.0
            if float(wave.get("confidence", 0)) != want_confidence:
                fail(f"{where}: it states no bound at confidence {wave.get('confidence', 0)}, its members give "
                     f"{want_confidence}")
            if wave.get("complete"):
                # A complete wave's reason is its members' (verdict.cc SummarizeWaveBound), word for word; an
                # incomplete one's may name a node without a verdict, which no member shows (its prefix is checked
                # with the wave's completeness).
                reason = self.wave_no_bound_reason(members)
                if reason is None:
                    fail(f"{where}: it states no bound, yet it is complete and every member passed stating a bound "
                         f"at one confidence: it must state the bound")
                want = f"no bound for wave {wave.get('waveName', '')}: {reason}"
                if wave.get("statement", "") != want:
                    fail(f"{where}: its statement is not the reason its members give: "
                         f"{wave.get('statement', '')!r}, want {want!r}")
            return
        confidence = float(wave.get("confidence", 0))
        if not wave.get("complete") or not members or not 0 < confidence < 1 or \
                not all(v.get("pass") and v.get("boundStated") and float(v.get("confidence", 0)) == confidence
                        for v in members):
            fail(f"{where}: it states a bound, which needs a complete wave whose every member passed and states a "
                 f"bound at the wave's confidence")
        inputs = [(int(d.get("capacityBytes", "0")), int(d.get("plannedBytes", "0")), int(d.get("chunksChecked", "0")))
                  for v in members for d in v.get("devices", [])]
        bound, _ = recomputed_bound(where, "a member's device", inputs, confidence, "unwipedBoundBytes", stated,
                                        "over its members' devices")
        # The statement's words, from the members and the wave verdict's own (checked) figure, as verdict.cc
        # SummarizeWaveBound writes them.
        planned = sum(planned for _, planned, _ in inputs)
        outside = sum(capacity - planned for capacity, planned, _ in inputs)
        want = (f"at {'%.6g' % (confidence * 100)}% confidence at most {stated} bytes of wave {wave.get('waveName', '')}'s "
                f"planned memory ({len(members)} node(s): {', '.join(v.get('nodeName', '') for v in members)}; "
                f"{len(inputs)} devices, taken together) were not wiped: up to {stated - min(stated, outside)} of its "
                f"{planned} planned bytes, plus all {outside} bytes of allowed reserves and sub-chunk remainders")
        if wave.get("statement", "") != want:
            fail(f"{where}: its statement is not the one its figures make: {wave.get('statement', '')!r}, "
                 f"want {want!r}")
        self.say(f"{where}: bound: the stated {stated} bytes recomputed over its {len(inputs)} member device(s): "
                 f"{bound['total']} bytes")

# ------------------------------------------------------------------------------------------------
# Certificates (docs/certificate.md; `wipeproof-challenger ledger certificate`): one session's or one wave's
# signed records and what they say. The certificate must be the canonical text of its content, its evidence (an
# export of the subject's entries, each with its signed envelope) must pass every check above, each entry
# verified on its own (a filtered export has no whole chain to re-verify), and every field of it, the evidence
# included, must be what this recipe recomputes from the records that verified: so any byte changed fails.

CERTIFICATE_FORMAT = "wipeproof-certificate/v1"
EXPORT_FORMAT = "wipeproof-ledger-export/v1"
EXPORT_SCHEMA_FILE = "proto/wipe.capnp"
EXPORT_CHAIN_RULE = ("entry n is an Envelope of kind ledgerEntry signed by the challenger key; its "
                     "LedgerEntry.prevEntryDigest is BLAKE2b-256 of entry n-1's Envelope bytes (canonical "
                     "Cap'n Proto), 32 zero bytes for entry 0")
# The Verdict fields a certificate's summary names (wipe.capnp Verdict @0-@20); any other is listed as "further".
NAMED_VERDICT_FIELDS = frozenset((
    "sessionId", "nodeName", "pass", "failure", "fillMicros", "fillDeadlineUs", "rounds", "roundDeadlineUs", "devices",
    "confidence", "profile", "deadlineRuleSatisfied", "boundStated", "totalUnwipedBoundBytes", "statement",
    "assumptions", "orderDigest", "reportDigest", "issuedAtUnixUs", "orderSentAtUnixUs", "occupancy"))


def canonical_text(value):
    """The one text a certificate's content may be written as (challenger/audit/certificate_text.h): keys sorted,
    2-space indent, everything outside printable ASCII escaped, one final newline."""
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=True) + "\n"


def float_text(x):
    """A Float64 as a certificate writes it: C's %.17g, which reads back as exactly the same double."""
    return "nan" if x != x else "%.17g" % x


def floats_as_text(value):
    if isinstance(value, float):
        return float_text(value)
    if isinstance(value, dict):
        return {k: floats_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [floats_as_text(v) for v in value]
    return value


def format_unix_micros_utc(us):
    """Unix microseconds as the challenger writes them (common/clock.h FormatUnixMicrosUtc): proleptic Gregorian,
    UTC, 'YYYY-MM-DDTHH:MM:SS.uuuuuuZ', for any 64-bit value (days to a civil date by H. Hinnant's algorithm)."""
    seconds, micros = divmod(us, 1_000_000)
    days, rest = divmod(seconds, 86_400)
    hour, rest = divmod(rest, 3_600)
    minute, second = divmod(rest, 60)
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1_460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (month <= 2)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ" % (year, month, day, hour, minute, second, micros)


def first_text_difference(given, want):
    """Where two texts first differ: 'byte N (line L, column C)'."""
    at = next((i for i, (a, b) in enumerate(zip(given, want)) if a != b), min(len(given), len(want)))
    line = given.count("\n", 0, at) + 1
    return f"byte {at} (line {line}, column {at - (given.rfind(chr(10), 0, at) + 1) + 1})"


def first_json_difference(given, want, path=""):
    """Where `given` first differs from `want` (types too), in sorted key order; None when equal."""
    where = path or "the document"

    def shown(value):
        text = json.dumps(value, ensure_ascii=True)
        return text if len(text) <= 120 else text[:100] + f"... ({len(text)} characters)"
    if type(given) is not type(want):
        return f"{where} is {shown(given)}, recomputed: {shown(want)}"
    if isinstance(want, dict):
        for key in sorted(want):
            child = f"{path}.{key}" if path else key
            if key not in given:
                return f"{child} is missing"
            found = first_json_difference(given[key], want[key], child)
            if found:
                return found
        extra = sorted(set(given) - set(want))
        return f"{path + '.' if path else ''}{extra[0]} is not expected" if extra else None
    if isinstance(want, list):
        for i, (a, b) in enumerate(zip(given, want)):
            found = first_json_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None if len(given) == len(want) else f"{where} lists {len(given)} items, recomputed: {len(want)}"
    return None if given == want else f"{where} is {shown(given)}, recomputed: {shown(want)}"


class CertificateRecipe(Recipe):
    """The recipe on a certificate's evidence: every check of Recipe, each entry verified on its own against its
    envelope, then the whole certificate recomputed from what verified (certificate())."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.decoded = {}  # (bytes, type) -> capnp JSON: each record is decoded once

    def decode(self, data_bytes, type_name):
        key = (bytes(data_bytes), type_name)
        if key not in self.decoded:
            self.decoded[key] = self.schema.decode(data_bytes, type_name)
        return self.decoded[key]

    def payload(self, record, type_name):
        """A record's envelope payload decoded as `type_name` (its signature checked elsewhere) and the payload."""
        envelope = self.decode(record, "Envelope")
        payload = data(envelope.get("payload"))
        return self.decode(payload, type_name), payload, envelope

    def run(self):
        doc = self.document
        if not isinstance(doc, dict):
            fail("the certificate's evidence is not an object")
        if doc.get("format") != EXPORT_FORMAT:
            fail(f"the certificate's evidence is not a {EXPORT_FORMAT} document")
        if doc.get("schema_sha256") != self.schema.sha256:
            fail(f"the evidence was written with the schema of SHA-256 {doc.get('schema_sha256')}, "
                 f"{self.schema.path} has {self.schema.sha256}: decode with the schema it names")
        if doc.get("challenger_key_id") != key_id(self.challenger).hex():
            fail(f"the evidence is of challenger key {doc.get('challenger_key_id')}, "
                 f"not the pinned {key_id(self.challenger).hex()}")
        if doc.get("authority_public_key") != self.authority.hex():
            fail("the evidence lists another authority key than the pinned one")
        self.inventories = {}
        for i, listed in enumerate(doc.get("documents", [])):
            if not isinstance(listed, dict) or \
                    not all(isinstance(listed.get(f), str) for f in ("kind", "digest", "text")):
                fail(f"the evidence's document {i} is not an object with text fields kind, digest and text")
            try:
                text_bytes = listed["text"].encode()
            except UnicodeEncodeError:
                fail(f"the evidence's document {i} holds text that is not valid Unicode")
            if blake2b256(text_bytes).hex() != listed["digest"]:
                fail(f"the evidence's document {listed['digest']} is not the digest of its text")
            if listed["kind"] == "inventory":
                self.inventories[listed["digest"]] = listed["text"]
        self.nodes = {}
        self.node_keys = []
        for node in doc.get("nodes", []):
            public_key = bytes.fromhex(node["public_key"])
            if len(public_key) != 32 or node.get("key_id") != key_id(public_key).hex():
                fail(f"the evidence's key of node {node.get('name')} is not a key of the id it lists")
            self.nodes[key_id(public_key)] = (node["name"], public_key)
            self.node_keys.append((node["name"], public_key))
        self.say(f"schema: {self.schema.path} sha256 {self.schema.sha256} (the evidence's)")
        self.say(f"labels: {self.sample.describe()}; sample seed {self.sample_seed}; BLAKE3 in pure Python, "
                 f"{self.jobs} process(es)")
        self.entries = self.check_entries()
        self.sessions = {}
        self.waves = []
        for entry in self.entries:
            if not entry["session"]:
                self.waves.append(entry)
            else:
                self.sessions.setdefault(entry["session"], []).append(entry)
        self.wave_claims = {}
        self.first_pass = {}
        for session, records in self.sessions.items():
            self.check_session(session, records)
        listed = {}
        for entry in self.waves:
            self.check_wave(entry, self.sessions, listed)
        self.check_wave_claims(listed)

    def check_entries(self):
        """The signed head, and every entry on its own: a ledgerEntry envelope signed by the challenger, in ledger
        order up to the head (the head's own entry its envelope), each one the filter admits (session_filter: that
        session's; wave_filter: the wave verdict of its entry and its member sessions'). Not the chain: the entries
        are not shown to be the whole ledger."""
        doc = self.document
        head = doc.get("head")
        if not isinstance(head, dict) or not isinstance(head.get("envelope"), str):
            fail("the evidence has no signed head")
        head_envelope = bytes.fromhex(head["envelope"])
        signed = self.decode(
            open_envelope(self.schema, head_envelope, "ledgerEntry", self.challenger, "the signed head"), "LedgerEntry")
        self.head = (int(signed.get("sequence", "0")), head_envelope, int(signed.get("recordedAtUnixUs", "0")))
        session_filter, wave_filter = doc.get("session_filter"), doc.get("wave_filter")
        if (session_filter is None) == (wave_filter is None):
            fail("the evidence is filtered by neither one session nor one wave")
        if wave_filter is not None and (not isinstance(wave_filter, dict) or
                                        not isinstance(wave_filter.get("session_ids"), list)):
            fail("the evidence's wave_filter is not an object with a list of session_ids")
        out, previous = [], None
        for i, exported in enumerate(doc.get("entries", [])):
            if not isinstance(exported, dict) or not isinstance(exported.get("envelope"), str):
                fail(f"evidence entry {i}: no signed envelope")
            envelope_bytes = bytes.fromhex(exported["envelope"])
            what = f"ledger entry {exported.get('sequence')}"
            entry = self.decode(open_envelope(self.schema, envelope_bytes, "ledgerEntry", self.challenger, what),
                                "LedgerEntry")
            n = int(entry.get("sequence", "0"))
            if n > self.head[0] or (previous is not None and n <= previous):
                fail(f"{what}: sequence {n} is out of order or beyond the signed head's {self.head[0]}")
            if n == self.head[0] and envelope_bytes != head_envelope:
                fail(f"{what}: it is not the signed head's entry")
            session, kind = data(entry.get("sessionId")).hex(), entry.get("kind")
            admitted = session == session_filter if session_filter is not None else \
                session in wave_filter["session_ids"] or \
                (not session and kind == "waveVerdict" and n == wave_filter.get("sequence"))
            if not admitted:
                fail(f"ledger entry {n} is not of the filtered {'session' if session_filter is not None else 'wave'}")
            out.append({"sequence": n, "kind": kind, "record": data(entry.get("record")), "session": session,
                        "envelope": envelope_bytes, "prev": data(entry.get("prevEntryDigest")),
                        "recorded": int(entry.get("recordedAtUnixUs", "0"))})
            previous = n
        self.say(f"evidence: {len(out)} entries, each signed by challenger key {key_id(self.challenger).hex()} and "
                 f"checked on its own (not shown to be the whole ledger); signed head: ledger entry {self.head[0]}")
        return out

    def summary(self, kind, record):
        """An exported entry's "summary" (challenger/ledger/ledger_records.h SummarizeLedgerRecord)."""
        if kind == "roundLog":
            log = self.decode(record, "RoundLog")
            rounds = log.get("rounds", [])
            return {"rounds": len(rounds), "max_elapsed_us": max([int(r.get("elapsedUs", "0")) for r in rounds] or [0]),
                    "deadlines_met": all(r.get("deadlineMet", False) for r in rounds),
                    "all_correct": all(r.get("allCorrect", False) for r in rounds)}
        types = {"order": "WipeOrder", "fillReport": "FillReport", "deviceFillNotice": "DeviceFillNotice",
                 "waveVerdict": "WaveVerdict", "transcript": "TranscriptDigest", "verdict": "Verdict",
                 "receipt": "Receipt"}
        m, payload, envelope = self.payload(record, types[kind])
        if kind == "order":
            out = {"node": m.get("nodeName", ""), "format": m.get("format", "posedbBlake3C1"),
                   "chunk_labels": int(m.get("chunkLabels", 0)), "devices": len(m.get("devices", [])),
                   "round_deadline_us": int(m.get("roundDeadlineUs", "0")),
                   "fill_deadline_us": int(m.get("fillDeadlineUs", "0")),
                   "profile": m.get("profile", {}).get("name", ""), "wave": m.get("waveName", "")}
        elif kind == "fillReport":
            out = {"devices": len(m.get("devices", [])),
                   "bytes_held": sum(int(d.get("bytesHeld", "0")) for d in m.get("devices", [])) % (1 << 64),
                   "fill_micros": int(m.get("fillMicros", "0"))}
        elif kind == "verdict":
            out = {"node": m.get("nodeName", ""), "pass": bool(m.get("pass", False)),
                   "failure": failure_reason(m), "bound_stated": bool(m.get("boundStated", False)),
                   "statement": m.get("statement", "")}
        elif kind == "deviceFillNotice":
            fill = m.get("fill", {})
            out = {"device_index": int(m.get("deviceIndex", 0)), "selector": fill.get("selector", ""),
                   "bytes_held": int(fill.get("bytesHeld", "0")), "fill_micros": int(fill.get("fillMicros", "0"))}
        elif kind == "waveVerdict":
            out = {"wave": m.get("waveName", ""), "members": len(m.get("sessionIds", [])),
                   "pass": bool(m.get("pass", False)), "complete": bool(m.get("complete", False)),
                   "bound_stated": bool(m.get("boundStated", False)), "statement": m.get("statement", "")}
        elif kind == "transcript":
            out = {"round_count": int(m.get("roundCount", 0)), "digest": data(m.get("digest")).hex()}
        else:
            out = {"node": m.get("nodeName", ""), "pass": bool(m.get("pass", False)),
                   "ledger_sequence": int(m.get("ledgerSequence", "0")),
                   "verdict_digest": data(m.get("verdictDigest")).hex()}
        out["payload_digest"] = blake2b256(payload).hex()
        out["signer_key_id"] = data(envelope.get("signerKeyId")).hex()
        return out

    def session_json(self, records):
        """A session's summary (challenger/audit/certificate_summary.h CertificateSessionJson)."""
        verdicts = [r for r in records if r["kind"] == "verdict"]
        if not verdicts:
            fail(f"session {records[0]['session']} has no verdict: it states nothing to certify")
        order = self.payload(records[0]["record"], "WipeOrder")[0]
        v = self.payload(verdicts[-1]["record"], "Verdict")[0]
        sent, fill = int(v.get("orderSentAtUnixUs", "0")), int(v.get("fillMicros", "0"))

        def at(offset):
            return sent + offset if 0 < sent < TIME_LIMIT_US and offset < TIME_LIMIT_US else None

        def put_time(out, name, when):
            out[name + "_unix_us"] = when
            out[name] = None if when is None else format_unix_micros_utc(when)
            return out
        times = {}
        put_time(times, "order_issued_at", int(order.get("issuedAtUnixUs", "0")))
        put_time(times, "order_sent_at", sent)
        times["fill_us"] = fill
        put_time(times, "fill_ended_at", at(fill) if fill else None)
        times["fill_deadline_us"] = int(v.get("fillDeadlineUs", "0"))
        times["round_deadline_us"] = int(v.get("roundDeadlineUs", "0"))
        times["rounds"] = len(v.get("rounds", []))
        occupancy = v.get("occupancy")
        if occupancy is not None:
            start = int(occupancy.get("windowStartAfterOrderUs", "0"))
            end = int(occupancy.get("windowEndAfterOrderUs", "0"))
            window = {"start_after_order_us": start, "end_after_order_us": end}
            put_time(window, "start_at", at(start))
            put_time(window, "end_at", at(end))
            times["occupancy_window"] = window
        else:
            times["occupancy_window"] = None
        put_time(times, "verdict_issued_at", int(v.get("issuedAtUnixUs", "0")))
        times["verdict_entry"] = verdicts[-1]["sequence"]
        put_time(times, "verdict_recorded_at", verdicts[-1]["recorded"])
        profile = v.get("profile", {})
        inventory = named_inventory(self.schema, order)
        return {
            "session_id": records[0]["session"],
            "node": order.get("nodeName", ""),
            "node_key_id": data(order.get("nodeKeyId")).hex(),
            "devices": [{"selector": d.get("selector", ""), "planned_bytes": int(d.get("plannedBytes", "0")),
                         "capacity_bytes": int(d.get("capacityBytes", "0")),
                         "allowed_reserve_bytes": int(d.get("allowedReserveBytes", "0")),
                         "bytes_held": int(d.get("bytesHeld", "0")), "chunks_checked": int(d.get("chunksChecked", "0")),
                         "filled_after_us": int(d.get("filledAfterUs", "0"))} for d in v.get("devices", [])],
            "times": times,
            "outcome": {"pass": bool(v.get("pass", False)), "failure_reason": failure_reason(v),
                        "failure_text": (v.get("failure") or {}).get("text", ""), "superseded_pass": len(verdicts) > 1},
            "statements": {
                "bound": {"stated": bool(v.get("boundStated", False)), "statement": v.get("statement", ""),
                          "confidence": float_text(float(v.get("confidence", 0))),
                          "total_unwiped_bound_bytes": int(v.get("totalUnwipedBoundBytes", "0")),
                          "deadline_rule_satisfied": bool(v.get("deadlineRuleSatisfied", False))},
                "occupancy": None if occupancy is None else {
                    "window_start_after_order_us": int(occupancy.get("windowStartAfterOrderUs", "0")),
                    "window_end_after_order_us": int(occupancy.get("windowEndAfterOrderUs", "0")),
                    "rounds": int(occupancy.get("rounds", 0)),
                    "detection": float_text(float(occupancy.get("detection", 0))),
                    "short_us": int(occupancy.get("shortUs", "0")), "stated": bool(occupancy.get("stated", False)),
                    "statement": occupancy.get("statement", ""),
                    "unprotected_us": int(occupancy.get("unprotectedUs", "0"))},
                "further": floats_as_text({k: x for k, x in v.items() if k not in NAMED_VERDICT_FIELDS})},
            "profile": {"name": profile.get("name", ""), "calibrated": bool(profile.get("calibrated", False)),
                        "adversary_class": profile.get("adversaryClass", ""),
                        "t_min_ps": int(profile.get("tMinPs", "0")),
                        "safety_factor": float_text(float(profile.get("safetyFactor", 0))),
                        "confidence": float_text(float(profile.get("confidence", 0))),
                        "honest_round_p999_us": int(profile.get("honestRoundP999Us", "0")),
                        "authority_key_id": data(profile.get("authorityKeyId")).hex()},
            "assumptions": [{"name": a.get("name", ""), "held": bool(a.get("held", False)),
                             "detail": a.get("detail", "")} for a in v.get("assumptions", [])],
            "declarations": {"inventory_digest": None if inventory is None else inventory.hex(),
                             "host_memory_in_plan": bool(order.get("hostMemoryInPlan", False)),
                             "wave": order.get("waveName", ""),
                             "wave_complete": bool(order.get("waveComplete", False))},
        }

    def wave_json(self, entry):
        """A wave verdict's summary (certificate_summary.h CertificateWaveJson)."""
        w = self.payload(entry["record"], "WaveVerdict")[0]
        issued = int(w.get("issuedAtUnixUs", "0"))
        return {"name": w.get("waveName", ""), "entry": entry["sequence"], "recorded_at_unix_us": entry["recorded"],
                "recorded_at": format_unix_micros_utc(entry["recorded"]), "issued_at_unix_us": issued,
                "issued_at": format_unix_micros_utc(issued), "pass": bool(w.get("pass", False)),
                "complete": bool(w.get("complete", False)), "bound_stated": bool(w.get("boundStated", False)),
                "unwiped_bound_bytes": int(w.get("unwipedBoundBytes", "0")),
                "confidence": float_text(float(w.get("confidence", 0))), "statement": w.get("statement", ""),
                "members": [{"session_id": data(s).hex(), "node": n, "verdict_digest": data(d).hex()}
                            for s, n, d in zip(w.get("sessionIds", []), w.get("nodeNames", []),
                                               w.get("verdictDigests", []))],
                "order_sent_after_wave_us": [int(x) for x in w.get("orderSentAfterWaveUs", [])]}

    def certificate(self):
        """The whole certificate recomputed from the records that verified (challenger/audit/certificate.h
        CertifyEvidence): the summaries, and the evidence with the pinned keys, the node key each order names (by
        name and key id) and the inventory each delegation names (by digest)."""
        doc = self.document
        if doc.get("session_filter") is not None:
            subject = [doc["session_filter"]]
            if list(self.sessions) != subject or self.waves:
                fail("a session's certificate holds the records of exactly that session")
            wave = None
        else:
            if len(self.waves) != 1:
                fail("a wave's certificate holds one wave verdict")
            wave = self.wave_json(self.waves[0])
            subject = [m["session_id"] for m in wave["members"]]
            if sorted(self.sessions) != sorted(subject):
                fail("a wave's certificate holds the records of exactly its member sessions")
        sessions, nodes, documents = [], [], []
        for session in subject:
            s = self.session_json(self.sessions[session])
            key = next((k for name, k in self.node_keys if name == s["node"] and key_id(k).hex() == s["node_key_id"]),
                       None)
            if key is None:
                fail(f"session {session}: the evidence lists no key of node {s['node']} with key id {s['node_key_id']}")
            nodes.append({"name": s["node"], "key_id": s["node_key_id"], "public_key": key.hex()})
            digest = s["declarations"]["inventory_digest"]
            if digest is not None and all(d["digest"] != digest for d in documents):
                if digest not in self.inventories:
                    fail(f"session {session}: the evidence does not carry inventory {digest}")
                documents.append({"kind": "inventory", "digest": digest, "text": self.inventories[digest]})
            sessions.append(s)
        head_sequence, head_envelope, head_recorded = self.head
        evidence = {
            "format": EXPORT_FORMAT, "challenger_key_id": key_id(self.challenger).hex(),
            "challenger_public_key": self.challenger.hex(), "chain_rule": EXPORT_CHAIN_RULE,
            "schema_file": EXPORT_SCHEMA_FILE, "schema_sha256": self.schema.sha256,
            "authority_key_id": key_id(self.authority).hex(), "authority_public_key": self.authority.hex(),
            "session_filter": subject[0] if wave is None else None,
            "head": {"entry_count": head_sequence + 1, "sequence": head_sequence,
                     "entry_digest": blake2b256(head_envelope).hex(), "recorded_at_unix_us": head_recorded,
                     "recorded_at": format_unix_micros_utc(head_recorded), "envelope": head_envelope.hex()},
            "entries": [{"sequence": e["sequence"], "kind": e["kind"], "session_id": e["session"],
                         "recorded_at_unix_us": e["recorded"], "recorded_at": format_unix_micros_utc(e["recorded"]),
                         "record_bytes": len(e["record"]), "record_digest": blake2b256(e["record"]).hex(),
                         "prev_entry_digest": e["prev"].hex(), "entry_digest": blake2b256(e["envelope"]).hex(),
                         "summary": self.summary(e["kind"], e["record"]), "envelope": e["envelope"].hex()}
                        for e in self.entries]}
        if nodes:
            evidence["nodes"] = nodes
        if documents:
            evidence["documents"] = documents
        if wave is not None:
            evidence["wave_filter"] = {"sequence": wave["entry"], "session_ids": subject}
            failed = [f"{s['node']}: {s['outcome']['failure_reason']}" for s in sessions if not s["outcome"]["pass"]]
            outcome = {"pass": wave["pass"],
                       "result": "pass" if wave["pass"] else "fail" + (f" ({', '.join(failed)})" if failed else "")}
            subject_json = {"kind": "wave", "wave": wave["name"], "wave_verdict_entry": wave["entry"]}
        else:
            o = sessions[0]["outcome"]
            outcome = {"pass": o["pass"], "result": "pass" if o["pass"] else f"fail ({o['failure_reason']})"}
            subject_json = {"kind": "session", "session_id": subject[0]}
        return {"format": CERTIFICATE_FORMAT, "evidence": evidence,
                "certified": {"subject": subject_json, "outcome": outcome, "sessions": sessions, "wave": wave}}


def failure_reason(verdict):
    """A verdict's failure reason as its enumerant's name ('none' on a pass; 'reason(N)' past the schema's)."""
    reason = (verdict.get("failure") or {}).get("reason", "none")
    return f"reason({reason})" if isinstance(reason, int) else reason


def verify_certificate(path, schema, authority, challenger, sample, sample_seed, jobs):
    """A certificate checked on its own: its canonical form, its evidence by every check of the recipe, and every
    byte of it recomputed from the records that verified. Raises AuditFailure naming the first check that failed."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw.startswith(b"\xef\xbb\xbf"):
        fail(f"certificate {path} is not in canonical form (docs/certificate.md): it begins with a byte-order mark "
             f"(U+FEFF, as some editors save UTF-8); a certificate is its canonical text, without one")
    try:
        text = raw.decode("utf-8")
        document = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        fail(f"certificate {path} is not JSON: {error}")
    # What the document is, before how it is written: another kind of document is named as such.
    if not isinstance(document, dict) or not isinstance(document.get("format"), str):
        fail(f"certificate {path}: not a certificate: it has no field 'format' (a certificate's is "
             f"{CERTIFICATE_FORMAT})")
    if document["format"] != CERTIFICATE_FORMAT:
        fail(f"certificate {path}: not a certificate: its format is {document['format'][:64]!r}, not "
             f"{CERTIFICATE_FORMAT}" + (" (a ledger export: give it to the recipe as EXPORT)"
                                        if document["format"] == EXPORT_FORMAT else ""))
    if canonical_text(document) != text:
        fail(f"certificate {path} is not in canonical form (docs/certificate.md), first at "
             f"{first_text_difference(text, canonical_text(document))}")
    recipe = CertificateRecipe(schema, document.get("evidence"), authority, challenger, sample, sample_seed, jobs)
    try:
        recipe.run()
        want = recipe.certificate()
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        fail(f"certificate {path}: its evidence is malformed: {error!r}")
    if canonical_text(want) != text:
        fail(f"certificate {path}: {first_json_difference(document, want)} (from its evidence, the signed records)")
    certified = want["certified"]
    what = f"session {certified['subject']['session_id']}" if certified["subject"]["kind"] == "session" else \
        f"wave {certified['subject']['wave']} (ledger entry {certified['subject']['wave_verdict_entry']})"
    recipe.say(f"certificate {path}: OK: {what}: {certified['outcome']['result']}; every byte of it recomputed from "
               f"its signed records; labels recomputed in {format_seconds(recipe.labels_seconds)}")


def available_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("export", nargs="?", help="the ledger export (wipeproof-challenger ledger export --out=...)")
    parser.add_argument("--schema", help="proto/wipe.capnp, the file whose SHA-256 the export names")
    parser.add_argument("--authority-pub", help="the authority's public key file, pinned")
    parser.add_argument("--challenger-pub", help="the challenger's public key file, pinned")
    parser.add_argument("--labels", default="auto",
                        help="answered labels to recompute per session: 'auto' (default: the least sample with "
                             "--power against --forged-fraction), a count (the statement says what it proves), "
                             "or 'all'")
    parser.add_argument("--forged-fraction", default="0.01",
                        help="the sample is sized against sessions with more than this fraction of their answers "
                             "forged (default 0.01)")
    parser.add_argument("--power", type=float, default=0.99,
                        help="probability such a session fails the label check (default 0.99)")
    parser.add_argument("--sample-seed", type=int, help="seed of the label sample (default: drawn, and printed)")
    parser.add_argument("--jobs", type=int, default=available_cpus(),
                        help="processes recomputing labels (default: the CPUs available)")
    parser.add_argument("--capnp", default="capnp", help="the capnp tool")
    parser.add_argument("--self-test", metavar="LABELS_JSON", help="check the label code against known answers")
    parser.add_argument("--self-test-max-m", type=int, default=64, help="largest chunk graph the self-test computes")
    parser.add_argument("--certificate", metavar="CERTIFICATE_JSON",
                        help="check a certificate (wipeproof-challenger ledger certificate) on its own instead of an "
                             "export: its evidence as an export, each entry on its own, and every byte of it "
                             "recomputed from its signed records (docs/certificate.md)")
    args = parser.parse_args()
    if not (args.labels in ("auto", "all") or args.labels.isdigit()):
        parser.error("--labels: 'auto', 'all' or a count")
    try:
        fraction = fractions.Fraction(args.forged_fraction)
    except (ValueError, ZeroDivisionError):
        parser.error("--forged-fraction: a number in (0, 1)")
    if not 0 < fraction < 1:
        parser.error("--forged-fraction: a number in (0, 1)")
    if not 0 < args.power < 1:
        parser.error("--power: a number in (0, 1)")
    if args.jobs < 1:
        parser.error("--jobs: at least 1")
    try:
        if args.self_test:
            self_test(args.self_test, args.self_test_max_m, args.jobs)
            if not args.export:
                return 0
        if args.certificate:
            if args.export:
                parser.error("give an EXPORT or --certificate, not both")
            if not (args.schema and args.authority_pub and args.challenger_pub):
                parser.error("--certificate needs --schema, --authority-pub and --challenger-pub")
            seed = args.sample_seed if args.sample_seed is not None else random.SystemRandom().randrange(1 << 32)
            verify_certificate(args.certificate, Schema(args.schema, args.capnp),
                               read_public_key_file(args.authority_pub), read_public_key_file(args.challenger_pub),
                               LabelSample(args.labels, fraction, args.power), seed, args.jobs)
            return 0
        if not (args.export and args.schema and args.authority_pub and args.challenger_pub):
            parser.error("EXPORT, --schema, --authority-pub and --challenger-pub are required")
        with open(args.export, "rb") as f:
            raw = f.read()
        if raw.startswith(b"\xef\xbb\xbf"):
            raise ValueError(f"{args.export} begins with a byte-order mark (U+FEFF, as some editors save UTF-8): "
                             f"save it without one")
        document = json.loads(raw.decode("utf-8"))
        if isinstance(document, dict) and document.get("format") == CERTIFICATE_FORMAT:
            parser.error(f"{args.export} is a certificate: give it as --certificate={args.export}")
        seed = args.sample_seed if args.sample_seed is not None else random.SystemRandom().randrange(1 << 32)
        recipe = Recipe(Schema(args.schema, args.capnp), document, read_public_key_file(args.authority_pub),
                        read_public_key_file(args.challenger_pub), LabelSample(args.labels, fraction, args.power),
                        seed, args.jobs)
        recipe.run()
        return 0
    except AuditFailure as failure:
        print(terminal_safe(f"recipe: FAILED: {failure}"), flush=True)
        return 1
    except OSError as error:  # named: which file, and why
        print(terminal_safe(f"recipe: cannot read {error.filename or 'the input'}: {error.strerror or error}"),
              file=sys.stderr)
        return 2
    except (ValueError, KeyError) as error:
        print(terminal_safe(f"recipe: cannot read {args.export or args.certificate or 'the input'}: {error}"),
              file=sys.stderr)
        return 2

if __name__ == "__main__":
    sys.exit(main())
