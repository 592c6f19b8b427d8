#include "challenger/session/wave_verdict.h"

#include <capnp/message.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

#include "challenger/session/verdict.h"

namespace wipeproof {

namespace {


// pass, complete, the bound summary: from the members' verdicts.
struct WaveFacts {
  bool pass = true;
  WaveBoundSummary summary;
};

WaveFacts Recompute(const std::string& wave, bool complete, const std::vector<proto::Verdict::Reader>& verdicts,
                    const std::vector<std::string>& nodes) {
  WaveFacts f;
  std::vector<WaveMemberBound> members;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    WaveMemberBound m = WaveMemberFromVerdict(verdicts[i]);
    m.node = nodes[i];
    f.pass = f.pass && m.pass;
    members.push_back(std::move(m));
  }
  f.summary = SummarizeWaveBound(wave, members, complete);
  return f;
}

}  // namespace

StatusOr<proto::SignedEnvelope> SignWaveVerdict(const std::string& wave, bool declared_complete,
                                                const std::vector<WaveMemberVerdict>& members,
                                                const proto::KeyPair& challenger, int64_t issued_at_unix_us) {
  std::vector<proto::Parsed<proto::Verdict>> parsed;
  std::vector<proto::Verdict::Reader> verdicts;
  std::vector<std::string> nodes;
  std::vector<std::string> missing;
  for (const WaveMemberVerdict& m : members) {
    if (!m.has_verdict) {
      missing.push_back(m.node);
      continue;
    }
    auto v = proto::VerifyAndParse<proto::Verdict>(m.verdict, challenger.public_key);
    if (!v.ok())
      return InvalidArgumentError("wave " + wave + ": verdict of node " + m.node + ": " + v.status().message());
    parsed.push_back(std::move(v).value());
    nodes.push_back(m.node);
  }
  for (auto& p : parsed) verdicts.push_back(p.root());
  const bool complete = declared_complete && missing.empty();
  WaveFacts facts = Recompute(wave, complete, verdicts, nodes);
  std::string statement = facts.summary.statement;
  if (!missing.empty()) statement = "no bound for wave " + wave + ": node " + missing.front() + " has no verdict";

  capnp::MallocMessageBuilder message;
  auto out = message.initRoot<proto::WaveVerdict>();
  out.setWaveName(wave);
  auto ids = out.initSessionIds(static_cast<unsigned>(verdicts.size()));
  auto names = out.initNodeNames(static_cast<unsigned>(verdicts.size()));
  auto digests = out.initVerdictDigests(static_cast<unsigned>(verdicts.size()));
  size_t i = 0;
  for (const WaveMemberVerdict& m : members) {
    if (!m.has_verdict) continue;
    ids.set(static_cast<unsigned>(i), verdicts[i].getSessionId());
    names.set(static_cast<unsigned>(i), m.node);
    const proto::Digest d = proto::Blake2b256(proto::AsView(m.verdict.payload));
    digests.set(static_cast<unsigned>(i), proto::AsView(d.data(), d.size()));
    ++i;
  }
  out.setPass(facts.pass && missing.empty());
  out.setComplete(complete);
  out.setConfidence(facts.summary.confidence);
  out.setBoundStated(facts.summary.bound_stated);
  out.setUnwipedBoundBytes(facts.summary.bound_stated ? facts.summary.bound.total_bytes : 0);
  out.setStatement(statement);
  out.setIssuedAtUnixUs(issued_at_unix_us);
  // Every member's order on the one monotonic clock of this process, from the wave's first.
  std::vector<int64_t> sent;
  for (const WaveMemberVerdict& m : members) {
    if (m.has_verdict) sent.push_back(m.order_sent_monotonic_us);
  }
  if (!sent.empty() && *std::min_element(sent.begin(), sent.end()) >= 0) {
    const int64_t origin = *std::min_element(sent.begin(), sent.end());
    auto offsets = out.initOrderSentAfterWaveUs(static_cast<unsigned>(sent.size()));
    for (size_t k = 0; k < sent.size(); ++k)
      offsets.set(static_cast<unsigned>(k), static_cast<uint64_t>(sent[k] - origin));
  }
  return proto::SignMessage(out.asReader(), challenger);
}

Status RecheckWaveVerdict(proto::WaveVerdict::Reader wave, const std::vector<proto::Verdict::Reader>& members) {
  auto differs = [](const std::string& field, const std::string& stated, const std::string& recomputed) {
    return DataLossError("wave verdict: " + field + " is " + stated + ", recomputed " + recomputed);
  };
  if (members.size() != wave.getNodeNames().size()) {
    return differs("the member count", std::to_string(wave.getNodeNames().size()), std::to_string(members.size()));
  }
  if (members.empty()) return DataLossError("wave verdict: it names no member session");
  std::set<std::string> nodes_seen, sessions_seen;
  for (size_t i = 0; i < members.size(); ++i) {
    const std::string node = wave.getNodeNames()[static_cast<unsigned>(i)].cStr();
    const proto::ByteView id = members[i].getSessionId();
    if (!nodes_seen.insert(node).second || !sessions_seen.insert(std::string(id.begin(), id.end())).second) {
      return DataLossError("wave verdict: node " + node + " or its session is listed twice");
    }
  }
  std::vector<std::string> nodes;
  for (auto n : wave.getNodeNames()) nodes.push_back(n.cStr());
  WaveFacts facts = Recompute(wave.getWaveName().cStr(), wave.getComplete(), members, nodes);
  // A pass needs every member's pass; a wave that is not complete may fail for a node with no
  // verdict, which no member verdict shows.
  if (wave.getPass() ? !facts.pass : (wave.getComplete() && facts.pass)) {
    return differs("pass", wave.getPass() ? "true" : "false", facts.pass ? "true" : "false");
  }
  if (wave.getBoundStated() != facts.summary.bound_stated) {
    return differs("boundStated", wave.getBoundStated() ? "true" : "false",
                   facts.summary.bound_stated ? "true" : "false");
  }
  const uint64_t bytes = facts.summary.bound_stated ? facts.summary.bound.total_bytes : 0;
  if (wave.getUnwipedBoundBytes() != bytes) {
    return differs("unwipedBoundBytes", std::to_string(wave.getUnwipedBoundBytes()), std::to_string(bytes));
  }
  if (wave.getConfidence() != facts.summary.confidence) {
    auto text = [](double x) {
      char out[40];
      std::snprintf(out, sizeof out, "%.17g", x);
      return std::string(out);
    };
    return differs("confidence", text(wave.getConfidence()), text(facts.summary.confidence));
  }
  // A complete wave states exactly the recomputed statement. One that is not complete states no
  // bound, in one of the two reasons SignWaveVerdict gives: the recomputed one (not complete), or a
  // node of the wave without a verdict, which no member verdict shows (so any node not listed).
  const std::string statement = wave.getStatement().cStr();
  if (statement != facts.summary.statement) {
    const std::string no_verdict_prefix = "no bound for wave " + std::string(wave.getWaveName().cStr()) + ": node ";
    const std::string no_verdict_suffix = " has no verdict";
    bool names_unlisted_node = false;
    if (!wave.getComplete() && statement.size() > no_verdict_prefix.size() + no_verdict_suffix.size() &&
        statement.compare(0, no_verdict_prefix.size(), no_verdict_prefix) == 0 &&
        statement.compare(statement.size() - no_verdict_suffix.size(), no_verdict_suffix.size(),
                          no_verdict_suffix) == 0) {
      const std::string node = statement.substr(
          no_verdict_prefix.size(), statement.size() - no_verdict_prefix.size() - no_verdict_suffix.size());
      names_unlisted_node = std::find(nodes.begin(), nodes.end(), node) == nodes.end();
    }
    if (!names_unlisted_node) {
      return differs("the statement", "'" + statement + "'",
                     "'" + facts.summary.statement + "'" +
                         (wave.getComplete() ? "" : " (or '" + no_verdict_prefix + "N" + no_verdict_suffix +
                                                        "' for a node N it does not list)"));
    }
  }
  return Status::Ok();
}

}  // namespace wipeproof
