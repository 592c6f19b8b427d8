#include "prover/agent/order_checks.h"

#include <cstring>

#include "common/hex.h"

namespace wipeproof {

Status CheckOrderTime(proto::WipeOrder::Reader order, int64_t now_unix_us, const OrderTimePolicy& policy) {
  const int64_t issued = order.getIssuedAtUnixUs();
  const int64_t expires = order.getExpiresAtUnixUs();
  const int64_t skew = policy.clock_skew_us;
  // Saturating comparisons: the times are signed and come from the order.
  auto plus = [](int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; };
  auto minus = [](int64_t a, int64_t b) { return a < INT64_MIN + b ? INT64_MIN : a - b; };
  if (now_unix_us >= plus(expires, skew)) {
    return DeadlineExceededError("order expired: expiresAtUnixUs " + std::to_string(expires) + ", agent clock " +
                                 std::to_string(now_unix_us) + " (allowed clock skew " + std::to_string(skew) + " us)");
  }
  if (issued > plus(now_unix_us, skew)) {
    return FailedPreconditionError("order issued " + std::to_string(issued - now_unix_us) +
                                   " us in the future by the agent's clock, more than the allowed clock skew of " +
                                   std::to_string(skew) + " us: check both clocks (NTP)");
  }
  if (issued < minus(policy.agent_start_unix_us, skew)) {
    return FailedPreconditionError("order issued at " + std::to_string(issued) + ", before this agent started (" +
                                   std::to_string(policy.agent_start_unix_us) + ", allowed clock skew " +
                                   std::to_string(skew) +
                                   " us): it may have been seen before a restart; send a fresh order");
  }
  // expires > issued (ValidateShape), so the unsigned difference is exact.
  const uint64_t lifetime = static_cast<uint64_t>(expires) - static_cast<uint64_t>(issued);
  if (lifetime > static_cast<uint64_t>(policy.max_order_lifetime_us)) {
    return InvalidArgumentError("order valid for " + std::to_string(lifetime) +
                                " us (expiresAt - issuedAt), more than this agent's limit of " +
                                std::to_string(policy.max_order_lifetime_us) + " us");
  }
  return Status::Ok();
}

Status CheckOrderAddress(proto::WipeOrder::Reader order, const std::string& node_name,
                         const proto::KeyId& node_key_id) {
  const std::string name(order.getNodeName().cStr(), order.getNodeName().size());
  if (name != node_name) {
    return PermissionDeniedError("order is for node '" + name + "', this agent serves node '" + node_name + "'");
  }
  capnp::Data::Reader key_id = order.getNodeKeyId();
  if (key_id.size() != node_key_id.size() || std::memcmp(key_id.begin(), node_key_id.data(), key_id.size()) != 0) {
    return PermissionDeniedError("order names node key id " + HexEncode(key_id.begin(), key_id.size()) +
                                 ", this agent's node key id is " + proto::KeyIdHex(node_key_id));
  }
  return Status::Ok();
}

}  // namespace wipeproof
