#include "prover/agent/order_checks.h"

#include <cstdio>
#include <cstring>
#include <ctime>

#include "common/hex.h"

namespace wipeproof {
namespace {

// "2027-01-15T08:00:00.000000Z (Unix us 1800000000000000)": a Unix time in microseconds, UTC.
std::string UnixMicrosText(int64_t unix_us) {
  const int64_t seconds = unix_us >= 0 ? unix_us / 1'000'000 : -((-unix_us + 999'999) / 1'000'000);
  const int64_t micros = unix_us - seconds * 1'000'000;
  const time_t t = static_cast<time_t>(seconds);
  struct tm utc {};
  char text[64] = "?";
  if (gmtime_r(&t, &utc) != nullptr) {
    char date[40];
    std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &utc);
    std::snprintf(text, sizeof(text), "%s.%06lldZ", date, static_cast<long long>(micros));
  }
  return std::string(text) + " (Unix us " + std::to_string(unix_us) + ")";
}

}  // namespace

Status CheckOrderTime(proto::WipeOrder::Reader order, int64_t now_unix_us, const OrderTimePolicy& policy) {
  const int64_t issued = order.getIssuedAtUnixUs();
  const int64_t expires = order.getExpiresAtUnixUs();
  const int64_t skew = policy.clock_skew_us;
  // Saturating comparisons: the times are signed and come from the order.
  auto plus = [](int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; };
  if (now_unix_us >= plus(expires, skew)) {
    // now >= expires here, so the unsigned difference is exact whatever the order says.
    const uint64_t ago = static_cast<uint64_t>(now_unix_us) - static_cast<uint64_t>(expires);
    return DeadlineExceededError("order expired: expiresAtUnixUs " + std::to_string(expires) + ", agent clock " +
                                 std::to_string(now_unix_us) + ", " + std::to_string(ago) +
                                 " us ago by the agent's clock (allowed clock skew " + std::to_string(skew) +
                                 " us): check both clocks (NTP)");
  }
  if (issued > plus(now_unix_us, skew)) {
    return FailedPreconditionError("order issued " + std::to_string(issued - now_unix_us) +
                                   " us in the future by the agent's clock, more than the allowed clock skew of " +
                                   std::to_string(skew) + " us: check both clocks (NTP)");
  }
  if (issued < policy.agent_start_unix_us) {
    // issued < start, so the unsigned difference is exact (the times come from the order: no overflow).
    const uint64_t earlier = static_cast<uint64_t>(policy.agent_start_unix_us) - static_cast<uint64_t>(issued);
    return FailedPreconditionError(
        "order issued before this agent started at " + UnixMicrosText(policy.agent_start_unix_us) +
        ": issuedAtUnixUs " + std::to_string(issued) + " is " + std::to_string(earlier) +
        " us earlier, and the agent's replay guard does not outlive a restart; the challenger must issue a fresh "
        "order (if this repeats, the challenger's clock lags this node's: check both clocks, NTP)");
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

Status CheckOrderAddress(proto::WipeOrder::Reader order, const std::string& node_name, const proto::KeyId& node_key_id,
                         const proto::KeyId& challenger_key_id) {
  const std::string name(order.getNodeName().cStr(), order.getNodeName().size());
  if (name != node_name) {
    return PermissionDeniedError("order is for node '" + name + "', this agent serves node '" + node_name + "'");
  }
  capnp::Data::Reader key_id = order.getNodeKeyId();
  if (key_id.size() != node_key_id.size() || std::memcmp(key_id.begin(), node_key_id.data(), key_id.size()) != 0) {
    return PermissionDeniedError("order names node key id " + HexEncode(key_id.begin(), key_id.size()) +
                                 ", this agent's node key id is " + proto::KeyIdHex(node_key_id));
  }
  capnp::Data::Reader challenger = order.getChallengerKeyId();
  if (challenger.size() != challenger_key_id.size() ||
      std::memcmp(challenger.begin(), challenger_key_id.data(), challenger.size()) != 0) {
    return PermissionDeniedError("order names challenger key id " + HexEncode(challenger.begin(), challenger.size()) +
                                 ", this agent trusts challenger key id " + proto::KeyIdHex(challenger_key_id) +
                                 " only (its verdicts could not be accepted)");
  }
  return Status::Ok();
}

Status CheckOrderOccupancy(proto::WipeOrder::Reader order, uint64_t max_session_timeout_us) {
  const uint64_t window = order.getOccupancyWindowUs();
  if (window == 0 || order.getSessionTimeoutUs() <= max_session_timeout_us) return Status::Ok();
  return FailedPreconditionError("the order asks to hold labels for an occupancy window of " + std::to_string(window) +
                                 " us, so its session (fill, rounds and window) may last " +
                                 std::to_string(order.getSessionTimeoutUs()) +
                                 " us; this agent keeps a session at most " + std::to_string(max_session_timeout_us) +
                                 " us (serve --session_timeout_us): raise it, or order a shorter window or fill");
}

Status CheckOrderConnection(proto::WipeOrder::Reader order, const std::optional<proto::KeyId>& authenticated_as) {
  capnp::Data::Reader named = order.getChallengerKeyId();
  const std::string want = "the order names challenger key id " + HexEncode(named.begin(), named.size()) +
                           " and is accepted only on a connection authenticated as that key";
  if (!authenticated_as) return PermissionDeniedError(want + "; this connection is not authenticated");
  if (named.size() != authenticated_as->size() ||
      std::memcmp(named.begin(), authenticated_as->data(), named.size()) != 0) {
    return PermissionDeniedError(want + "; this connection is authenticated as key id " +
                                 proto::KeyIdHex(*authenticated_as));
  }
  return Status::Ok();
}

}  // namespace wipeproof
