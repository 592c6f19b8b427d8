// The agent's replay guard: the session ids of authentic orders it has seen, each remembered until
// its order can no longer be accepted anyway (expiresAt + allowed clock skew), so memory stays
// bounded without ever forgetting an id that could still be replayed.
//
// What it does not cover, and how AgentCore closes the gap: the set lives in memory, so a restart
// forgets it. AgentCore therefore also refuses orders issued before the agent started (minus the
// allowed skew): any order a restart could have forgotten is older than that. Orders must also be
// short-lived (AgentConfig::max_order_lifetime_us), which bounds how long an id is kept.
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
  // `capacity` unexpired ids are remembered (only authority-signed orders get here, so this is a
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
