// The agent's replay guard: the session ids of authentic orders it has seen, each remembered until
// its order can no longer be accepted anyway (expiresAt + allowed clock skew), so memory stays
// bounded without ever forgetting an id that could still be replayed.
//
// What it does not cover, and how AgentCore narrows the gap: the set lives in memory, so a restart
// forgets it. AgentCore therefore also refuses every order issued before the agent started, with no
// clock skew subtracted (order_checks.h): an order a previous run saw at or after its issue time
// was issued before that run stopped, so before this one started. (Subtracting the skew, as an
// earlier version did, let an order seen up to `skew` before a restart be accepted again after it.)
// The price: after a restart, a challenger whose clock lags the node's by X is refused for X.
// The gap that remains: an order dated in the future by the node's clock (the challenger's clock
// ahead, accepted up to the skew) and seen less than that lead before a restart passes the start
// check; only a persistent replay set would close it. Orders must also be short-lived
// (AgentConfig::max_order_lifetime_us), which bounds how long an id is kept.
//
// Thread-safety: thread-compatible; AgentCore calls it under its mutex.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof {

using SessionId = std::array<uint8_t, proto::kSessionIdBytes>;

class SeenSessions {
 public:
  // Remembers at most `capacity` ids at a time.
  explicit SeenSessions(size_t capacity) : capacity_(capacity) {}

  bool Contains(const SessionId& id) const { return forget_at_.count(id) != 0; }

  // Remembers `id` until the wall clock reaches `forget_at_unix_us`. First forgets expired ids
  // (Prune(now_unix_us)). Errors: ALREADY_EXISTS if `id` is remembered; RESOURCE_EXHAUSTED when
  // `capacity` unexpired ids are remembered (only orders under the authority's delegation get here, so this is a
  // misbehaving authority, not an outsider).
  Status Insert(const SessionId& id, int64_t forget_at_unix_us, int64_t now_unix_us);

  // Forgets ids whose time has come (forget_at <= now).
  void Prune(int64_t now_unix_us);

  size_t size() const { return forget_at_.size(); }

 private:
  size_t capacity_;
  std::map<SessionId, int64_t> forget_at_;           // id -> Unix us
  std::set<std::pair<int64_t, SessionId>> by_time_;  // (forget_at, id), oldest first
};

}  // namespace wipeproof
