@0x98ca53e3277f4ae1;
# wipeproof protocol v3: wipe orders, device fill notices, fill reports, challenge rounds,
# verdicts, receipts, ledger entries, and the ProverAgent RPC interface between challenger and
# prover agent. Protocol narrative: docs/protocol.md; label values: docs/label-spec.md.
#
# Conventions for every field below:
# - Sizes are bytes unless the comment says labels (one label = 32 bytes).
# - "Unix us" is microseconds since 1970-01-01T00:00:00Z on the sender's wall clock.
# - Durations ending in Us/Micros are microseconds; on the challenger they come from its
#   monotonic clock, on the agent from the agent's (informational only).
# - Digests are 32-byte BLAKE2b-256 (libsodium crypto_generichash, no key) of the exact
#   payload bytes named; session ids are 16 bytes; key ids are 8 bytes (first 8 bytes of
#   BLAKE2b-256 of the 32-byte Ed25519 public key).
# - Every signed message is carried as an Envelope (below) whose payload is the message in
#   Cap'n Proto canonical form (one segment, no segment table, capnp::canonicalize()).
#
# Who signs what:  Delegation: authority key (offline).
#                  WipeOrder: challenger key, under the authority's Delegation it carries.
#                  DeviceFillNotice, FillReport, TranscriptDigest: node key.
#                  Verdict, WaveVerdict, Receipt, LedgerEntry: challenger key.
# ChallengeRound and RoundAnswer travel unsigned for latency; they are bound afterwards by the
# node-signed TranscriptDigest, and a wrong or late answer fails the session anyway.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("wipeproof::proto");

const protocolVersion :UInt16 = 3;
# The only version this schema describes. Agents refuse orders with any other value.
# v3 (from v2): orders are signed by the challenger key under the authority's Delegation they carry
# (the authority's key stays offline); ParameterProfile names its m, format and round deadline (a
# delegation binds them); FailureReason nodeBusy is the agent's typed busy refusal.
# v2 (from v1): the order no longer discloses the number of rounds and names the challenger that
# may deliver it; each device has its own fill deadline and is reported filled on its own
# (deviceFilled); rounds may challenge any subset of the filled devices.

# ---------------------------------------------------------------------------------------------
# Envelope: a signed message.
# ---------------------------------------------------------------------------------------------

enum MessageKind {
  # What an envelope's payload is. The kind is covered by the signature (see Envelope), so a
  # message signed as one kind can never be accepted as another.
  unknown @0;           # never valid; an unset kind fails verification
  wipeOrder @1;         # payload: WipeOrder, signed by the challenger (under a Delegation)
  fillReport @2;        # payload: FillReport, signed by the node
  transcriptDigest @3;  # payload: TranscriptDigest, signed by the node
  verdict @4;           # payload: Verdict, signed by the challenger
  receipt @5;           # payload: Receipt, signed by the challenger
  ledgerEntry @6;       # payload: LedgerEntry, signed by the challenger
  deviceFillNotice @7;  # payload: DeviceFillNotice, signed by the node
  waveVerdict @8;       # payload: WaveVerdict, signed by the challenger
  delegation @9;        # payload: Delegation, signed by the authority
}

struct Envelope {
  # Signature rule: signature = Ed25519-detached over the byte string
  #   "wipeproof/v1/envelope" (21 ASCII bytes) || kind as UInt16 little-endian || payload
  # under the signer's secret key. Receivers check, in this order: sizes, kind == the kind they
  # expect, signerKeyId == id of the key they trust for that kind, the signature; only then do
  # they parse the payload (proto/signing.h). Size limits per kind: proto/signing.h.
  kind @0 :MessageKind;
  payload @1 :Data;      # the message in canonical form; multiple of 8 bytes
  signature @2 :Data;    # 64 bytes, Ed25519 detached signature
  signerKeyId @3 :Data;  # 8 bytes, key id of the signer's public key (a hint; not trusted)
}

# ---------------------------------------------------------------------------------------------
# Order and its parameters.
# ---------------------------------------------------------------------------------------------

enum LabelFormat {
  posedbBlake3C1 @0;    # "posedb-blake3-c1", label-spec.md §4; 1 compression per node
  posedbBlake3N192 @1;  # "posedb-blake3-192", label-spec.md §5; 3 compressions per node,
                        # interoperable with the PoSE-DB prototype; whole chunks only
}

struct ParameterProfile {
  # The parameters a session was derived from and the adversary class they are meant to rule
  # out. The deadline rule: roundDeadlineUs <= 1.5 * m * c_node * tMinPs / safetyFactor
  # (c_node = 1 for c1, 2 for 192), and roundDeadlineUs > honestRoundP999Us with margin.
  name @0 :Text;                 # e.g. "default-uncalibrated", "rack-cpu-2^14"
  calibrated @1 :Bool;           # true only if produced by `calibrate` for this node class;
                                 # an uncalibrated profile never yields a stated bound
  adversaryClass @2 :Text;       # e.g. "commodity-cpu", "fpga-asic"
  tMinPs @3 :UInt64;             # picoseconds: fastest sequential time of one compression that
                                 # the class rules out (CPU ~40000, ASIC ~5000)
  safetyFactor @4 :Float64;      # dimensionless, >= 1
  confidence @5 :Float64;        # c in (0, 1): confidence of the stated bound, e.g. 0.99
  honestRoundP999Us @6 :UInt64;  # microseconds: honest round time, p99.9, measured by the
                                 # challenger at calibration; 0 = not measured
  recomputeFloorUs @7 :UInt64;   # microseconds: 1.5 * m * c_node * tMinPs / safetyFactor / 1e6,
                                 # the largest round deadline the rule allows (for display)
  calibratedAtUnixUs @8 :Int64;  # Unix us when calibrated; 0 = never
  authorityKeyId @9 :Data;       # 8 bytes: key id of the authority key that signed the profile
                                 # document; empty when the profile was not signed (no bound)
  documentDigest @10 :Data;      # 32 bytes: BLAKE2b-256 of the signed profile text; empty when
                                 # unsigned
  chunkLabels @11 :UInt32;       # labels: the profile's m; an order under a profile that names a
                                 # signature must have these three (WipeOrder's chunkLabels, format,
                                 # roundDeadlineUs): a delegation lists them with the rest
  format @12 :LabelFormat;       # the profile's label format
  roundDeadlineUs @13 :UInt64;   # microseconds: the profile's round deadline
}

struct DevicePlan {
  # One memory region of the node the order covers. Ranges of different devices are disjoint
  # and never share a chunk (label-spec.md §2).
  selector @0 :Text;              # the device: GPU UUID as its runtime reports it
                                  # ("GPU-8c6f..."), or "host" for host memory
  firstLabel @1 :UInt64;          # labels: global label index of the device's first slot
  labelCount @2 :UInt64;          # labels: slots to fill; the device holds labelCount*32 bytes
  allowedReserveBytes @3 :UInt64; # bytes: memory of the device the authority lets the agent
                                  # keep out of the fill (driver, runtime) for this model
  labelsPerRound @4 :UInt32;      # labels: q_d, indices challenged per round on this device,
                                  # each in a distinct chunk
  capacityBytes @5 :UInt64;       # bytes: the device's declared capacity in the inventory;
                                  # the fill must hold >= capacityBytes - allowedReserveBytes
  model @6 :Text;                 # device model from the inventory (informational)
  fillDeadlineUs @7 :UInt64;      # microseconds: from sending the order to receiving this
                                  # device's DeviceFillNotice, on the challenger's clock
  occupancyLabels @8 :UInt32;     # labels: o_d, indices asked of this device in every occupancy
                                  # round (WipeOrder.occupancyWindowUs), each in a distinct chunk;
                                  # 0 without a window, else >= 1 and != labelsPerRound
}

struct Delegation {
  # Signed by the authority, offline (`wipeproof-challenger delegate`): the authority lets one
  # challenger key order wipes, for a time, under the parameter profiles it lists. A challenger
  # holds its delegation, never the authority's secret key; every order carries it. Checked by the
  # agent before it accepts an order and by both audits (proto/delegation.h).
  challengerPublicKey @0 :Data;      # 32 bytes: the Ed25519 key that may sign orders
  notBeforeUnixUs @1 :Int64;         # Unix us: orders issued (and accepted) from this time
  notAfterUnixUs @2 :Int64;          # Unix us: ... and before this one
  issuedAtUnixUs @3 :Int64;          # Unix us: authority's clock when signed (informational)
  name @4 :Text;                     # the authority's name for it, e.g. "challenger-1 2026-12"
  profiles @5 :List(ParameterProfile);
                                     # the authority-signed profiles orders may carry, each exactly
                                     # as an order carries it (class, tMinPs, safetyFactor,
                                     # confidence, authorityKeyId, documentDigest, ...): a profile
                                     # that names a signature must equal one of these field for field
  allowUnsignedProfiles @6 :Bool;    # true: orders may also carry a profile that names no
                                     # signature (labs, demos); such sessions never state a bound
  inventoryDigest @7 :Data;          # 32 bytes: BLAKE2b-256 of the inventory file the authority
                                     # signs with this delegation (its declarations: capacities,
                                     # reserves, physical memory, reach, waves, node keys inline);
                                     # the challenger plans only from that file and records it in
                                     # its ledger, the audits take every declaration from it. Empty:
                                     # none named: no bound, no assumption holds
}

struct WipeOrder {
  # Signed by the challenger, under the authority's delegation it carries. The agent accepts it
  # only if the signature verifies under its pinned challenger key, the delegation verifies under
  # its pinned authority key, names that challenger key, is in force and lists the order's profile
  # (proto/delegation.h); it is unexpired (bounded clock skew), its sessionId is unseen,
  # nodeName/nodeKeyId are its own, and `devices` names exactly its devices with sizes it can
  # meet.
  protocolVersion @0 :UInt16;     # = protocolVersion (3)
  sessionId @1 :Data;             # 16 bytes from a CSPRNG; unique per session (replay guard)
  issuedAtUnixUs @2 :Int64;       # Unix us: challenger's wall clock when signed
  expiresAtUnixUs @3 :Int64;      # Unix us: agent refuses the order at or after this time
  nodeName @4 :Text;              # inventory name of the node this order is for
  nodeKeyId @5 :Data;             # 8 bytes: key id of the node key the report must be signed with
  seed @6 :Data;                  # 32 bytes: fresh CSPRNG session seed (label-spec.md §2)
  format @7 :LabelFormat;         # node-hash format of every label of the session
  chunkLabels @8 :UInt32;         # labels: m, labels per chunk, in [1, 2^20]
  devices @9 :List(DevicePlan);   # the plan; at least one device
  fillDeadlineUs @10 :UInt64;     # microseconds: from sending the order to receiving the fill
                                  # report (every device filled), on the challenger's clock
  rounds @11 :UInt32;             # always 0 since v2: the number of rounds is not disclosed; the
                                  # agent answers rounds until `finish`
  roundDeadlineUs @12 :UInt64;    # microseconds: per round, from sending the ChallengeRound to
                                  # receiving the RoundAnswer, on the challenger's clock
  profile @13 :ParameterProfile;  # what the parameters were derived from
  hostMemoryInPlan @14 :Bool;     # true iff host memory of this node is one of `devices`
  waveComplete @15 :Bool;         # true iff every node that can reach this node's memory within
                                  # the round deadline is wiped in the same wave
  waveName @16 :Text;             # name of the wave (node group) this session belongs to
  sessionTimeoutUs @17 :UInt64;   # microseconds: the agent aborts and frees memory when the
                                  # session has not finished this long after the order arrived
  challengerKeyId @18 :Data;      # 8 bytes: key id of the challenger that delivers this order
                                  # and signs its verdict; the agent accepts the order only on a
                                  # connection authenticated as that key
  delegation @19 :Data;           # the authority-signed Delegation envelope (Envelope canonical
                                  # bytes, kind delegation) under which the challenger signed this
  occupancyWindowUs @20 :UInt64;  # microseconds: after its proof rounds the node keeps its labels
                                  # this long and answers occupancy rounds (every device at its
                                  # occupancyLabels, gaps exponential from each answer, never
                                  # disclosed); 0: no window (challenger/session/occupancy_bound.h)
  occupancyMeanGapUs @21 :UInt64; # microseconds: the mean of those gaps (>= 1 with a window)
  occupancyShortfallBytes @22 :UInt64;
                                  # bytes: b of the occupancy statement (< the planned bytes)
}

# ---------------------------------------------------------------------------------------------
# Fill report.
# ---------------------------------------------------------------------------------------------

struct DeviceFill {
  selector @0 :Text;             # as in DevicePlan.selector
  firstLabel @1 :UInt64;         # labels: as planned
  labelCount @2 :UInt64;         # labels: slots actually filled (< planned means short)
  bytesHeld @3 :UInt64;          # bytes of the device holding labels (labelCount * 32)
  reserveBytes @4 :UInt64;       # bytes of the device the agent left out of the fill
  bytesHeldByOthers @5 :UInt64;  # bytes in use by other processes when the fill started;
                                 # reported for diagnosis, counted as shortfall by the verdict
  totalBytes @6 :UInt64;         # bytes: device total as its runtime reports it
  fillMicros @7 :UInt64;         # microseconds: agent-measured fill time of this device
  note @8 :Text;                 # why the device is short, if it is; empty otherwise
}

struct DeviceFillNotice {
  # Signed by the node as soon as one planned device holds all its labels (deviceFilled); the
  # challenger starts challenging that device at once. The FillReport follows when every device
  # is filled.
  sessionId @0 :Data;            # 16 bytes, from the order
  orderDigest @1 :Data;          # 32 bytes: BLAKE2b-256 of the order envelope's payload
  nodeKeyId @2 :Data;            # 8 bytes: key id of the node key that signs this
  deviceIndex @3 :UInt16;        # index into WipeOrder.devices
  fill @4 :DeviceFill;           # as it will appear in the FillReport
  finishedAtUnixUs @5 :Int64;    # Unix us: agent's wall clock when the device was filled
}

struct FillReport {
  # Signed by the node, returned by startSession once every planned device is filled.
  sessionId @0 :Data;            # 16 bytes, from the order
  orderDigest @1 :Data;          # 32 bytes: BLAKE2b-256 of the order envelope's payload
  nodeKeyId @2 :Data;            # 8 bytes: key id of the node (agent) key that signs this
  devices @3 :List(DeviceFill);  # one per DevicePlan, in the order's order
  fillMicros @4 :UInt64;         # microseconds: agent-measured, order received to report
                                 # signed (informational; the challenger times the fill itself)
  finishedAtUnixUs @5 :Int64;    # Unix us: agent's wall clock when the report was signed
}

# ---------------------------------------------------------------------------------------------
# Challenge rounds (unsigned, latency-critical).
# ---------------------------------------------------------------------------------------------

struct DeviceChallenge {
  deviceIndex @0 :UInt16;         # index into WipeOrder.devices
  labelIndices @1 :List(UInt64);  # labels: global label indices inside that device's range,
                                  # labelsPerRound of them, each in a distinct chunk
}

struct ChallengeRound {
  sessionId @0 :Data;                  # 16 bytes
  roundIndex @1 :UInt32;               # 0, 1, ..., rounds-1, sent in order
  devices @2 :List(DeviceChallenge);   # a non-empty subset of the devices reported filled, each
                                       # at most once, each with its own count
}

struct RoundAnswer {
  sessionId @0 :Data;     # 16 bytes
  roundIndex @1 :UInt32;  # as in the ChallengeRound it answers
  labels @2 :Data;        # 32 bytes per requested index, in request order: devices in the
                          # order of ChallengeRound.devices, indices in list order
  agentMicros @3 :UInt32; # microseconds: agent-measured lookup time (informational)
}

# ---------------------------------------------------------------------------------------------
# Round channel: the same rounds without the RPC system (an addition within v3; docs/protocol.md
# "The round channel"). The challenger asks the session's owner connection for a token
# (ProverAgent.openRoundChannel), opens a second connection to the agent's port (the same mutual
# TLS 1.3), writes the 8 bytes roundChannelPreface and then flat Cap'n Proto messages (capnp's
# standard framing, the RPC connection's size bounds): one RoundChannelRequest, then waits for
# its RoundChannelReply. The first request is a hello (reply: ready), every later one a round
# (reply: its answer). Any refusal is the last reply: the agent closes the channel after it.
# ---------------------------------------------------------------------------------------------

const roundChannelPreface :Data = "wpround1";
# The first 8 bytes a round channel sends after its TLS handshake. An RPC connection's first 8
# bytes are a Cap'n Proto frame header (segment count - 1, first segment's words), never these
# (as a header: 1.9e9 segments, which no reader accepts).

struct RoundChannelHello {
  sessionId @0 :Data;  # 16 bytes: the running session
  token @1 :Data;      # 32 bytes: openRoundChannel's result, usable once
}

struct RoundChannelRequest {
  union {
    hello @0 :RoundChannelHello;  # the first request, and only the first
    round @1 :ChallengeRound;     # of the hello's session; the same rules as ProverAgent.round
  }
}

struct RoundChannelReply {
  union {
    ready @0 :Void;           # the hello is accepted: rounds may follow
    answer @1 :RoundAnswer;   # as ProverAgent.round's
    refused @2 :Text;         # why ("wipeproof:CODE: message", proto/rpc_status.h); the channel closes
  }
}

# ---------------------------------------------------------------------------------------------
# Transcript, verdict, receipt, ledger.
# ---------------------------------------------------------------------------------------------

struct TranscriptDigest {
  # Signed by the node in `finish`. `digest` is BLAKE2b-256 over
  #   "wipeproof/v2/transcript" (23 ASCII bytes), then items, each
  #   tag (1 byte) || length (UInt64 little-endian) || bytes:
  # tag 1 the order payload; tag 6 each DeviceFillNotice payload in device-index order; tag 2 the
  # fill report payload; tag 7 the rounds digest = BLAKE2b-256 over, for each round in order,
  # tag 3 the ChallengeRound and tag 4 its RoundAnswer (canonical form, as sent/received); tag 5
  # the round count (UInt32 little-endian). Each kind of item has a fixed place, so the digest does
  # not depend on how notices, rounds and the report interleave in time.
  # Implemented once, for both sides, in proto/transcript.h.
  sessionId @0 :Data;      # 16 bytes
  digest @1 :Data;         # 32 bytes, see above
  roundCount @2 :UInt32;   # rounds answered and hashed
  verdictDigest @3 :Data;  # 32 bytes: BLAKE2b-256 of the verdict payload the agent received
  nodeKeyId @4 :Data;      # 8 bytes: key id of the signing node key
  signedAtUnixUs @5 :Int64;  # Unix us: agent's wall clock when signed
}

enum FailureReason {
  none @0;             # the session passed
  wrongLabel @1;       # a returned label differs from the expected one
  lateRound @2;        # a round answer arrived after roundDeadlineUs
  lateFill @3;         # the fill report arrived after fillDeadlineUs
  shortCapacity @4;    # a device held less than capacity minus allowed reserve
  orderRefused @5;     # the agent refused the order (text carries its reason)
  badSignature @6;     # a report or transcript did not verify under the node key
  protocolError @7;    # malformed, oversized or inconsistent message; wrong session/round
  disconnected @8;     # the connection dropped before the session ended
  agentAborted @9;     # the agent aborted the session (text carries its reason)
  internal @10;        # the challenger itself failed (text carries the error)
  nodeBusy @11;        # the agent refused the order as busy with another session (its typed
                       # refusal, status BUSY); no wipe ran: a failed wipe, reported as BUSY
}

struct Failure {
  # Why a session failed; all fields that apply are set.
  reason @0 :FailureReason;
  text @1 :Text;            # human-readable detail
  device @2 :Text;          # selector of the device concerned, if any
  roundIndex @3 :UInt32;    # round concerned, if any
  labelIndex @4 :UInt64;    # labels: global index of the wrong label, if any
  expected @5 :Data;        # 32 bytes: expected label (wrongLabel only)
  received @6 :Data;        # 32 bytes (or what arrived): received label (wrongLabel only)
}

struct RoundTiming {
  roundIndex @0 :UInt32;
  elapsedUs @1 :UInt64;       # microseconds: send to receipt, challenger's monotonic clock
  labelsChecked @2 :UInt32;   # labels checked in this round, all devices
  deadlineMet @3 :Bool;
  allCorrect @4 :Bool;
  sentAfterOrderUs @5 :UInt64;  # microseconds: this session's order sent to this round sent,
                                # challenger's monotonic clock (a ledger audit places every wave
                                # member's proof rounds after every member's fill with it)
  roundChannel @6 :Bool;        # sent on the session's round channel (protocol.md "The round
                                # channel"), not over RPC: elapsedUs includes one transport or the
                                # other, so a profile's margin can be read against the right one
}

struct DeviceBound {
  selector @0 :Text;
  plannedBytes @1 :UInt64;          # bytes: labelCount * 32 of the plan
  bytesHeld @2 :UInt64;             # bytes: as reported by the fill report
  capacityBytes @3 :UInt64;         # bytes: declared capacity
  allowedReserveBytes @4 :UInt64;   # bytes
  chunksChecked @5 :UInt64;         # N_d: distinct chunks checked over all rounds
  allCorrect @6 :Bool;
  confidence @7 :Float64;           # diagnostic: per-device confidence 1 - (1-c)/D for D devices
  unwipedBoundBytes @8 :UInt64;     # DIAGNOSTIC ONLY, not a statement: (capacity - planned) +
                                    # (1-(1-conf)^(1/N_d)) * plannedBytes, what this device kept
                                    # unwiped had no label left it; labels can move to another
                                    # device's reserve, so no bound per device is sound
                                    # (challenger/session/bound.h). Set only when boundStated
  filledAfterUs @9 :UInt64;         # microseconds: order sent to this device's fill notice
                                    # received (its own fill deadline applies); 0 without a notice
}

struct OccupancyStatement {
  # What an occupancy window states (challenger/session/occupancy_bound.h), in the Verdict of a
  # session whose order asked for one.
  windowStartAfterOrderUs @0 :UInt64;  # microseconds: the answer of the last proof round, after
                                       # the order (the challenger's monotonic clock)
  windowEndAfterOrderUs @1 :UInt64;    # microseconds: when the window ended (its length after the
                                       # start, or earlier on a failure); the rounds after the
                                       # last proof round sent before it are the occupancy rounds
  rounds @2 :UInt32;                   # K: occupancy rounds answered correctly and in time
  detection @3 :Float64;               # d(b): least chance one round detects a shortfall > b
  shortUs @4 :UInt64;                  # microseconds: T* + unprotectedUs, the statement's figure;
                                       # UINT64_MAX when d(b) = 0
  stated @5 :Bool;                     # boundStated && the window ran its full length &&
                                       # shortUs < the window's length
  statement @6 :Text;                  # "at 99% confidence node n's planned memory lacked labels
                                       # in more than X bytes for at most T s of its W s window"
  unprotectedUs @7 :UInt64;            # microseconds: U, the window less the time its drawn gaps
                                       # ran (rounds in flight, the challenger's checks and wake-up
                                       # delays); at least the occupancy rounds' time in flight
                                       # inside the window, min(elapsedUs, end - sent) summed
}

struct ComputeStatement {
  # The work a passing node's fill provably did and its share of the node's whole compute
  # (challenger/session/compute_statement.h, the derivation), in every Verdict written since.
  stated @0 :Bool;                 # boundStated && the inventory declares the node's label rate and
                                   # its isolation or ingress bandwidth && some label was computed
  statement @1 :Text;              # "at 99% confidence node n's fill required at least W BLAKE3
                                   # compressions (...): at least T s of the whole node's compute
                                   # at its fastest declared rate of R compressions/s, X% of the
                                   # I s from its order to its last proof round's answer", or "no
                                   # compute statement: " and why
  heldLabels @2 :UInt64;           # labels: planned labels held at the proof rounds, by the bound
  ingressLabels @3 :UInt64;        # labels: what the declared ingress could have brought in
  workCompressions @4 :UInt64;     # BLAKE3 compressions: W, the least work that computed the rest
  rateCompressionsPerS @5 :Float64;  # compressions per second: R, the node's declared fastest rate
  intervalUs @6 :UInt64;           # microseconds: order sent to the last proof round's answer
  minComputeUs @7 :UInt64;         # microseconds: W / R, rounded down
}

struct Assumption {
  # A condition outside the protocol that a pass relies on (design-brief "What a pass proves").
  name @0 :Text;    # e.g. "host-memory-in-plan", "wave-complete", "no-nvme-in-reach"
  held @1 :Bool;    # whether it held for this session, as far as the challenger knows
  detail @2 :Text;  # why
}

struct Verdict {
  # Signed by the challenger, sent to the agent in `finish`, stored in the ledger.
  sessionId @0 :Data;             # 16 bytes
  nodeName @1 :Text;
  pass @2 :Bool;                  # every label right, every deadline met, no device short
  failure @3 :Failure;            # reason none when pass
  fillMicros @4 :UInt64;          # microseconds: order sent to report received
  fillDeadlineUs @5 :UInt64;      # microseconds: from the order
  rounds @6 :List(RoundTiming);   # every round run, in order
  roundDeadlineUs @7 :UInt64;     # microseconds: from the order
  devices @8 :List(DeviceBound);  # one per planned device
  confidence @9 :Float64;         # c of the all-device statement
  profile @10 :ParameterProfile;  # profile the session ran under
  deadlineRuleSatisfied @11 :Bool;  # the profile meets the deadline rule for its class
  boundStated @12 :Bool;          # pass && profile.calibrated && the profile signed by the
                                  # authority with its signed class && the delegation names the
                                  # inventory && safety >= 1.5 && deadlineRuleSatisfied && the
                                  # honest round margin (challenger/session/verdict.h)
  totalUnwipedBoundBytes @13 :UInt64;  # bytes: THE bound: the node's planned memory taken together
                                       # at `confidence`, every device's capacity - planned counted
                                       # in full (challenger/session/bound.h); only meaningful when
                                       # boundStated
  statement @14 :Text;            # plain sentence for auditors, e.g. "at 99% confidence at most
                                  # X bytes of node N's planned memory (devices ..., taken
                                  # together) were not wiped: ..." or "no bound: parameters not
                                  # calibrated"
  assumptions @15 :List(Assumption);
  orderDigest @16 :Data;          # 32 bytes: BLAKE2b-256 of the order payload
  reportDigest @17 :Data;         # 32 bytes: BLAKE2b-256 of the fill report payload (empty if
                                  # there was none)
  issuedAtUnixUs @18 :Int64;      # Unix us: challenger's wall clock when signed
  orderSentAtUnixUs @19 :Int64;   # Unix us: challenger's wall clock when the order was sent; the
                                  # origin of fillMicros, filledAfterUs and each round's
                                  # sentAfterOrderUs, so an audit can line up a wave's members
  occupancy @20 :OccupancyStatement;  # set iff the order has an occupancyWindowUs and the proof
                                      # rounds passed
  compute @21 :ComputeStatement;      # set in every verdict written since it exists (absent in
                                      # older ones: they make no compute claim)
}

struct WaveVerdict {
  # Signed by the challenger once every member of a wave run has its verdict: the statement for
  # the wave's planned memory taken together (design-brief "What a pass proves": a neighbour's
  # memory is only ruled out when it was wiped in the same wave).
  waveName @0 :Text;
  sessionIds @1 :List(Data);      # 16 bytes each, one per member session
  nodeNames @2 :List(Text);       # same order
  verdictDigests @3 :List(Data);  # 32 bytes each: BLAKE2b-256 of each member's verdict payload
  pass @4 :Bool;                  # every member passed
  complete @5 :Bool;              # every node of the wave was in the run and the wave is declared
                                  # complete in the inventory
  confidence @6 :Float64;
  boundStated @7 :Bool;
  unwipedBoundBytes @8 :UInt64;   # bytes: all members' planned memory together; only meaningful
                                  # when boundStated
  statement @9 :Text;
  issuedAtUnixUs @10 :Int64;      # Unix us
  orderSentAfterWaveUs @11 :List(UInt64);
                                  # microseconds: each member's order sent (its rounds' and fills'
                                  # origin), after the wave's first, on the one monotonic clock of
                                  # the challenger process that ran every member; same order as
                                  # sessionIds. Empty in wave verdicts written before it existed
                                  # (their members are placed by orderSentAtUnixUs, the wall clock)
}

struct Receipt {
  # Signed by the challenger: the self-contained record of one session for auditors.
  sessionId @0 :Data;             # 16 bytes
  nodeName @1 :Text;
  pass @2 :Bool;                  # as in the verdict
  orderDigest @3 :Data;           # 32 bytes: BLAKE2b-256 of the order payload
  reportDigest @4 :Data;          # 32 bytes: of the fill report payload
  verdictDigest @5 :Data;         # 32 bytes: of the verdict payload
  transcript @6 :Envelope;        # the node-signed TranscriptDigest (absent if the agent gave none)
  ledgerSequence @7 :UInt64;      # sequence of the verdict's ledger entry
  issuedAtUnixUs @8 :Int64;       # Unix us
}

enum LedgerRecordKind {
  unknown @0;
  order @1;          # record: Envelope bytes of a WipeOrder
  fillReport @2;     # record: Envelope bytes of a FillReport
  roundLog @3;       # record: canonical RoundLog bytes
  verdict @4;        # record: Envelope bytes of a Verdict
  transcript @5;     # record: Envelope bytes of a TranscriptDigest
  receipt @6;        # record: Envelope bytes of a Receipt
  deviceFillNotice @7;  # record: Envelope bytes of a DeviceFillNotice
  waveVerdict @8;    # record: Envelope bytes of a WaveVerdict
}

struct LoggedRound {
  # One round exactly as the transcript hashes it: the challenge as sent, the answer as received
  # (both canonical), so an auditor can re-check every label and the node-signed transcript.
  round @0 :ChallengeRound;
  answer @1 :RoundAnswer;        # absent when no usable answer arrived
}

struct RoundLog {
  sessionId @0 :Data;            # 16 bytes
  rounds @1 :List(RoundTiming);
  exchanges @2 :List(LoggedRound);  # the rounds in `rounds`, same order; a long session is
                                    # split over several RoundLog records (firstRound says where)
  firstRound @3 :UInt32;         # index in the session's rounds of exchanges[0]
}

struct LedgerEntry {
  # Signed by the challenger. Entries form a hash chain: prevEntryDigest is BLAKE2b-256 of the
  # previous entry's whole signed Envelope in canonical form (EncodeEnvelope), so the head digest
  # commits to every entry and every signature before it; 32 zero bytes for sequence 0. The head (last entry's envelope) is what `ledger export` hands to auditors.
  sequence @0 :UInt64;           # 0, 1, 2, ... without gaps
  prevEntryDigest @1 :Data;      # 32 bytes
  kind @2 :LedgerRecordKind;
  record @3 :Data;               # the stored bytes, as `kind` says
  sessionId @4 :Data;            # 16 bytes, the session the record belongs to (may be empty)
  recordedAtUnixUs @5 :Int64;    # Unix us: challenger's wall clock
}

# ---------------------------------------------------------------------------------------------
# Agent status and description.
# ---------------------------------------------------------------------------------------------

enum AgentPhase {
  idle @0;       # no session; no memory held
  filling @1;    # order accepted, labels being written
  ready @2;      # filled and reported; answering rounds
  releasing @3;  # verdict, abort, disconnect or timeout seen; freeing memory
}

struct DeviceHeld {
  selector @0 :Text;
  bytesHeld @1 :UInt64;       # bytes currently holding labels (grows during the fill)
  labelsFilled @2 :UInt64;    # labels written so far
  labelCount @3 :UInt64;      # labels planned
}

struct AgentStatus {
  phase @0 :AgentPhase;
  sessionId @1 :Data;            # 16 bytes; empty when idle
  devices @2 :List(DeviceHeld);
  phaseSinceUnixUs @3 :Int64;    # Unix us when the current phase began
  fillMicros @4 :UInt64;         # microseconds: last fill's duration (0 if none yet)
  roundsAnswered @5 :UInt32;     # in the current session
  lastRoundMicros @6 :UInt32;    # microseconds: agent-side time of the last round
  sessionsCompleted @7 :UInt64;  # since the agent started
  lastError @8 :Text;            # last refusal or abort reason; empty if none
}

enum DeviceKind {
  host @0;   # host DRAM
  cuda @1;   # NVIDIA GPU
  hip @2;    # AMD GPU
}

struct DeviceInfo {
  kind @0 :DeviceKind;
  name @1 :Text;             # runtime's device name, e.g. "NVIDIA H200"
  stableId @2 :Text;         # the selector orders use: GPU UUID, or "host"
  totalBytes @3 :UInt64;     # bytes: device total
  availableBytes @4 :UInt64; # bytes: free now, as the runtime reports it
  disabledReason @5 :Text;   # non-empty if the backend could not start for this device
}

struct NodeDescription {
  nodeKeyId @0 :Data;        # 8 bytes
  nodePublicKey @1 :Data;    # 32 bytes (informational: the challenger trusts its inventory)
  protocolVersion @2 :UInt16;
  agentVersion @3 :Text;
  devices @4 :List(DeviceInfo);
}

# ---------------------------------------------------------------------------------------------
# RPC.
# ---------------------------------------------------------------------------------------------

interface ProverAgent {
  # Served by `wipeproof-prover serve` (bootstrap capability); called by the challenger.
  # Agent state machine (one session at a time):
  #
  #   idle --startSession ok--> filling --report returned--> ready
  #   filling|ready --round(i)--> same   i must be rounds answered so far; every device it names
  #                                      must be filled (deviceFilled returned); no upper limit
  #   ready --finish--> releasing --> idle      (transcript returned, memory freed)
  #   filling|ready --abort | disconnect | sessionTimeoutUs--> releasing --> idle
  #
  # startSession while not idle fails with BUSY (the challenger's nodeBusy) and leaves the running
  # session alone. Any call that fails carries a wipeproof Status in the exception description
  # ("wipeproof:CODE: message", proto/rpc_status.h); a refused order leaves no memory held.

  startSession @0 (order :Envelope) -> (report :Envelope);
  # Verify (authority key) and check the order, take and fill every planned device
  # concurrently, then return the node-signed FillReport. Returns only when the fill is done;
  # the challenger times this call as the fill.

  round @1 (round :ChallengeRound) -> (answer :RoundAnswer);
  # Look up the labels and answer. Unsigned; see TranscriptDigest.

  finish @2 (verdict :Envelope) -> (transcript :Envelope);
  # Hand over the challenger-signed Verdict; the agent signs the TranscriptDigest (including
  # the verdict's digest), frees all memory and returns to idle.

  abort @3 (sessionId :Data, reason :Text) -> ();
  # Free all memory of the named session (16 bytes) now; a no-op if it is not running. Honoured
  # only on the connection that started the session (the session id is no secret: status shows
  # it); from any other connection it fails with PERMISSION_DENIED and the session goes on.

  status @4 () -> (status :AgentStatus);

  describe @5 () -> (description :NodeDescription);

  deviceFilled @6 (sessionId :Data, deviceIndex :UInt16) -> (notice :Envelope);
  # Returns the node-signed DeviceFillNotice of one device of the running session as soon as that
  # device holds all its labels (at once if it already does). The challenger calls it for every
  # device right after startSession; it fails like startSession when the session ends first.
  # Only the connection that started the session may call it.

  openRoundChannel @7 (sessionId :Data) -> (token :Data);
  # A 32-byte token that lets one round channel (RoundChannelHello, above) answer this session's
  # rounds for this connection. Only the connection that started the session may call it, while
  # the session runs; a new call replaces the unused token; a token is used up by its hello and
  # dies with the session. Rounds may still come as `round` calls; either way they are one
  # sequence (round indices in order, one at a time).
}
