#include "prover/agent/seen_sessions.h"

#include <string>

#include "common/hex.h"

namespace wipeproof {

Status SeenSessions::Insert(const SessionId& id, int64_t forget_at_unix_us, int64_t now_unix_us) {
  Prune(now_unix_us);
  if (Contains(id)) {
    return AlreadyExistsError("session " + HexEncode(id.data(), id.size()) +
                              " was already ordered (replayed order refused)");
  }
  if (forget_at_.size() >= capacity_) {
    return ResourceExhaustedError("replay guard full: " + std::to_string(capacity_) +
                                  " unexpired session ids remembered; refusing new orders until some expire");
  }
  forget_at_.emplace(id, forget_at_unix_us);
  by_time_.emplace(forget_at_unix_us, id);
  return Status::Ok();
}

void SeenSessions::Prune(int64_t now_unix_us) {
  while (!by_time_.empty() && by_time_.begin()->first <= now_unix_us) {
    forget_at_.erase(by_time_.begin()->second);
    by_time_.erase(by_time_.begin());
  }
}

}  // namespace wipeproof
