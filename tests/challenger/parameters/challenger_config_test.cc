// Inventory and parameter-profile files: a good file parses; every malformed one is refused with
// an error that names the field.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "challenger/fleet/inventory.h"
#include "challenger/parameters/parameter_profile.h"
#include "common/hex.h"
#include "proto/key_files.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

std::string NodeKeyHex() {
  const proto::PublicKey key = testing::TestKey(0x33).public_key;
  return HexEncode(key.data(), key.size());
}

nlohmann::json GoodInventory() {
  return nlohmann::json::parse(R"({
    "nodes": [
      {"name": "gpu-01", "address": "10.0.0.11:7700", "public_key": ")" +
                               NodeKeyHex() + R"(",
       "devices": [
         {"selector": "host", "model": "host-dram", "capacity_bytes": 2147483648},
         {"selector": "GPU-8c6f0000-0000-0000-0000-000000000001", "model": "NVIDIA H200",
          "capacity_bytes": 150754820096}]},
      {"name": "gpu-02", "address": "10.0.0.12:7700", "public_key": ")" +
                               NodeKeyHex() + R"(",
       "no_nvme_in_reach": true,
       "devices": [{"selector": "host", "model": "host-dram", "capacity_bytes": 1073741824}]}
    ],
    "waves": [{"name": "rack-1", "nodes": ["gpu-01", "gpu-02"], "period_s": 86400, "jitter_s": 21600,
               "complete": true}],
    "reserves": {"host-dram": 0, "NVIDIA H200": 536870912}
  })");
}

Status ParseError(const nlohmann::json& doc) {
  auto inv = ParseInventoryJson(doc.dump(), "", "inv.json");
  return inv.ok() ? Status::Ok() : inv.status();
}

TEST(InventoryTest, ParsesAGoodFile) {
  auto inv = ParseInventoryJson(GoodInventory().dump(), "");
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  ASSERT_EQ(inv->nodes.size(), 2u);
  const InventoryNode* n = inv->FindNode("gpu-01");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->address, "10.0.0.11:7700");
  EXPECT_EQ(n->public_key, testing::TestKey(0x33).public_key);
  ASSERT_EQ(n->devices.size(), 2u);
  EXPECT_EQ(n->devices[1].capacity_bytes, 150754820096u);
  EXPECT_FALSE(n->no_nvme_in_reach);
  EXPECT_TRUE(inv->FindNode("gpu-02")->no_nvme_in_reach);
  EXPECT_EQ(inv->FindNode("nope"), nullptr);
  const Wave* w = inv->WaveOf("gpu-02");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->name, "rack-1");
  EXPECT_DOUBLE_EQ(w->period_s, 86400);
  EXPECT_TRUE(w->complete);
  EXPECT_EQ(*inv->ReserveFor("NVIDIA H200"), 536870912u);
  EXPECT_EQ(inv->ReserveFor("MI300X").status().code(), StatusCode::kNotFound);
}

TEST(InventoryTest, ParsesReachDeclarations) {
  nlohmann::json doc = GoodInventory();
  doc["nodes"][0]["egress_bytes_per_s"] = 12'500'000'000ull;  // 100 Gb/s
  doc["nodes"][0]["other_memory"] = {{{"kind", "dpu"}, {"name", "BlueField-3"}, {"bytes", 34359738368ull}},
                                     {{"kind", "cxl"}, {"name", "cxl0"}, {"bytes", 1073741824}}};
  doc["nodes"][1]["network_isolated_during_wipe"] = true;
  auto inv = ParseInventoryJson(doc.dump(), "");
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  const NodeReach& a = inv->FindNode("gpu-01")->reach;
  EXPECT_FALSE(a.network_isolated);
  EXPECT_EQ(a.egress_bytes_per_s, 12'500'000'000u);
  ASSERT_EQ(a.other_memory.size(), 2u);
  EXPECT_EQ(a.other_memory[0].kind, "dpu");
  EXPECT_EQ(a.other_memory[0].name, "BlueField-3");
  EXPECT_EQ(a.other_memory[0].bytes, 34359738368u);
  const NodeReach& b = inv->FindNode("gpu-02")->reach;
  EXPECT_TRUE(b.network_isolated);
  EXPECT_EQ(b.egress_bytes_per_s, 0u);  // `b` refers into this parse: checked before the next one
  EXPECT_TRUE(b.other_memory.empty());
  EXPECT_EQ(inv->FindNode("gpu-01")->host_physical_memory_bytes, 0u);  // not declared
  doc["nodes"][1]["host_physical_memory_bytes"] = 2199023255552ull;    // 2 TiB, the authority's finding
  inv = ParseInventoryJson(doc.dump(), "");
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->FindNode("gpu-02")->host_physical_memory_bytes, 2199023255552u);
  // Two slices of a GPU split in 7 (MIG), as the authority declared them.
  doc["nodes"][1]["devices"].push_back(
      {{"selector", "MIG-a"}, {"model", "host-dram"}, {"capacity_bytes", 1024}, {"partition_of", "GPU-p"},
       {"partitions", 7}});
  doc["nodes"][1]["devices"].push_back(
      {{"selector", "MIG-b"}, {"model", "host-dram"}, {"capacity_bytes", 1024}, {"partition_of", "GPU-p"},
       {"partitions", 7}});
  inv = ParseInventoryJson(doc.dump(), "");
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  const InventoryDevice& slice = inv->FindNode("gpu-02")->devices[2];
  EXPECT_EQ(slice.partition_of, "GPU-p");
  EXPECT_EQ(slice.partitions, 7u);
  EXPECT_EQ(inv->FindNode("gpu-02")->devices[0].partitions, 0u);
}

// The round deadline the reach declarations were established for: read, carried into every node's
// declarations (so into the plan's assumptions and the audits' recheck), and written back.
TEST(InventoryTest, ParsesTheReachRoundDeadline) {
  nlohmann::json doc = GoodInventory();
  auto inv = ParseInventoryJson(doc.dump(), "");
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->reach_round_deadline_us, 0u);  // not declared
  EXPECT_EQ(DeclarationsOf(*inv, "gpu-01")->reach_round_deadline_us, 0u);
  doc["reach_round_deadline_us"] = 20'000;
  inv = ParseInventoryJson(doc.dump(), "");
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->reach_round_deadline_us, 20'000u);
  auto declared = DeclarationsOf(*inv, "gpu-02");
  ASSERT_TRUE(declared.ok());
  EXPECT_EQ(declared->reach_round_deadline_us, 20'000u);
  SessionPlan plan;
  ApplyDeclarations(*declared, &plan);
  EXPECT_EQ(plan.reach_round_deadline_us, 20'000u);
  auto back = ParseInventoryJson(InventoryJson(*inv), "");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->reach_round_deadline_us, 20'000u);
}

// The compute declarations (challenger/session/compute_statement.h): ingress, the CPUs' rate and the
// per-model label rates sum to the node's R; anything missing is named; the document round-trips.
TEST(InventoryTest, ParsesComputeDeclarations) {
  nlohmann::json doc = GoodInventory();
  doc["nodes"][0]["ingress_bytes_per_s"] = 50'000'000'000ull;
  doc["nodes"][0]["cpu_compressions_per_s"] = 2.5e10;
  doc["label_rates"] = {{"NVIDIA H200", {{"compressions_per_s", 4e11}, {"source", "an upper bound"}}}};
  auto inv = ParseInventoryJson(doc.dump(), "");
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  const InventoryNode* a = inv->FindNode("gpu-01");
  EXPECT_EQ(a->reach.ingress_bytes_per_s, 50'000'000'000u);
  EXPECT_EQ(a->cpu_compressions_per_s, 2.5e10);
  EXPECT_EQ(inv->label_rates_by_model.at("NVIDIA H200").source, "an upper bound");
  // gpu-01: CPUs plus its one H200 (host memory has no rate of its own).
  const DeclaredCompute rate = NodeComputeRate(*inv, *a);
  EXPECT_EQ(rate.compressions_per_s, 2.5e10 + 4e11);
  EXPECT_EQ(rate.problem, "");
  EXPECT_EQ(NodeComputeRate(*inv, *inv->FindNode("gpu-02")).problem,
            "the inventory declares no CPU label rate (cpu_compressions_per_s) for node gpu-02");
  // Read back from the document InventoryJson writes: the same declarations.
  auto back = ParseInventoryJson(InventoryJson(*inv), "");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(NodeComputeRate(*back, *back->FindNode("gpu-01")).compressions_per_s, 2.5e10 + 4e11);
  EXPECT_EQ(back->FindNode("gpu-01")->reach.ingress_bytes_per_s, 50'000'000'000u);
  // A model without a rate.
  doc["label_rates"] = {{"MI300X", {{"compressions_per_s", 1e11}, {"source", "x"}}}};
  inv = ParseInventoryJson(doc.dump(), "");
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(NodeComputeRate(*inv, *inv->FindNode("gpu-01")).problem,
            "the inventory's label_rates has no entry for model 'NVIDIA H200' (device "
            "GPU-8c6f0000-0000-0000-0000-000000000001)");
  // Bad values, each named.
  struct Bad {
    std::function<void(nlohmann::json&)> edit;
    std::string message;
  } bad[] = {
      {[](nlohmann::json& d) { d["nodes"][0]["ingress_bytes_per_s"] = 0; }, "nodes[0].ingress_bytes_per_s: must be > 0"},
      {[](nlohmann::json& d) {
         d["nodes"][0]["network_isolated_during_wipe"] = true;
         d["nodes"][0]["ingress_bytes_per_s"] = 10;
       },
       "nodes[0].ingress_bytes_per_s: given with network_isolated_during_wipe true"},
      {[](nlohmann::json& d) { d["nodes"][0]["cpu_compressions_per_s"] = 0; }, "nodes[0].cpu_compressions_per_s: must be > 0"},
      {[](nlohmann::json& d) { d["nodes"][0]["cpu_compressions_per_s"] = 1e17; }, "must be > 0 and <= 1e16"},
      {[](nlohmann::json& d) { d["label_rates"] = 5; }, "label_rates: want an object of device models"},
      {[](nlohmann::json& d) { d["label_rates"] = {{"X", {{"compressions_per_s", 1e9}}}}; }, "label_rates.X.source"},
      {[](nlohmann::json& d) { d["label_rates"] = {{"X", {{"compressions_per_s", 1e9}, {"source", ""}}}}; },
       "label_rates.X.source: want 1 to 1024 bytes"},
      {[](nlohmann::json& d) { d["label_rates"] = {{"X", {{"compressions_per_s", -1}, {"source", "s"}}}}; },
       "label_rates.X.compressions_per_s: must be > 0"},
      {[](nlohmann::json& d) { d["label_rates"] = {{"X", {{"compressions_per_s", 1}, {"source", "s"}, {"y", 1}}}}; },
       "unknown field 'y'"},
  };
  for (const Bad& c : bad) {
    nlohmann::json edited = GoodInventory();
    c.edit(edited);
    const Status s = ParseError(edited);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.message << ": " << s.ToString();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.message << ": " << s.ToString();
  }
}

TEST(InventoryTest, ReadsKeyFilesRelativeToTheInventory) {
  char dir_template[] = "/tmp/wp-inventory-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  auto keys = proto::GenerateKeyFiles(dir + "/node");
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  nlohmann::json doc = GoodInventory();
  doc["nodes"][0].erase("public_key");
  doc["nodes"][0]["public_key_file"] = "node.pub";
  std::ofstream(dir + "/inventory.json") << doc.dump();
  auto inv = LoadInventory(dir + "/inventory.json");
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->nodes[0].public_key, keys->public_key);
  std::remove((dir + "/inventory.json").c_str());
  std::remove(keys->secret_path.c_str());
  std::remove(keys->public_path.c_str());
  rmdir(dir.c_str());
  EXPECT_EQ(LoadInventory(dir + "/inventory.json").status().code(), StatusCode::kNotFound);
}

struct BadCase {
  const char* what;
  std::function<void(nlohmann::json&)> edit;
  const char* message;  // must appear in the error
  StatusCode code = StatusCode::kInvalidArgument;
};

TEST(InventoryTest, MalformedFilesNameTheField) {
  const std::vector<BadCase> cases = {
      {"not json", nullptr, "inv.json: not valid JSON"},
      {"missing capacity", [](nlohmann::json& d) { d["nodes"][1]["devices"][0].erase("capacity_bytes"); },
       "inv.json: nodes[1].devices[0].capacity_bytes: missing"},
      {"capacity as text", [](nlohmann::json& d) { d["nodes"][0]["devices"][0]["capacity_bytes"] = "2G"; },
       "nodes[0].devices[0].capacity_bytes: want an unsigned integer, got \"2G\""},
      {"zero capacity", [](nlohmann::json& d) { d["nodes"][0]["devices"][0]["capacity_bytes"] = 0; },
       "nodes[0].devices[0].capacity_bytes: must be > 0"},
      {"typo", [](nlohmann::json& d) { d["nodes"][0]["adress"] = "x"; }, "nodes[0]: unknown field 'adress'"},
      {"no port", [](nlohmann::json& d) { d["nodes"][0]["address"] = "10.0.0.11"; },
       "nodes[0].address: '10.0.0.11' is not host:port"},
      {"bad port", [](nlohmann::json& d) { d["nodes"][0]["address"] = "h:70000"; }, "port must be in [1, 65535]"},
      {"bad key", [](nlohmann::json& d) { d["nodes"][0]["public_key"] = "abcd"; }, "nodes[0].public_key"},
      {"two keys", [](nlohmann::json& d) { d["nodes"][0]["public_key_file"] = "k.pub"; },
       "nodes[0]: give exactly one of public_key"},
      {"no key", [](nlohmann::json& d) { d["nodes"][0].erase("public_key"); }, "nodes[0]: give exactly one"},
      {"missing key file",
       [](nlohmann::json& d) {
         d["nodes"][0].erase("public_key");
         d["nodes"][0]["public_key_file"] = "/nonexistent/k.pub";
       },
       "nodes[0].public_key_file", StatusCode::kNotFound},
      {"duplicate node", [](nlohmann::json& d) { d["nodes"][1]["name"] = "gpu-01"; },
       "nodes[1].name: 'gpu-01' appears twice"},
      {"duplicate selector", [](nlohmann::json& d) { d["nodes"][0]["devices"][1]["selector"] = "host"; },
       "nodes[0].devices[1].selector: 'host' appears twice"},
      {"no devices", [](nlohmann::json& d) { d["nodes"][0]["devices"] = nlohmann::json::array(); },
       "nodes[0].devices: want a non-empty array"},
      {"no nodes", [](nlohmann::json& d) { d.erase("nodes"); }, "nodes: missing"},
      {"no reserve for a model", [](nlohmann::json& d) { d["reserves"].erase("NVIDIA H200"); },
       "reserves: no entry for model 'NVIDIA H200' (used by nodes[0].devices[1])"},
      {"reserve negative", [](nlohmann::json& d) { d["reserves"]["host-dram"] = -1; }, "reserves.host-dram: want"},
      {"no reserves", [](nlohmann::json& d) { d.erase("reserves"); }, "reserves: missing"},
      {"unknown wave node", [](nlohmann::json& d) { d["waves"][0]["nodes"][1] = "gpu-99"; },
       "waves[0].nodes[1]: no node named 'gpu-99'"},
      {"node in two waves",
       [](nlohmann::json& d) {
         d["waves"].push_back({{"name", "rack-2"}, {"nodes", {"gpu-02"}}, {"period_s", 10}, {"complete", false}});
       },
       "waves[1].nodes[0]: node 'gpu-02' is already in wave 'rack-1'"},
      {"jitter over period", [](nlohmann::json& d) { d["waves"][0]["jitter_s"] = 90000; },
       "waves[0].jitter_s: must be in [0, period_s]"},
      {"zero period", [](nlohmann::json& d) { d["waves"][0]["period_s"] = 0; }, "waves[0].period_s: must be > 0"},
      {"complete missing", [](nlohmann::json& d) { d["waves"][0].erase("complete"); }, "waves[0].complete: missing"},
      {"complete as string", [](nlohmann::json& d) { d["waves"][0]["complete"] = "yes"; },
       "waves[0].complete: want true or false"},
      {"isolation as string", [](nlohmann::json& d) { d["nodes"][0]["network_isolated_during_wipe"] = "yes"; },
       "nodes[0].network_isolated_during_wipe: want true or false"},
      {"zero physical memory", [](nlohmann::json& d) { d["nodes"][0]["host_physical_memory_bytes"] = 0; },
       "nodes[0].host_physical_memory_bytes: must be > 0 and <= 1125899906842624 (1 PiB), got 0"},
      {"physical memory too large",
       [](nlohmann::json& d) { d["nodes"][0]["host_physical_memory_bytes"] = uint64_t{1} << 51; },
       "nodes[0].host_physical_memory_bytes: must be > 0"},
      {"physical memory as text", [](nlohmann::json& d) { d["nodes"][0]["host_physical_memory_bytes"] = "2T"; },
       "nodes[0].host_physical_memory_bytes: want an unsigned integer"},
      {"partitions alone", [](nlohmann::json& d) { d["nodes"][0]["devices"][1]["partitions"] = 7; },
       "nodes[0].devices[1]: give both partition_of and partitions"},
      {"zero partitions",
       [](nlohmann::json& d) {
         d["nodes"][0]["devices"][1]["partition_of"] = "GPU-p";
         d["nodes"][0]["devices"][1]["partitions"] = 0;
       },
       "nodes[0].devices[1].partitions: must be in [1, 256], got 0"},
      {"slices disagree",
       [](nlohmann::json& d) {
         d["nodes"][0]["devices"][0]["partition_of"] = "GPU-p";
         d["nodes"][0]["devices"][0]["partitions"] = 7;
         d["nodes"][0]["devices"][1]["partition_of"] = "GPU-p";
         d["nodes"][0]["devices"][1]["partitions"] = 4;
       },
       "nodes[0].devices[1].partitions: 4 for device GPU-p, which another slice says has 7"},
      {"more slices than partitions",
       [](nlohmann::json& d) {
         for (int i : {0, 1}) {
           d["nodes"][0]["devices"][i]["partition_of"] = "GPU-p";
           d["nodes"][0]["devices"][i]["partitions"] = 1;
         }
       },
       "nodes[0].devices[1]: more slices of device GPU-p listed than its 1 partitions"},
      {"zero egress", [](nlohmann::json& d) { d["nodes"][0]["egress_bytes_per_s"] = 0; },
       "nodes[0].egress_bytes_per_s: must be > 0 and <= 1125899906842624 (2^50), got 0"},
      {"egress too large", [](nlohmann::json& d) { d["nodes"][0]["egress_bytes_per_s"] = uint64_t{1} << 51; },
       "nodes[0].egress_bytes_per_s: must be > 0"},
      {"egress negative", [](nlohmann::json& d) { d["nodes"][0]["egress_bytes_per_s"] = -5; },
       "nodes[0].egress_bytes_per_s: want an unsigned integer"},
      {"egress from an isolated node",
       [](nlohmann::json& d) {
         d["nodes"][0]["network_isolated_during_wipe"] = true;
         d["nodes"][0]["egress_bytes_per_s"] = 1000;
       },
       "nodes[0].egress_bytes_per_s: given with network_isolated_during_wipe true"},
      {"other memory not a list", [](nlohmann::json& d) { d["nodes"][0]["other_memory"] = 5; },
       "nodes[0].other_memory: want an array"},
      {"other memory kind",
       [](nlohmann::json& d) {
         d["nodes"][0]["other_memory"] = {{{"kind", "hbm"}, {"name", "x"}, {"bytes", 1}}};
       },
       "nodes[0].other_memory[0].kind: want \"dpu\", \"cxl\" or \"other\", got 'hbm'"},
      {"other memory empty",
       [](nlohmann::json& d) {
         d["nodes"][0]["other_memory"] = {{{"kind", "dpu"}, {"name", "x"}, {"bytes", 0}}};
       },
       "nodes[0].other_memory[0].bytes: must be > 0"},
      {"other memory no name",
       [](nlohmann::json& d) {
         d["nodes"][0]["other_memory"] = {{{"kind", "cxl"}, {"bytes", 10}}};
       },
       "nodes[0].other_memory[0].name: missing"},
      {"other memory typo",
       [](nlohmann::json& d) {
         d["nodes"][0]["other_memory"] = {{{"kind", "cxl"}, {"name", "x"}, {"bytes", 10}, {"size", 1}}};
       },
       "nodes[0].other_memory[0]: unknown field 'size'"},
      {"reach deadline zero", [](nlohmann::json& d) { d["reach_round_deadline_us"] = 0; },
       "reach_round_deadline_us: want microseconds in [1, 2^40], got 0"},
      {"reach deadline too long", [](nlohmann::json& d) { d["reach_round_deadline_us"] = (uint64_t{1} << 40) + 1; },
       "reach_round_deadline_us: want microseconds in [1, 2^40], got 1099511627777"},
      {"reach deadline as text", [](nlohmann::json& d) { d["reach_round_deadline_us"] = "20ms"; },
       "reach_round_deadline_us: want an unsigned integer"},
  };
  for (const BadCase& c : cases) {
    Status s;
    if (c.edit == nullptr) {
      auto inv = ParseInventoryJson("{nodes: [", "", "inv.json");
      s = inv.ok() ? Status::Ok() : inv.status();
    } else {
      nlohmann::json doc = GoodInventory();
      c.edit(doc);
      s = ParseError(doc);
    }
    EXPECT_EQ(s.code(), c.code) << c.what << ": " << s.ToString();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.what << ": " << s.ToString();
  }
}

TEST(ProfileTest, DefaultIsUncalibrated) {
  const Profile p = DefaultProfile();
  EXPECT_EQ(p.name, "default-uncalibrated");
  EXPECT_FALSE(p.calibrated);
  EXPECT_EQ(p.chunk_labels, 4096u);
  EXPECT_EQ(p.rounds, 16u);
  EXPECT_EQ(p.labels_per_round, 64u);
  EXPECT_EQ(p.round_deadline_us, 50'000u);
  EXPECT_TRUE(ValidateProfile(p).ok());
  // Derived fill deadline: 2 GiB at 8 MiB/s = 256 s, + 60 s slack.
  EXPECT_EQ(FillDeadlineUs(p, uint64_t{2} << 30), 316'000'000u);
}

constexpr char kGoodProfile[] = R"({
  "name": "rack-cpu-2^14", "chunk_labels": 16384, "format": "posedb-blake3-c1", "rounds": 32,
  "labels_per_round": 64, "labels_per_round_by_model": {"NVIDIA H200": 256},
  "round_deadline_us": 400, "fill_deadline_ms": 90000,
  "adversary": {"class": "commodity-cpu", "t_min_ps": 40000, "safety_factor": 2},
  "confidence": 0.999, "calibrated": true, "honest_round_p999_us": 180, "order_ttl_s": 120
})";

TEST(ProfileTest, ParsesAGoodFile) {
  auto p = ParseProfileJson(kGoodProfile);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->name, "rack-cpu-2^14");
  EXPECT_EQ(p->chunk_labels, 16384u);
  EXPECT_EQ(p->rounds, 32u);
  EXPECT_EQ(LabelsPerRoundFor(*p, "NVIDIA H200"), 256u);
  EXPECT_EQ(LabelsPerRoundFor(*p, "host-dram"), 64u);
  EXPECT_EQ(p->round_deadline_us, 400u);
  EXPECT_EQ(FillDeadlineUs(*p, uint64_t{1} << 40), 90'000'000u);  // fixed, whatever the bytes
  EXPECT_EQ(p->adversary.name, "commodity-cpu");
  EXPECT_EQ(p->adversary.t_min_ps, 40000u);
  EXPECT_DOUBLE_EQ(p->confidence, 0.999);
  EXPECT_TRUE(p->calibrated);
  EXPECT_EQ(p->order_ttl_us, 120'000'000u);
}

TEST(ProfileTest, MalformedProfilesNameTheField) {
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& d) { d["chunk_labels"] = 3000; }, "chunk_labels: 3000 is not a power of two"},
      {[](nlohmann::json& d) { d.erase("rounds"); }, "rounds: missing"},
      {[](nlohmann::json& d) { d["rounds"] = 0; }, "rounds: must be >= 1"},
      {[](nlohmann::json& d) { d["confidence"] = 1.0; }, "confidence: must be in (0, 1)"},
      {[](nlohmann::json& d) { d["format"] = "sha256"; }, "format: want posedb-blake3-c1 or posedb-blake3-192"},
      {[](nlohmann::json& d) { d["adversary"]["safety_factor"] = 0.5; }, "adversary.safety_factor"},
      {[](nlohmann::json& d) { d["adversary"].erase("t_min_ps"); }, "adversary.t_min_ps: missing"},
      {[](nlohmann::json& d) { d.erase("adversary"); }, "adversary: missing"},
      {[](nlohmann::json& d) { d["deadline_us"] = 5; }, "unknown field 'deadline_us'"},
      {[](nlohmann::json& d) { d["labels_per_round_by_model"]["X"] = "many"; },
       "labels_per_round_by_model.X: want an unsigned integer"},
      {[](nlohmann::json& d) { d.erase("calibrated"); }, "calibrated: missing"},
  };
  for (const auto& [edit, message] : cases) {
    nlohmann::json doc = nlohmann::json::parse(kGoodProfile);
    edit(doc);
    auto p = ParseProfileJson(doc.dump(), "p.json");
    ASSERT_FALSE(p.ok()) << message;
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(p.status().message().rfind("p.json: ", 0), 0u) << p.status().ToString();
    EXPECT_NE(p.status().message().find(message), std::string::npos) << p.status().ToString();
  }
}

}  // namespace
}  // namespace wipeproof
