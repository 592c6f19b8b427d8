// The agent's checks of a verified, shape-valid WipeOrder that do not involve its devices: is it
// addressed to this node, and may it be accepted now. (Device checks: device_match.h. Signature,
// shape and version: proto/signing.h VerifyAndParse.)
//
// Time rule, all on the agent's wall clock `now` (Unix us), `skew` = allowed clock skew:
//   now >= expiresAt + skew           -> DEADLINE_EXCEEDED  (expired)
//   issuedAt > now + skew             -> FAILED_PRECONDITION (issued in the future: clocks differ
//                                        by more than the skew allowed)
//   issuedAt < agentStart             -> FAILED_PRECONDITION "order issued before this agent started
//                                        at ...; the challenger must issue a fresh order" (its
//                                        replay set is in memory and may have forgotten the id in
//                                        a restart, see seen_sessions.h). No skew is subtracted:
//                                        an allowance here would re-open exactly that window.
//   expiresAt - issuedAt > lifetime   -> INVALID_ARGUMENT   (valid for longer than the agent allows)
// Consequence of the agent-start rule: a challenger whose clock lags the node's by X has its fresh
// orders (issuedAt = its now) refused for the first X after every start of the agent; the message
// says so, and the challenger retries with a new order once its clock has passed the start.
// What it does not close: an order dated up to `skew` in the future by the node's clock (challenger
// clock ahead), seen by a previous run that stopped less than that lead before this one started,
// has issuedAt >= agentStart and is accepted again. Keeping clocks synchronised (NTP) and the skew
// allowance small bounds that window; see seen_sessions.h.
//
// Address rule: nodeName and nodeKeyId must be this node's, and challengerKeyId the challenger key
// this agent is configured with (whose verdicts it accepts) -> PERMISSION_DENIED otherwise.
//
// Connection rule: the order arrived on a connection authenticated (TLS, proto/tls_channel.h) as
// the key its challengerKeyId names -> PERMISSION_DENIED otherwise, naming the key the connection
// is authenticated as, or that it is not authenticated. An order is no secret (it travels to the
// agent and sits in the ledger): without this rule anyone holding a copy within its validity
// window could make the agent take all its memory.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

struct OrderTimePolicy {
  int64_t clock_skew_us = 0;          // microseconds
  int64_t agent_start_unix_us = 0;    // Unix us when the agent started
  int64_t max_order_lifetime_us = 0;  // microseconds
};

Status CheckOrderTime(proto::WipeOrder::Reader order, int64_t now_unix_us, const OrderTimePolicy& policy);

Status CheckOrderAddress(proto::WipeOrder::Reader order, const std::string& node_name, const proto::KeyId& node_key_id,
                         const proto::KeyId& challenger_key_id);

// An order with an occupancy window (WipeOrder.occupancyWindowUs) must fit the agent's longest
// session (`max_session_timeout_us`, serve --session_timeout_us): the agent would otherwise end the
// session, and free the labels, inside the window it agreed to. FAILED_PRECONDITION naming both.
Status CheckOrderOccupancy(proto::WipeOrder::Reader order, uint64_t max_session_timeout_us);

// `authenticated_as`: the key the order's connection is authenticated as; nullopt when none.
Status CheckOrderConnection(proto::WipeOrder::Reader order, const std::optional<proto::KeyId>& authenticated_as);

}  // namespace wipeproof
