// Every numeric field of a profile or an inventory has a range, checked when the file is loaded
// with an error that names the field and the range (no value wraps, saturates or turns into UB
// later); plan-level limits that depend on both; duplicate JSON keys are refused naming the path.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "challenger/fleet/inventory.h"
#include "challenger/fleet/plan_builder.h"
#include "challenger/parameters/parameter_profile.h"
#include "challenger/session/session_plan.h"
#include "common/hex.h"
#include "common/json_fields.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

constexpr char kProfile[] = R"({
  "name": "rack-cpu-2^14", "chunk_labels": 16384, "format": "posedb-blake3-c1", "rounds": 32,
  "labels_per_round": 64, "labels_per_round_by_model": {"NVIDIA H200": 256},
  "round_deadline_us": 400, "fill_deadline_ms": 0, "fill_rate_mib_per_s": 8, "fill_slack_s": 60,
  "adversary": {"class": "commodity-cpu", "t_min_ps": 40000, "safety_factor": 2},
  "confidence": 0.999, "calibrated": true, "honest_round_p999_us": 180, "order_ttl_s": 120
})";

// Parses kProfile with `edit` applied; the error message, or "" when it loaded.
std::string ProfileError(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json doc = nlohmann::json::parse(kProfile);
  edit(doc);
  auto p = ParseProfileJson(doc.dump(), "p.json");
  if (p.ok()) return "";
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  return p.status().message();
}

TEST(ProfileLimitsTest, TheTestersValuesAreRefusedNamingFieldAndRange) {
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      // Used to wrap to a 2.8 s fill deadline.
      {[](nlohmann::json& d) { d["fill_slack_s"] = uint64_t{18446744073710}; },
       "p.json: fill_slack_s: must be >= 0 and <= 86400 (1 day), got 18446744073710"},
      // Used to give a 384 us fill deadline.
      {[](nlohmann::json& d) { d["fill_deadline_ms"] = uint64_t{18446744073709552}; },
       "p.json: fill_deadline_ms: must be >= 0 and <= 86400000 (0: derived; 1 day), got 18446744073709552"},
      // Used to give "expiresAtUnixUs is not after issuedAtUnixUs" only when a session started.
      {[](nlohmann::json& d) { d["order_ttl_s"] = uint64_t{1} << 62; },
       "p.json: order_ttl_s: must be >= 1 and <= 86400 (24 h: the agent refuses orders valid for longer)"},
      {[](nlohmann::json& d) { d["order_ttl_s"] = 86401; }, "order_ttl_s: must be >= 1 and <= 86400"},
      {[](nlohmann::json& d) { d["order_ttl_s"] = 0; }, "order_ttl_s: must be >= 1 and <= 86400"},
      // Used to convert infinity to an integer.
      {[](nlohmann::json& d) { d["fill_rate_mib_per_s"] = 1e-300; },
       "p.json: fill_rate_mib_per_s: must be a finite number >= 0.001 and <= 1000000000, got 1e-300"},
      {[](nlohmann::json& d) { d["fill_rate_mib_per_s"] = 0; }, "fill_rate_mib_per_s: must be a finite number"},
      {[](nlohmann::json& d) { d["fill_rate_mib_per_s"] = -8; }, "fill_rate_mib_per_s: must be a finite number"},
      {[](nlohmann::json& d) { d["fill_rate_mib_per_s"] = 1e300; }, "fill_rate_mib_per_s: must be a finite number"},
      // Used to make the challenger wait "0 us".
      {[](nlohmann::json& d) { d["round_deadline_us"] = uint64_t{1} << 63; },
       "p.json: round_deadline_us: must be >= 1 and <= 86400000000 (1 day), got 9223372036854775808"},
      {[](nlohmann::json& d) { d["round_deadline_us"] = 0; }, "round_deadline_us: must be >= 1"},
      // Used to be accepted, then every session failed "verdict over the limit" after all rounds.
      {[](nlohmann::json& d) { d["rounds"] = 250000; },
       "p.json: rounds: must be >= 1 and <= 4096 (the verdict lists every round), got 250000"},
      {[](nlohmann::json& d) { d["rounds"] = uint64_t{1} << 40; }, "rounds: must be >= 1 and <= 4096"},
      {[](nlohmann::json& d) { d["labels_per_round"] = 131073; },
       "labels_per_round: must be >= 1 and <= 131072 (2^17), got 131073"},
      {[](nlohmann::json& d) { d["labels_per_round"] = uint64_t{1} << 33; }, "labels_per_round: must be >= 1"},
      {[](nlohmann::json& d) { d["labels_per_round_by_model"]["NVIDIA H200"] = 0; },
       "labels_per_round_by_model.NVIDIA H200: must be >= 1 and <= 131072"},
      {[](nlohmann::json& d) { d["chunk_labels"] = uint64_t{1} << 40; }, "chunk_labels: 1099511627776 is not a power"},
      {[](nlohmann::json& d) { d["adversary"]["t_min_ps"] = uint64_t{1} << 32; },
       "adversary.t_min_ps: must be >= 1 and <= 4294967295 (2^32 - 1), got 4294967296"},
      {[](nlohmann::json& d) { d["adversary"]["safety_factor"] = 1e7; },
       "adversary.safety_factor: must be a finite number >= 1 and <= 1000000, got 10000000"},
      {[](nlohmann::json& d) { d["honest_round_p999_us"] = uint64_t{1} << 63; },
       "honest_round_p999_us: must be >= 0 and <= 86400000000 (1 day)"},
      {[](nlohmann::json& d) { d["calibrated_at_unix_us"] = uint64_t{1} << 63; },
       "calibrated_at_unix_us: must be >= 0 and <= 9223372036854775807"},
  };
  for (const auto& [edit, message] : cases) {
    const std::string error = ProfileError(edit);
    EXPECT_NE(error.find(message), std::string::npos) << "want: " << message << "\ngot:  " << error;
  }
}

TEST(ProfileLimitsTest, TheLargestValuesLoad) {
  const std::string error = ProfileError([](nlohmann::json& d) {
    d["rounds"] = kMaxProfileRounds;
    d["labels_per_round"] = kMaxLabelsPerRound;
    d["round_deadline_us"] = kMaxDeadlineUs;
    d["fill_deadline_ms"] = kMaxDeadlineUs / 1000;
    d["fill_rate_mib_per_s"] = 1e9;
    d["fill_slack_s"] = 86400;
    d["order_ttl_s"] = 86400;
    d["honest_round_p999_us"] = kMaxDeadlineUs;
    d["adversary"]["t_min_ps"] = UINT32_MAX;
    d["adversary"]["safety_factor"] = 1e6;
    d["calibrated_at_unix_us"] = INT64_MAX;
  });
  EXPECT_EQ(error, "");
  EXPECT_EQ(ProfileError([](nlohmann::json& d) { d["fill_rate_mib_per_s"] = 0.001; }), "");
}

TEST(ProfileLimitsTest, ValidateProfileChecksTheStructToo) {
  Profile p = testing::TestProfile();
  ASSERT_TRUE(ValidateProfile(p).ok());
  auto error = [](Profile q) { return ValidateProfile(q).message(); };
  Profile q = p;
  q.order_ttl_us = kMaxOrderTtlUs + 1;
  EXPECT_NE(error(q).find("order_ttl_s: must be >= 1 and <= 86400"), std::string::npos) << error(q);
  q = p;
  q.fill_deadline_us = kMaxDeadlineUs + 1000;
  EXPECT_NE(error(q).find("fill_deadline_ms: must be 0 (derived) or <= 86400000 (1 day)"), std::string::npos)
      << error(q);
  q = p;
  q.fill_slack_us = UINT64_MAX;
  EXPECT_NE(error(q).find("fill_slack_s: must be <= 86400"), std::string::npos) << error(q);
  q = p;
  q.fill_rate_bytes_per_s = std::numeric_limits<double>::infinity();
  EXPECT_NE(error(q).find("fill_rate_mib_per_s"), std::string::npos) << error(q);
  q = p;
  q.rounds = 4097;
  EXPECT_NE(error(q).find("rounds: must be >= 1 and <= 4096"), std::string::npos) << error(q);
  q = p;
  q.calibrated_at_unix_us = -1;
  EXPECT_NE(error(q).find("calibrated_at_unix_us"), std::string::npos) << error(q);
}

TEST(ProfileLimitsTest, FillDeadlineSaturatesInsteadOfOverflowing) {
  Profile p = testing::TestProfile();
  p.fill_deadline_us = 0;
  p.fill_rate_bytes_per_s = 1e-300;  // not validated: FillDeadlineUs must still not be UB
  EXPECT_EQ(FillDeadlineUs(p, uint64_t{1} << 40), UINT64_MAX);
  p.fill_rate_bytes_per_s = 0;
  EXPECT_EQ(FillDeadlineUs(p, 1), UINT64_MAX);
  p.fill_rate_bytes_per_s = 8.0 * 1024 * 1024;
  p.fill_slack_us = UINT64_MAX - 10;
  EXPECT_EQ(FillDeadlineUs(p, uint64_t{1} << 30), UINT64_MAX);
  p.fill_slack_us = 60'000'000;
  EXPECT_EQ(FillDeadlineUs(p, uint64_t{2} << 30), 316'000'000u);  // unchanged for sane values
}

// Inventory with one node of `devices` devices of `capacity` bytes each (model "m", reserve 0).
Inventory OneNode(size_t devices, uint64_t capacity) {
  Inventory inv;
  InventoryNode n;
  n.name = "n";
  n.address = "127.0.0.1:7700";
  n.public_key = testing::TestKeyPublic(0x33);
  for (size_t i = 0; i < devices; ++i) n.devices.push_back({"d" + std::to_string(i), "m", capacity});
  inv.nodes.push_back(n);
  inv.reserve_bytes_by_model["m"] = 0;
  return inv;
}

TEST(PlanLimitsTest, DerivedFillDeadlineOverADayIsRefused) {
  Profile p = testing::TestProfile();
  p.fill_deadline_us = 0;
  p.fill_rate_bytes_per_s = 0.001 * 1024 * 1024;  // the slowest allowed: 1 GiB takes ~12 days
  FakeClock clock;
  auto plan = BuildPlan(OneNode(1, uint64_t{1} << 30), "n", p, {}, clock);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find("derives a fill deadline over 86400000000 us (1 day)"), std::string::npos)
      << plan.status().ToString();
  EXPECT_NE(plan.status().message().find("fill_rate_mib_per_s"), std::string::npos);
  p.fill_rate_bytes_per_s = 1024 * 1024;  // 1 GiB at 1 MiB/s: 1024 s + slack
  EXPECT_TRUE(BuildPlan(OneNode(1, uint64_t{1} << 30), "n", p, {}, clock).ok());
}

TEST(PlanLimitsTest, LabelsPerRoundAndPerSessionAreBounded) {
  Profile p = testing::TestProfile();
  p.chunk_labels = 1;
  p.labels_per_round = kMaxLabelsPerRound;
  p.rounds = 1;
  FakeClock clock;
  const uint64_t device = uint64_t{kMaxLabelsPerRound} * 32;  // 2^17 one-label chunks
  EXPECT_TRUE(BuildPlan(OneNode(1, device), "n", p, {}, clock).ok());
  auto two = BuildPlan(OneNode(2, device), "n", p, {}, clock);
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("asks 262144 labels per round over the node's 2 devices"), std::string::npos)
      << two.status().ToString();
  p.rounds = 128;  // 2^17 * 128 = 2^24: the limit
  EXPECT_TRUE(BuildPlan(OneNode(1, device), "n", p, {}, clock).ok());
  p.rounds = 129;
  auto long_session = BuildPlan(OneNode(1, device), "n", p, {}, clock);
  ASSERT_FALSE(long_session.ok());
  EXPECT_NE(long_session.status().message().find("over the limit of 16777216 per session"), std::string::npos)
      << long_session.status().ToString();
}

std::string NodeKeyHex() {
  const proto::PublicKey key = testing::TestKeyPublic(0x33);
  return HexEncode(key.data(), key.size());
}

// A good inventory, as compact JSON (keys sorted): capacity_bytes of nodes[0].devices[1] is
// 150754820096, waves[0] has a node list before its other keys.
std::string InventoryText() {
  nlohmann::json doc = nlohmann::json::parse(R"({
    "nodes": [
      {"name": "gpu-01", "address": "10.0.0.11:7700", "public_key": ")" +
                                             NodeKeyHex() + R"(",
       "devices": [
         {"selector": "host", "model": "host-dram", "capacity_bytes": 2147483648},
         {"selector": "GPU-1", "model": "NVIDIA H200", "capacity_bytes": 150754820096}]},
      {"name": "gpu-02", "address": "10.0.0.12:7700", "public_key": ")" +
                                             NodeKeyHex() + R"(",
       "devices": [{"selector": "host", "model": "host-dram", "capacity_bytes": 1073741824}]}
    ],
    "waves": [{"name": "rack-1", "nodes": ["gpu-01"], "period_s": 86400, "jitter_s": 21600, "complete": true},
              {"name": "rack-2", "nodes": ["gpu-02"], "period_s": 3600, "complete": false}],
    "reserves": {"host-dram": 0, "NVIDIA H200": 536870912}
  })");
  return doc.dump();
}

std::string Replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string InventoryError(const std::string& text) {
  auto inv = ParseInventoryJson(text, "", "inv.json");
  if (inv.ok()) return "";
  EXPECT_EQ(inv.status().code(), StatusCode::kInvalidArgument);
  return inv.status().message();
}

TEST(InventoryLimitsTest, NumbersAndSizesHaveRanges) {
  ASSERT_EQ(InventoryError(InventoryText()), "");
  auto edited = [](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json doc = nlohmann::json::parse(InventoryText());
    edit(doc);
    return InventoryError(doc.dump());
  };
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& d) { d["nodes"][0]["devices"][1]["capacity_bytes"] = (uint64_t{1} << 50) + 1; },
       "inv.json: nodes[0].devices[1].capacity_bytes: must be > 0 and <= 1125899906842624 (1 PiB), got "
       "1125899906842625"},
      {[](nlohmann::json& d) { d["nodes"][0]["devices"][1]["capacity_bytes"] = UINT64_MAX; },
       "nodes[0].devices[1].capacity_bytes: must be > 0 and <= 1125899906842624"},
      {[](nlohmann::json& d) { d["reserves"]["host-dram"] = uint64_t{1} << 60; },
       "reserves.host-dram: must be <= 1125899906842624 (1 PiB), got 1152921504606846976"},
      {[](nlohmann::json& d) { d["waves"][0]["period_s"] = 1e300; },
       "waves[0].period_s: must be > 0 and <= 31622400 (366 days), got 1e+300"},
      {[](nlohmann::json& d) { d["waves"][1]["period_s"] = -1; }, "waves[1].period_s: must be > 0"},
      {[](nlohmann::json& d) {
         for (int i = 2; i <= 257; ++i) {
           d["nodes"][1]["devices"].push_back(
               {{"selector", "d" + std::to_string(i)}, {"model", "host-dram"}, {"capacity_bytes", 4096}});
         }
       },
       "nodes[1].devices: 257 devices, over the limit of 256"},
      {[](nlohmann::json& d) { d["nodes"][0]["devices"][0]["selector"] = std::string(257, 's'); },
       "nodes[0].devices[0].selector: 257 bytes, over the limit of 256"},
      {[](nlohmann::json& d) { d["nodes"][1]["name"] = std::string(300, 'n'); },
       "nodes[1].name: 300 bytes, over the limit of 256"},
  };
  for (const auto& [edit, message] : cases) {
    const std::string error = edited(edit);
    EXPECT_NE(error.find(message), std::string::npos) << "want: " << message << "\ngot:  " << error;
  }
}

// A held wave (inventory.h "hold"): its fields, and a window (period + jitter) an order may ask.
TEST(InventoryLimitsTest, AHeldWavesFieldsHaveRanges) {
  auto edited = [](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json doc = nlohmann::json::parse(InventoryText());
    doc["waves"][1]["hold"] = {{"mean_gap_s", 1}, {"shortfall", 0.25}, {"labels_per_round", 8}};
    edit(doc);
    return InventoryError(doc.dump());
  };
  EXPECT_EQ(edited([](nlohmann::json&) {}), "");
  auto parsed = ParseInventoryJson(
      [] {
        nlohmann::json doc = nlohmann::json::parse(InventoryText());
        doc["waves"][1]["hold"] = {{"mean_gap_s", 2.5}, {"shortfall", 0.25}, {"labels_per_round", 8}};
        return doc.dump();
      }(),
      "", "inv.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_TRUE(parsed->waves[1].hold.has_value());
  EXPECT_EQ(parsed->waves[1].hold->mean_gap_s, 2.5);
  EXPECT_EQ(parsed->waves[1].hold->shortfall, 0.25);
  EXPECT_EQ(parsed->waves[1].hold->labels_per_round, 8u);
  EXPECT_FALSE(parsed->waves[0].hold.has_value());
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& d) { d["waves"][1]["hold"]["mean_gap_s"] = 3601; },
       "inv.json: waves[1].hold.mean_gap_s: must be in [0.000001, the wave's period_s 3600] seconds, got 3601"},
      {[](nlohmann::json& d) { d["waves"][1]["hold"]["mean_gap_s"] = 0; }, "waves[1].hold.mean_gap_s: must be in"},
      {[](nlohmann::json& d) { d["waves"][1]["hold"]["shortfall"] = 1; },
       "waves[1].hold.shortfall: must be a fraction in (0, 1) of the planned bytes, got 1"},
      {[](nlohmann::json& d) { d["waves"][1]["hold"]["labels_per_round"] = 0; },
       "waves[1].hold.labels_per_round: must be in [1, 131072], got 0"},
      {[](nlohmann::json& d) { d["waves"][1]["hold"]["gap"] = 1; }, "waves[1].hold"},
      {[](nlohmann::json& d) { d["waves"][1]["hold"].erase("shortfall"); }, "waves[1].hold.shortfall"},
      {[](nlohmann::json& d) {
         d["waves"][1]["period_s"] = 2'000'000;
         d["waves"][1]["jitter_s"] = 700'000;
       },
       "waves[1].hold: a held wave's window lasts up to period_s + jitter_s = 2700000 s, beyond the 2678400 s "
       "(31 days) an order may ask"},
      {[](nlohmann::json& d) {
         d["waves"][1]["period_s"] = 86'400;
         d["waves"][1]["jitter_s"] = 43'200;
       },
       "waves[1].hold: a window of up to 129600 s at a mean gap of 1 s needs a pool of more than 131072 occupancy "
       "rounds: lengthen mean_gap_s or shorten the period"},
      {[](nlohmann::json& d) {
         d["waves"][1]["hold"]["mean_gap_s"] = 0.1;
         d["waves"][1]["hold"]["labels_per_round"] = 1000;
       },
       "waves[1].hold: a window of up to 3600 s at a mean gap of 0.1 s plans 37534 rounds of 1000 labels, above "
       "the 16777216 a session may hold: ask fewer labels_per_round or lengthen mean_gap_s"},
  };
  for (const auto& [edit, message] : cases) {
    const std::string error = edited(edit);
    EXPECT_NE(error.find(message), std::string::npos) << "want: " << message << "\ngot:  " << error;
  }
}

TEST(DuplicateKeyTest, InventoryDuplicatesAreRefusedNamingThePath) {
  const std::string good = InventoryText();
  const std::vector<std::pair<std::string, std::string>> cases = {
      // The tester's case: two capacity_bytes in one device (the last one used to win silently).
      {Replaced(good, R"("capacity_bytes":150754820096)", R"("capacity_bytes":1,"capacity_bytes":150754820096)"),
       "inv.json: nodes[0].devices[1].capacity_bytes: duplicate key"},
      {Replaced(good, R"("name":"gpu-02")", R"("name":"gpu-02","name":"gpu-03")"),
       "inv.json: nodes[1].name: duplicate"},
      // After an array of strings (waves[0].nodes) and a whole object, the index is still right.
      {Replaced(good, R"("complete":false)", R"("complete":false,"complete":true)"),
       "inv.json: waves[1].complete: duplicate key"},
      {Replaced(good, R"("reserves":{)", R"("reserves":{"host-dram":0,)"), "inv.json: reserves.host-dram: duplicate"},
      {Replaced(good, R"({"nodes":)", R"({"waves":[],"nodes":)"), "inv.json: waves: duplicate key"},
  };
  for (const auto& [text, message] : cases) {
    const std::string error = InventoryError(text);
    EXPECT_NE(error.find(message), std::string::npos) << "want: " << message << "\ngot:  " << error;
  }
}

TEST(DuplicateKeyTest, ProfileDuplicatesAreRefusedNamingThePath) {
  const std::string good = nlohmann::json::parse(kProfile).dump();
  ASSERT_TRUE(ParseProfileJson(good).ok());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Replaced(good, R"("rounds":32)", R"("rounds":32,"rounds":4)"), "p.json: rounds: duplicate key"},
      {Replaced(good, R"("t_min_ps":40000)", R"("t_min_ps":1,"t_min_ps":40000)"),
       "p.json: adversary.t_min_ps: duplicate key"},
      {Replaced(good, R"("NVIDIA H200":256)", R"("NVIDIA H200":256,"NVIDIA H200":1)"),
       "p.json: labels_per_round_by_model.NVIDIA H200: duplicate key"},
  };
  for (const auto& [text, message] : cases) {
    auto p = ParseProfileJson(text, "p.json");
    ASSERT_FALSE(p.ok()) << message;
    EXPECT_NE(p.status().message().find(message), std::string::npos)
        << "want: " << message << "\ngot:  " << p.status().ToString();
  }
  // The same key in different objects is fine; a duplicate inside an array of objects is found.
  auto nested = ParseJsonText(R"({"a": [{"k": 1}, {"k": 2}, [1, {"x": 1, "x": 2}]]})", "t");
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.status().message(), "t: a[2][1].x: duplicate key (a key may appear only once in an object)");
  EXPECT_TRUE(ParseJsonText(R"({"a": {"k": 1}, "b": {"k": 1}, "k": [{"k": 0}]})", "t").ok());
}

}  // namespace
}  // namespace wipeproof
