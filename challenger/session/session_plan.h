// The session plan: what one wipe order asks of one node (design-brief.md "Protocol v1", step 1).
//
// A plan is built from the inventory by challenger/fleet/plan_builder.h (which says how each device's
// range, q and the fill deadline are chosen); this file holds the plan itself and turns it into the
// signed order.
//
// How long the challenger waits, in real time, before it stops waiting for an answer (the answer is
// late either way; these bound a session against an agent that never answers), and the agent's
// sessionTimeoutUs, which must cover the longest honest session including waits for the rest of a
// wave and must not disclose the number of rounds: see FillWaitLimitUs, RoundWaitLimitUs,
// SessionTimeoutUs, TimeoutRoundsFor.
//
// Thread-safety: pure functions apart from the CSPRNG; SessionPlan is a value.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "challenger/parameters/parameter_profile.h"
#include "challenger/session/declared_compute.h"
#include "challenger/session/node_reach.h"
#include "common/clock.h"
#include "common/status.h"
#include "kernels/label_spec.h"
#include "proto/crypto.h"
#include "proto/label_wire.h"
#include "proto/signing.h"
#include "proto/tls_certificate.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

// The keys a session is run with. In deployment the challenger holds its own key pair and the
// authority's delegation (delegation_document.h), never the authority's secret key: `authority`
// then has its public half only. A lab, a test or the selftest that holds the authority's secret
// key may leave `delegation` empty: each order then carries a LabDelegation made for it.
struct SessionKeys {
  proto::KeyPair authority;   // public half: the delegation's signer; secret half only in labs
  proto::KeyPair challenger;  // signs orders, verdicts and receipts; its key id is in the order
  proto::Bytes delegation;    // the authority-signed Delegation envelope (bytes) every order carries
  // False only in the selftest's rogue challenger (scenario 9c): SignOrder then signs an order its
  // delegation does not cover, as a challenger host that changed this code would, for agents and
  // audits to refuse.
  bool check_own_delegation = true;
};

// Selector of host memory among a plan's devices (challenger/fleet/inventory.h kHostSelector).
inline constexpr char kHostDeviceSelector[] = "host";

struct PlannedDevice {
  std::string selector;
  std::string model;
  uint64_t capacity_bytes = 0;         // declared
  uint64_t allowed_reserve_bytes = 0;  // from the inventory's table for the model
  uint64_t first_label = 0;            // global label index, a multiple of m
  uint64_t label_count = 0;            // a multiple of m, >= m
  uint32_t labels_per_round = 0;       // q_d of a proof round
  uint32_t hold_labels = 0;            // labels of a holding round on this device (challenges.h)
  uint32_t occupancy_labels = 0;       // o_d of an occupancy round (0: no window; SetOccupancySchedule)
  uint64_t fill_deadline_us = 0;       // from the order to this device's fill notice
  // A slice of a partitioned GPU (MIG, MI300 partition): its physical device and that device's slice
  // count, from the inventory; "" and 0 for a whole device. Not in the order.
  std::string partition_of;
  uint32_t partitions = 0;

  uint64_t planned_bytes() const { return label_count * proto::kLabelBytes; }
};

// Where the session stands in its wave (challenger/fleet/inventory.h Wave).
struct WaveContext {
  std::string name;                    // "" when the node is in no wave
  bool declared_complete = false;      // the inventory's `complete` flag
  size_t wave_nodes = 0;               // nodes in the wave (0 when in none)
  bool whole_wave_in_session = false;  // every node of the wave is wiped in the same run
  uint64_t wave_fill_deadline_us = 0;  // largest fill deadline of the run's sessions; 0 = own only
};

struct SessionPlan {
  std::string node_name;
  std::string address;
  proto::PublicKey node_key{};
  proto::KeyId node_key_id{};
  proto::PinnedCertificate node_certificate;  // the inventory's; empty: the session cannot connect
  bool no_nvme_in_reach = false;
  // The longest round deadline, us, for which the inventory's reach declarations hold (no NVMe in
  // reach, the wave complete); 0 = not declared. Not in the order: PlanFromOrder leaves it 0.
  uint64_t reach_round_deadline_us = 0;
  NodeReach reach;  // egress and memory outside the plan, as the inventory declares them
  std::array<uint8_t, proto::kSessionIdBytes> session_id{};
  std::array<uint8_t, proto::kSessionSeedBytes> seed{};
  int64_t issued_at_unix_us = 0;
  int64_t expires_at_unix_us = 0;
  Profile profile;
  std::vector<PlannedDevice> devices;
  uint64_t fill_deadline_us = 0;
  uint64_t session_timeout_us = 0;
  bool host_memory_in_plan = false;  // a device with selector "host" is planned
  // The node's physical host memory, bytes, as the inventory declares it (the authority's finding);
  // 0 = not declared. Not in the order: PlanFromOrder leaves it 0.
  uint64_t host_physical_memory_bytes = 0;
  // The node's fastest label rate as the inventory declares it (declared_compute.h); not in the
  // order: PlanFromOrder leaves it undeclared, an audit puts it back (ApplyDeclarations).
  DeclaredCompute compute;
  WaveContext wave;
  bool wave_complete = false;  // order field: declared complete and the whole wave in this run
  // BLAKE2b-256 of the inventory document the declarations above (capacities, reserves, reach,
  // physical memory, wave) came from (BuildPlan); nullopt for a plan built from no document.
  std::optional<proto::Digest> inventory_digest;
  // Holding rounds (challenges.h, session_runner.h step 4): from its fill notice until the proof
  // rounds, and after them until every session of its wave run has passed, a device is probed at
  // random intervals, each U[0, hold_gap_max_us] of real time after the previous answer, with at
  // most holding_batches rounds.
  uint32_t holding_batches = 0;
  uint64_t hold_gap_max_us = 0;
  // Occupancy window (occupancy_bound.h; in the order): after its last proof round the node holds its
  // labels for occupancy_window_us and answers occupancy rounds (every device at occupancy_labels),
  // each gap from an answer to the next send exponential with mean occupancy_mean_gap_us, drawn when
  // the answer arrives and never disclosed; the pool holds occupancy_batches rounds, drawn before the
  // order. 0: no window.
  uint64_t occupancy_window_us = 0;
  uint64_t occupancy_mean_gap_us = 0;
  uint64_t occupancy_shortfall_bytes = 0;  // b of the statement
  uint32_t occupancy_batches = 0;
  // When the challenger closes the window, if before occupancy_window_us (0: at it): a hold wave's
  // next run, drawn in secret (never in the order, whose window is the longest the gap may be), so
  // the node does not learn its next wipe (threat-model.md T-SCHEDULE-SECRET). The statement covers
  // the window as it ran. The order's readers (PlanFromOrder) leave it 0.
  uint64_t occupancy_close_us = 0;
  // The window's length as the session runs it: occupancy_close_us when set, else the order's.
  uint64_t OccupancyRunUs() const {
    return occupancy_close_us > 0 ? std::min(occupancy_close_us, occupancy_window_us) : occupancy_window_us;
  }

  // The session's key material as the label engine takes it: format, seed, m (first, count 0).
  RegionSpec LabelSession() const;
};

// Label count for a device: floor((capacity - reserve)/32) rounded down to a multiple of m; 0 when
// that is less than one chunk. The plan's (plan_builder.h) and the audits' (declared_node.h) rule.
uint64_t PlannedLabelCount(uint64_t capacity_bytes, uint64_t reserve_bytes, uint32_t chunk_labels);

// Whether the plan's round deadline is within the inventory's reach_round_deadline_us (true when
// none is declared): only then do its reach declarations (no NVMe in reach, the wave complete)
// speak of this session (assumptions.h), and only then may its order say waveComplete.
bool RoundDeadlineWithinReach(const SessionPlan& plan);

// Most labels one session challenges over all rounds and devices: the challenger holds every
// expected label (32 bytes each) during the session, 512 MiB at this limit.
inline constexpr uint64_t kMaxLabelsPerSession = uint64_t{1} << 24;

// Real-time wait limits (microseconds) and the agent's session timeout.
uint64_t FillWaitLimitUs(uint64_t fill_deadline_us);    // deadline + max(10 s, deadline / 10)
uint64_t RoundWaitLimitUs(uint64_t round_deadline_us);  // deadline + max(1 s, deadline)
// The session timeout computed for `timeout_rounds` proof rounds: the wave's fill, those rounds twice
// (this node's and the slowest member's), every holding round at its largest gap, the occupancy
// window and one more round wait (the window ends on the clock; one round may be on the wire then)
// and a minute of slack. With timeout_rounds >= plan.profile.rounds it exceeds the longest honest session.
uint64_t SessionTimeoutUs(const SessionPlan& plan, uint32_t timeout_rounds);

// The order must not disclose R (docs/protocol.md "The session timeout"): the timeout is computed
// for a secret R' drawn uniformly from [R, 2R]. From the order an agent can solve R' and so learn
// only ceil(R'/2) <= R <= R'; each R in that range could have produced the order.
// TimeoutRoundsFor maps 64 random bits to R' = R + random mod (R + 1) (bias below 2^-39 for every
// R <= kMaxLabelsPerSession); DrawTimeoutRounds takes the bits from the CSPRNG.
uint32_t TimeoutRoundsFor(uint32_t rounds, uint64_t random);
uint32_t DrawTimeoutRounds(uint32_t rounds);

// Holding rounds per device and session (the pool drawn before the order; challenges.h).
inline constexpr uint32_t kHoldingBatches = 16;
// Sets plan->holding_batches, each device's hold_labels (q_d / 8, at least 1; 0 when q_d = 1), hold_gap_max_us and
// session_timeout_us (SessionTimeoutUs for a fresh DrawTimeoutRounds) for a session that may wait `window_us` (the longest fill deadline of its wave
// run, or its own) for the devices and nodes that fill last: the holding pool then lasts the window
// on average (mean gap window / kHoldingBatches), gaps between 1 ms and 10 s.
void SetHoldingSchedule(SessionPlan* plan, uint64_t window_us);

// What an occupancy window asks (occupancy_bound.h): its length, the mean gap between rounds, the
// shortfall b its statement is about, and about how many labels each round asks over all devices
// (spread in proportion to the planned bytes, at least one per device).
struct OccupancyRequest {
  uint64_t window_us = 0;
  uint64_t mean_gap_us = 0;
  uint64_t shortfall_bytes = 0;
  uint32_t labels_per_round = 0;
  uint64_t close_us = 0;  // SessionPlan::occupancy_close_us (0: the window runs its length)
};
// The request in the units people give it (wipe's --occupancy_* flags, a held wave's hold): seconds
// (rounded to microseconds, the gap at least 1 us) and b as a fraction of `plan`'s planned bytes.
OccupancyRequest OccupancyRequestOf(const SessionPlan& plan, double window_s, double mean_gap_s,
                                    double shortfall_fraction, uint32_t labels_per_round);
// Most occupancy rounds one window may plan (the pool is drawn before the order): every round is a
// 32-byte timing row of the verdict, whose envelope must stay within its 8 MiB limit.
inline constexpr uint32_t kMaxOccupancyRounds = 1u << 17;

// Rounds the pool holds for a window of `window_us` at mean gap `mean_gap_us`: the mean count
// n = window / gap plus 8 sqrt(n) + 16, so that a window runs out of rounds with a chance below
// 1e-12 (a Poisson tail); when it does, the window ends early and the verdict says so.
uint32_t OccupancyPoolRounds(uint64_t window_us, uint64_t mean_gap_us);

// Each device's o_d for about `labels_per_round` labels per occupancy round over all of `devices`:
// its share by planned bytes (rounded), at least 1, at most its chunks of m, moved off its q_d by
// one when equal (an occupancy round never has a proof round's shape); 0 for a device of one chunk
// its proof rounds already ask (no other shape is possible).
std::vector<uint32_t> OccupancyLabelsByBytes(const std::vector<PlannedDevice>& devices, uint32_t chunk_labels,
                                             uint32_t labels_per_round);

// Sets the plan's occupancy window from `request` (each device's occupancy_labels: its share of
// labels_per_round by planned bytes, at least 1, at most its chunks, and moved off q_d by one when
// equal, so an occupancy round never has a proof round's shape), and its session timeout again
// (it grows by the window and the pool's rounds). Call after SetHoldingSchedule.
// Errors: INVALID_ARGUMENT for a window without a gap or labels, a gap above the window, b not below
// the planned bytes, a pool above kMaxOccupancyRounds or one that takes the session's challenged
// labels above kMaxLabelsPerSession, or a round above kMaxLabelsPerRound labels (naming the figures
// and what to change).
Status SetOccupancySchedule(SessionPlan* plan, const OccupancyRequest& request);

// Writes the order for `plan` (protocol version 2), delivered by challenger key `challenger`, into
// `out`.
void WriteOrder(const SessionPlan& plan, const proto::KeyId& challenger, proto::WipeOrder::Builder out);

// The plan an order describes, WriteOrder's inverse as far as the order carries the plan: node,
// session, seed, node key id, lifetime, devices (selector, model, capacity, reserve, range, q, fill
// deadline), deadlines, session timeout, wave name and flags, and the parameter profile (its
// rounds, q and fill-rate settings are not in the order and stay 0; rounds is 0 in every order). A
// profile the order names as authority-signed is taken as endorsed: the caller has checked that the
// order stands under a delegation verified under the authority key, which lists that profile
// (proto/delegation.h). Not in the order, left empty: address, node key and
// certificate, reach, holding schedule, wave context beyond its name.
// REQUIRES: a shape-valid order (proto/validate.h).
SessionPlan PlanFromOrder(proto::WipeOrder::Reader order);

// The order in canonical form naming keys.challenger and carrying keys.delegation (or a lab
// delegation, see SessionKeys), checked with proto::ValidateShape and against its delegation as an
// agent will check it (proto/delegation.h, at the order's issue time), signed by keys.challenger.
// Errors: INVALID_ARGUMENT when the order fails its shape check (a bug in the plan);
// FAILED_PRECONDITION when the delegation does not cover the order (expired, another challenger
// key, the profile not listed: the authority must renew it) or there is none.
StatusOr<proto::SignedEnvelope> SignOrder(const SessionPlan& plan, const SessionKeys& keys);

// Whether `order`'s delegation, verified under `authority`, names `inventory` (the digest of the
// inventory its plan came from): AssumptionInputs::inventory_signed. False when it names none (or does
// not verify). Errors: FAILED_PRECONDITION when it names another inventory than the plan's: the
// challenger must plan only from the inventory the authority signed.
StatusOr<bool> DelegationSignsInventory(proto::WipeOrder::Reader order, const proto::PublicKey& authority,
                                        const std::optional<proto::Digest>& inventory);

}  // namespace wipeproof
