#include "challenger/session/round_log.h"

#include <capnp/message.h>

#include <string>

#include "proto/codec.h"

namespace wipeproof {
namespace {

// Room kept in each record for its header, the session id and the timing rows (bytes).
constexpr size_t kRecordOverheadBytes = 64 << 10;
constexpr size_t kTimingRowBytes = 64;

}  // namespace

StatusOr<std::vector<proto::Bytes>> BuildRoundLogs(const std::array<uint8_t, proto::kSessionIdBytes>& session_id,
                                                   const std::vector<RoundRecord>& rounds,
                                                   const std::vector<RoundExchange>& exchanges) {
  if (rounds.size() != exchanges.size()) {
    return InvalidArgumentError("round log: " + std::to_string(rounds.size()) + " timings but " +
                                std::to_string(exchanges.size()) + " exchanges");
  }
  const size_t budget = proto::kMaxRoundLogBytes - kRecordOverheadBytes;
  std::vector<proto::Bytes> records;
  size_t first = 0;
  do {
    // The rounds [first, end) that fit one record (at least one, logged without its answer if need be).
    size_t end = first, bytes = 0;
    while (end < rounds.size()) {
      const size_t cost = kTimingRowBytes + exchanges[end].round.size() + exchanges[end].answer.size();
      if (end > first && bytes + cost > budget) break;
      bytes += cost;
      ++end;
    }
    capnp::MallocMessageBuilder message;
    auto log = message.initRoot<proto::RoundLog>();
    log.setSessionId(capnp::Data::Reader(session_id.data(), session_id.size()));
    log.setFirstRound(static_cast<uint32_t>(first));
    const std::vector<RoundRecord> part(rounds.begin() + static_cast<ptrdiff_t>(first),
                                        rounds.begin() + static_cast<ptrdiff_t>(end));
    WriteRoundTimings(part, log.initRounds(static_cast<unsigned>(part.size())));
    auto logged = log.initExchanges(static_cast<unsigned>(end - first));
    for (size_t i = first; i < end; ++i) {
      auto entry = logged[static_cast<unsigned>(i - first)];
      WP_ASSIGN_OR_RETURN(auto round, proto::ParseMessage<proto::ChallengeRound>(proto::AsView(exchanges[i].round)));
      entry.setRound(round.root());
      if (exchanges[i].answer.empty() || exchanges[i].round.size() + exchanges[i].answer.size() > budget) {
        continue;
      }
      auto answer = proto::ParseMessage<proto::RoundAnswer>(proto::AsView(exchanges[i].answer));
      if (answer.ok()) entry.setAnswer(answer->root());
    }
    WP_ASSIGN_OR_RETURN(proto::Bytes bytes_out, proto::EncodeCanonical(log.asReader()));
    records.push_back(std::move(bytes_out));
    first = end;
  } while (first < rounds.size());
  return records;
}

}  // namespace wipeproof
