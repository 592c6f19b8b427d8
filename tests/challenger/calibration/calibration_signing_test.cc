// Signed node profiles (proto/node_profile.h) and how the challenger reads them
// (challenger/calibration/node_profile_claims.h): a profile round-trips through signing byte for byte; a
// tampered profile, a tampered signature, another node's key or a swapped key id are refused
// before the profile is parsed; the parsed figures reduce to the claims the rule may use.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "challenger/calibration/node_profile_claims.h"
#include "common/hex.h"
#include "proto/node_profile.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

using testing::TestKey;

// A profile as bench --what=all writes it (fields the challenger reads, and some it ignores).
std::string SampleProfile(const proto::KeyPair& key) {
  nlohmann::ordered_json j = {
      {"format", "wipeproof-node-profile-v1"},
      {"node_key_id", proto::KeyIdHex(proto::KeyIdOf(key.public_key))},
      {"software_version", "wipeproof-prover 0.1.0"},
      {"created_at_unix_us", 1'800'000'000'000'000ull},
      {"created_at", "2027-01-15T08:00:00Z"},
      {"machine", {{"hostname", "gpu-01"}, {"cpu_model", "Test CPU"}, {"hardware_threads", 16}}},
      {"host_sequential_compression", {{"ps_per_compression", 61000.0}, {"compressions", 2097152}}},
      {"devices",
       {{{"kind", "host"},
         {"id", "host"},
         {"name", "host memory"},
         {"total_bytes", 64ull << 30},
         {"fill",
          {{{"format", "posedb-blake3-c1"},
            {"chunk_labels", 16384},
            {"bytes", 1ull << 28},
            {"acquire_s", 0.1},
            {"fill_s", 2.0},
            {"bytes_per_s", double(1ull << 27)}}}},
         {"lookup", {{"labels_per_lookup", 256}, {"samples", 2000}, {"p50_us", 12.0}, {"p999_us", 90.0}}}},
        {{"kind", "cuda"},
         {"id", "GPU-1"},
         {"name", "NVIDIA H200"},
         {"total_bytes", 150754820096ull},
         {"fill",
          {{{"format", "posedb-blake3-c1"},
            {"chunk_labels", 16384},
            {"bytes", 16ull << 30},
            {"acquire_s", 0.5},
            {"fill_s", 4.0},
            {"bytes_per_s", double(4ull << 30)}}}},
         {"one_chunk", {{"chunk_labels", 16384}, {"fill_us", 800.0}, {"step_ps", 32552.0}}},
         {"raw_compressions_per_s", 3e10}}}}};
  return j.dump(2) + "\n";
}

TEST(NodeProfileSigningTest, RoundTripsByteForByte) {
  const proto::KeyPair node = TestKey(0x33);
  const std::string profile = SampleProfile(node);
  auto signed_doc = proto::SignNodeProfile(profile, node);
  ASSERT_TRUE(signed_doc.ok()) << signed_doc.status().ToString();
  auto verified = proto::VerifyNodeProfile(*signed_doc, node.public_key);
  ASSERT_TRUE(verified.ok()) << verified.status().ToString();
  EXPECT_EQ(*verified, profile);
  // Deterministic (Ed25519): the same profile and key give the same document.
  EXPECT_EQ(*proto::SignNodeProfile(profile, node), *signed_doc);
  auto parsed = ParseNodeProfileJson(*verified);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->hostname, "gpu-01");
  EXPECT_EQ(parsed->devices.size(), 2u);
  EXPECT_EQ(parsed->devices[1].fills[0].bytes, 16ull << 30);
  EXPECT_DOUBLE_EQ(parsed->devices[0].lookup.p999_us, 90.0);
  EXPECT_DOUBLE_EQ(parsed->host_sequential_compression_ps, 61000.0);
}

TEST(NodeProfileSigningTest, TamperedProfilesAreRejected) {
  const proto::KeyPair node = TestKey(0x33);
  const std::string profile = SampleProfile(node);
  const std::string signed_doc = *proto::SignNodeProfile(profile, node);
  nlohmann::json doc = nlohmann::json::parse(signed_doc);

  // A node that edits its claimed fill time after signing (2.0 s -> 9.0 s).
  nlohmann::json slower = doc;
  std::string text = slower["profile"];
  const size_t at = text.find("\"fill_s\": 2.0");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 13, "\"fill_s\": 9.0");
  slower["profile"] = text;
  auto r = proto::VerifyNodeProfile(slower.dump(), node.public_key);
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied) << r.status().ToString();
  EXPECT_NE(r.status().message().find("does not verify"), std::string::npos);

  // One flipped signature bit.
  nlohmann::json flipped = doc;
  std::string sig = flipped["signature"];
  sig[10] = sig[10] == '0' ? '1' : '0';
  flipped["signature"] = sig;
  EXPECT_EQ(proto::VerifyNodeProfile(flipped.dump(), node.public_key).status().code(), StatusCode::kPermissionDenied);

  // Signed by another node's key: refused under this node's key (the inventory's), naming both ids.
  const proto::KeyPair other = TestKey(0x44);
  auto foreign = proto::VerifyNodeProfile(*proto::SignNodeProfile(profile, other), node.public_key);
  EXPECT_EQ(foreign.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(foreign.status().message().find(proto::KeyIdHex(proto::KeyIdOf(other.public_key))), std::string::npos);
  // ... also when it claims this node's key id.
  nlohmann::json swapped = nlohmann::json::parse(*proto::SignNodeProfile(profile, other));
  swapped["signer_key_id"] = proto::KeyIdHex(proto::KeyIdOf(node.public_key));
  EXPECT_EQ(proto::VerifyNodeProfile(swapped.dump(), node.public_key).status().code(), StatusCode::kPermissionDenied);

  // Shape errors.
  for (const std::string& bad : {std::string("not json"), std::string("[]"), nlohmann::json{{"format", "other"}}.dump(),
                                 [&] {
                                   nlohmann::json extra = doc;
                                   extra["note"] = "x";
                                   return extra.dump();
                                 }(),
                                 [&] {
                                   nlohmann::json short_sig = doc;
                                   short_sig["signature"] = "00";
                                   return short_sig.dump();
                                 }()}) {
    EXPECT_EQ(proto::VerifyNodeProfile(bad, node.public_key).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(NodeProfileSigningTest, LoadSignedNodeProfileChecksTheInventoryKey) {
  const proto::KeyPair node = TestKey(0x33);
  char path[] = "/tmp/wp-node-profile-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << *proto::SignNodeProfile(SampleProfile(node), node);
  auto ok = LoadSignedNodeProfile(path, node.public_key);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->software_version, "wipeproof-prover 0.1.0");
  EXPECT_EQ(LoadSignedNodeProfile(path, TestKey(0x44).public_key).status().code(), StatusCode::kPermissionDenied);
  // A profile whose inner node_key_id names another key, correctly signed: refused too.
  nlohmann::json inner = nlohmann::json::parse(SampleProfile(node));
  inner["node_key_id"] = "0000000000000000";
  std::ofstream(path) << *proto::SignNodeProfile(inner.dump(), node);
  EXPECT_EQ(LoadSignedNodeProfile(path, node.public_key).status().code(), StatusCode::kInvalidArgument);
  std::remove(path);
}

TEST(NodeProfileClaimsTest, FillEstimateSequentialTimeAndNotes) {
  const proto::KeyPair node = TestKey(0x33);
  auto profile = ParseNodeProfileJson(SampleProfile(node));
  ASSERT_TRUE(profile.ok());
  // Same m: host 2 GiB at 128 MiB/s plus acquire scaled (0.1 s per 256 MiB): 16 s + 0.8 s.
  const NodeDeviceProfile& host = *profile->FindDevice("host");
  EXPECT_NEAR(static_cast<double>(NodeFillEstimateUs(host, LabelFormat::kC1, 16384, 2ull << 30)), 16.8e6, 2);
  // No figure at another m: not extrapolated, no claim.
  EXPECT_EQ(NodeFillEstimateUs(host, LabelFormat::kC1, 131072, 2ull << 30), 0u);
  EXPECT_EQ(NodeFillEstimateUs(host, LabelFormat::k192, 16384, 2ull << 30), 0u);  // no 192 figure

  // Claims for a plan: the slowest device; the GPU's one-chunk step beats the host chain.
  std::vector<PlannedDeviceRef> plan = {{"host", 2ull << 30, 64ull << 30}, {"GPU-1", 16ull << 30, 150754820096ull}};
  NodeClaims c = ClaimsFromNodeProfile(*profile, plan, LabelFormat::kC1, 16384);
  EXPECT_NEAR(static_cast<double>(c.fill_estimate_us), 16.8e6, 2);  // the host's; the GPU: 4 s + 0.5 s
  EXPECT_EQ(c.sequential_compression_ps, 32552u);
  EXPECT_NE(c.sequential_where.find("GPU-1"), std::string::npos);
  EXPECT_TRUE(c.notes.empty());
  // A planned device the profile lacks: no fill claim at all; a device larger than declared: a note.
  plan.push_back({"GPU-2", 1ull << 30, 1ull << 30});
  plan[0].declared_capacity_bytes = 32ull << 30;
  NodeClaims partial = ClaimsFromNodeProfile(*profile, plan, LabelFormat::kC1, 16384);
  EXPECT_EQ(partial.fill_estimate_us, 0u);
  ASSERT_EQ(partial.notes.size(), 2u);
  EXPECT_NE(partial.notes[0].find("more than"), std::string::npos) << partial.notes[0];
  EXPECT_NE(partial.notes[1].find("GPU-2"), std::string::npos) << partial.notes[1];

  // A plan at an m the node never measured: no fill claim, and the note says how to get one.
  NodeClaims other_m = ClaimsFromNodeProfile(*profile, {{"host", 2ull << 30, 64ull << 30}}, LabelFormat::kC1, 524288);
  EXPECT_EQ(other_m.fill_estimate_us, 0u);
  ASSERT_EQ(other_m.notes.size(), 1u);
  EXPECT_NE(other_m.notes[0].find("--fill_chunk_labels=524288"), std::string::npos) << other_m.notes[0];

  EXPECT_FALSE(ParseNodeProfileJson(R"({"format": "wipeproof-node-profile-v1"})").ok());
  EXPECT_FALSE(ParseNodeProfileJson(R"({"format": "v0", "devices": []})").ok());
  EXPECT_FALSE(ParseNodeProfileJson(
                   R"({"format": "wipeproof-node-profile-v1", "devices": [{"kind": "host", "id": "host",
                       "fill": [{"chunk_labels": 3, "bytes": 0, "fill_s": 1, "bytes_per_s": 1}]}]})")
                   .ok());
}

// Every figure of a node profile is range-checked, naming the field: a signed lookup p99.9 of
// 2e19 us once overflowed plan's round time to 200 us.
TEST(NodeProfileParseTest, RefusesFiguresOutOfRangeNamingTheField) {
  const nlohmann::json base = nlohmann::json::parse(SampleProfile(TestKey(0x33)));
  ASSERT_TRUE(ParseNodeProfileJson(base.dump()).ok());
  struct Case {
    nlohmann::json::json_pointer where;
    nlohmann::json value;
    const char* field;
  };
  const Case cases[] = {
      {nlohmann::json::json_pointer("/devices/0/lookup/p999_us"), 2e19, "lookup.p999_us"},
      {nlohmann::json::json_pointer("/devices/0/lookup/p50_us"), -1.0, "lookup.p50_us"},
      {nlohmann::json::json_pointer("/devices/0/lookup/max_us"), 1e9 + 1, "lookup.max_us"},
      {nlohmann::json::json_pointer("/devices/1/one_chunk/step_ps"), 1e13, "one_chunk.step_ps"},
      {nlohmann::json::json_pointer("/devices/1/one_chunk/fill_us"), -0.5, "one_chunk.fill_us"},
      {nlohmann::json::json_pointer("/devices/0/fill/0/bytes_per_s"), 1e16, "bytes_per_s"},
      {nlohmann::json::json_pointer("/devices/0/fill/0/acquire_s"), 1e7, "acquire_s"},
      {nlohmann::json::json_pointer("/devices/0/fill/0/bytes"), (uint64_t{1} << 50) + 1, "bytes"},
      {nlohmann::json::json_pointer("/devices/0/total_bytes"), UINT64_MAX, "total_bytes"},
      {nlohmann::json::json_pointer("/host_sequential_compression/ps_per_compression"), 2e12, "ps_per_compression"},
      {nlohmann::json::json_pointer("/created_at_unix_us"), UINT64_MAX, "created_at_unix_us"},
  };
  for (const Case& c : cases) {
    nlohmann::json j = base;
    j[c.where] = c.value;
    auto parsed = ParseNodeProfileJson(j.dump());
    ASSERT_FALSE(parsed.ok()) << c.field;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << c.field;
    EXPECT_NE(parsed.status().message().find(c.field), std::string::npos) << parsed.status().message();
  }
  // At the bounds and below a picosecond: accepted, kept exactly.
  nlohmann::json edge = base;
  edge["devices"][0]["lookup"]["p999_us"] = kMaxNodeProfileMicros;
  edge["devices"][1]["one_chunk"]["step_ps"] = 0.5;
  auto parsed = ParseNodeProfileJson(edge.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->devices[0].lookup.p999_us, 1e9);
  EXPECT_EQ(parsed->devices[1].step_ps, 0.5);
}

// The key a profile is checked under is named by where it came from.
TEST(NodeProfileParseTest, WrongKeyErrorNamesTheKeySource) {
  const proto::KeyPair node = TestKey(0x33);
  char path[] = "/tmp/wp-node-profile-src-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << *proto::SignNodeProfile(SampleProfile(node), node);
  auto from_pub = LoadSignedNodeProfile(path, TestKey(0x44).public_key, "--node_pub other.pub");
  EXPECT_EQ(from_pub.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(from_pub.status().message().find("(from --node_pub other.pub)"), std::string::npos)
      << from_pub.status().message();
  EXPECT_EQ(from_pub.status().message().find("inventory"), std::string::npos) << from_pub.status().message();
  auto from_inventory = LoadSignedNodeProfile(path, TestKey(0x44).public_key);
  EXPECT_NE(from_inventory.status().message().find("(from the inventory)"), std::string::npos)
      << from_inventory.status().message();
  std::remove(path);
}

}  // namespace
}  // namespace wipeproof
