// The verdict's assumptions beyond the plan (challenger/session/assumptions.h): egress during the
// session window and memory no plan covers, with the sizes stated.
#include "challenger/session/assumptions.h"

#include <gtest/gtest.h>

#include "challenger/session/on_chip_memory.h"

namespace wipeproof {
namespace {

SessionPlan GpuNode() {
  SessionPlan plan;
  plan.node_name = "gpu-01";
  plan.profile.chunk_labels = 4096;  // a chunk is 131072 bytes
  plan.session_timeout_us = 900'000'000;
  for (int i = 0; i < 8; ++i) {
    PlannedDevice d;
    d.selector = "GPU-" + std::to_string(i);
    d.model = "NVIDIA H200";
    d.capacity_bytes = 150754820096;
    d.label_count = 4'000'000'000;
    plan.devices.push_back(d);
  }
  PlannedDevice host;
  host.selector = "host";
  host.model = "host-dram";
  host.capacity_bytes = uint64_t{1} << 40;
  host.label_count = uint64_t{1} << 35;
  plan.devices.push_back(host);
  plan.host_memory_in_plan = true;
  return plan;
}

const AssumptionResult& Find(const std::vector<AssumptionResult>& all, const std::string& name) {
  for (const AssumptionResult& a : all) {
    if (a.name == name) return a;
  }
  static const AssumptionResult none{"", false, "absent"};
  ADD_FAILURE() << name << " missing";
  return none;
}

// threat-model: T-EGRESS
TEST(AssumptionsTest, EgressDuringTheSessionWindow) {
  SessionPlan plan = GpuNode();
  AssumptionInputs in;
  in.inventory_signed = true;
  in.plan = &plan;
  in.session_window_us = 95'000'000;  // 95 s from the order to the verdict
  // Not declared: unknown.
  AssumptionResult a = Find(EvaluateAssumptions(in), kNoEgress);
  EXPECT_FALSE(a.held);
  EXPECT_NE(a.detail.find("unknown: the inventory declares neither network isolation nor an egress bandwidth"),
            std::string::npos)
      << a.detail;
  // 100 Gb/s = 12.5e9 bytes/s for 95 s: 1.1875e12 bytes could have left.
  plan.reach.egress_bytes_per_s = 12'500'000'000;
  a = Find(EvaluateAssumptions(in), kNoEgress);
  EXPECT_FALSE(a.held);
  EXPECT_EQ(a.detail,
            "node gpu-01 may send 12500000000 bytes/s: up to 1187500000000 bytes could have left it during the "
            "session window of 95000000 us (order sent to the verdict, past the last round)");
  // Window not measured: the session timeout bounds it, and the detail says so.
  in.session_window_us = 0;
  a = Find(EvaluateAssumptions(in), kNoEgress);
  EXPECT_NE(a.detail.find("up to 11250000000000 bytes"), std::string::npos) << a.detail;
  EXPECT_NE(a.detail.find("upper bound: the session timeout"), std::string::npos) << a.detail;
  // Declared isolated: held, as a declaration.
  plan.reach.egress_bytes_per_s = 0;
  plan.reach.network_isolated = true;
  a = Find(EvaluateAssumptions(in), kNoEgress);
  EXPECT_TRUE(a.held);
  EXPECT_NE(a.detail.find("network-isolated during wipes"), std::string::npos);
  // The arithmetic rounds up and saturates.
  EXPECT_EQ(EgressBytes(3, 1), 1u);
  EXPECT_EQ(EgressBytes(1'000'000, 1), 1u);
  EXPECT_EQ(EgressBytes(UINT64_MAX, UINT64_MAX), UINT64_MAX);
}

// threat-model: T-EGRESS
TEST(AssumptionsTest, MemoryNoPlanCoversIsListedWithItsSize) {
  // The table: an H200 has 50 MB of L2 and 132 SMs x (256 KiB registers + 256 KiB L1/shared).
  const auto h200 = OnChipMemoryOf("NVIDIA H200");
  ASSERT_TRUE(h200.has_value());
  EXPECT_EQ(h200->total_bytes(), 119'206'016u);  // ~113.7 MiB, "about 113 MB per H200"
  EXPECT_EQ(OnChipMemoryOf("NVIDIA H100 80GB HBM3")->streaming_multiprocessors, 132u);
  EXPECT_EQ(OnChipMemoryOf("NVIDIA H100 PCIe")->streaming_multiprocessors, 114u);
  EXPECT_FALSE(OnChipMemoryOf("AMD Instinct MI300X").has_value());
  EXPECT_FALSE(OnChipMemoryOf("host-dram").has_value());

  SessionPlan plan = GpuNode();
  plan.reach.other_memory.push_back({"dpu", "BlueField-3", 34'359'738'368});
  AssumptionInputs in;
  in.inventory_signed = true;
  in.plan = &plan;
  const AssumptionResult a = Find(EvaluateAssumptions(in), kNoUncoveredMemory);
  EXPECT_FALSE(a.held);
  EXPECT_NE(a.detail.find("NVIDIA H200 x 8: 119206016 bytes on-chip each (L2 50000000 + 132 SMs x (262144 register "
                          "file + 262144 L1/shared)"),
            std::string::npos)
      << a.detail;
  EXPECT_NE(a.detail.find("dpu BlueField-3: 34359738368 bytes (declared in the inventory)"), std::string::npos);
  EXPECT_NE(a.detail.find(std::to_string(8 * uint64_t{119'206'016} + 34'359'738'368) + " bytes known in all"),
            std::string::npos)
      << a.detail;
  EXPECT_NE(a.detail.find("size unknown for host-dram x 1"), std::string::npos) << a.detail;
}

// wave-complete states what the wave run checked of the other members: each filled and passed every
// round it was sent, proof rounds after every member's fill (wave_sync.h); nothing more.
TEST(AssumptionsTest, WaveCompleteSaysWhatTheWaveRunChecked) {
  SessionPlan plan = GpuNode();
  plan.wave = WaveContext{"w3", true, 3, true, 0};
  AssumptionInputs in;
  in.inventory_signed = true;
  in.plan = &plan;
  in.wave_run.synchronized = true;
  AssumptionResult a = Find(EvaluateAssumptions(in), kWaveComplete);
  EXPECT_TRUE(a.held);
  EXPECT_EQ(a.detail,
            "wave w3 is declared complete (for no stated round deadline: the inventory has no "
            "reach_round_deadline_us) and its 2 other node(s) ran in the same wave run, each filled and passed "
            "every round it was sent, and every member's proof rounds were sent only after every member's fill");
  in.wave_run.nodes_not_held = {"gpu-02"};
  a = Find(EvaluateAssumptions(in), kWaveComplete);
  EXPECT_FALSE(a.held);
  EXPECT_EQ(a.detail,
            "wave w3: node(s) gpu-02 of this wave run did not fill or did not pass every round they were sent");
}

// threat-model: T-RELOCATE-HOST
// host-memory-in-plan holds only when the host plan (labels + allowed reserve) covers the node's
// physical memory as the authority declared it: a 16 GiB budget on a 2 TiB node leaves room to
// relocate labels, and an undeclared physical size is not taken on the operator's word.
TEST(AssumptionsTest, HostMemoryHoldsOnlyWhenThePlanCoversPhysicalMemory) {
  constexpr uint64_t kGiB = uint64_t{1} << 30, kTiB = uint64_t{1} << 40, kChunkBytes = 4096 * 32;
  SessionPlan plan = GpuNode();
  PlannedDevice& host = plan.devices.back();
  AssumptionInputs in;
  in.inventory_signed = true;
  in.plan = &plan;

  // A 16 GiB host plan, physical memory 2 TiB: not held, with the numbers.
  host.capacity_bytes = 16 * kGiB;
  host.label_count = 16 * kGiB / 32;
  plan.host_physical_memory_bytes = 2 * kTiB;
  AssumptionResult a = Find(EvaluateAssumptions(in), kHostMemoryInPlan);
  EXPECT_FALSE(a.held);
  EXPECT_EQ(a.detail,
            "host plan covers 17179869184 of 2199023255552 bytes of physical memory of node gpu-01 (labels "
            "17179869184 + allowed reserve 0): 2181843386368 bytes are outside the plan and labels could be "
            "relocated there");

  // The whole 2 TiB less an 8 GiB reserve planned: held.
  host.capacity_bytes = 2 * kTiB;
  host.allowed_reserve_bytes = 8 * kGiB;
  host.label_count = (2 * kTiB - 8 * kGiB) / 32;
  a = Find(EvaluateAssumptions(in), kHostMemoryInPlan);
  EXPECT_TRUE(a.held);
  EXPECT_EQ(a.detail,
            "host plan covers 2199023255552 of 2199023255552 bytes of physical memory of node gpu-01 (labels "
            "2190433320960 + allowed reserve 8589934592), physical memory as the inventory declares it (the "
            "authority's finding)");

  // Less than one chunk short (whole chunks only): held, and the detail names the bytes.
  plan.host_physical_memory_bytes = 2 * kTiB + kChunkBytes - 1;
  a = Find(EvaluateAssumptions(in), kHostMemoryInPlan);
  EXPECT_TRUE(a.held);
  EXPECT_NE(a.detail.find("; the last 131071 bytes, less than one chunk of 4096 labels, cannot be planned"),
            std::string::npos)
      << a.detail;
  // One whole chunk short: not held.
  plan.host_physical_memory_bytes = 2 * kTiB + kChunkBytes;
  a = Find(EvaluateAssumptions(in), kHostMemoryInPlan);
  EXPECT_FALSE(a.held);
  EXPECT_NE(a.detail.find(": 131072 bytes are outside the plan"), std::string::npos) << a.detail;

  // Physical memory not declared: not held, whatever the plan.
  plan.host_physical_memory_bytes = 0;
  a = Find(EvaluateAssumptions(in), kHostMemoryInPlan);
  EXPECT_FALSE(a.held);
  EXPECT_EQ(a.detail.rfind("physical host memory not declared for node gpu-01: the host plan covers 2199023255552 "
                           "bytes (labels 2190433320960 + allowed reserve 8589934592) of an unknown total",
                           0),
            0u)
      << a.detail;

  // Host memory not planned: not held.
  plan.host_physical_memory_bytes = 2 * kTiB;
  plan.devices.pop_back();
  plan.host_memory_in_plan = false;
  a = Find(EvaluateAssumptions(in), kHostMemoryInPlan);
  EXPECT_FALSE(a.held);
  EXPECT_EQ(a.detail, "host memory of node gpu-01 is not in the plan: labels could be relocated there");
}

// device-capacity-as-declared does not hold while a slice of a partitioned GPU is planned and another
// slice of the same GPU is not: the unplanned slices' memory is outside the plan.
TEST(AssumptionsTest, CapacityNeedsEverySliceOfAPartitionedGpu) {
  SessionPlan plan;
  plan.node_name = "gpu-07";
  for (int i = 0; i < 2; ++i) {
    PlannedDevice d;
    d.selector = "MIG-" + std::to_string(i);
    d.model = "NVIDIA H200 MIG 1g.18gb";
    d.capacity_bytes = 19'327'352'832;
    d.label_count = 500'000'000;
    d.partition_of = "GPU-8c6f";
    d.partitions = 7;
    plan.devices.push_back(d);
  }
  AssumptionInputs in;
  in.inventory_signed = true;
  in.plan = &plan;
  in.have_report = true;
  in.device_total_bytes = {19'327'352'832, 19'327'352'832};
  AssumptionResult a = Find(EvaluateAssumptions(in), kCapacityAsDeclared);
  EXPECT_FALSE(a.held);
  EXPECT_EQ(a.detail,
            "device GPU-8c6f is partitioned into 7 slices and the plan holds 2 (MIG-0, MIG-1): the other 5 "
            "slices' memory is outside the plan and labels could be relocated there");
  // Every slice planned: the rest of the assumption decides (here: held, every total as declared).
  while (plan.devices.size() < 7) {
    PlannedDevice d = plan.devices[0];
    d.selector = "MIG-" + std::to_string(plan.devices.size());
    plan.devices.push_back(d);
    in.device_total_bytes.push_back(19'327'352'832);
  }
  a = Find(EvaluateAssumptions(in), kCapacityAsDeclared);
  EXPECT_TRUE(a.held) << a.detail;
  // A MIG selector whose GPU the inventory does not declare: not held.
  for (PlannedDevice& d : plan.devices) {
    d.partition_of.clear();
    d.partitions = 0;
  }
  a = Find(EvaluateAssumptions(in), kCapacityAsDeclared);
  EXPECT_FALSE(a.held);
  EXPECT_EQ(a.detail,
            "device MIG-0 is a MIG slice whose physical GPU and slice count the inventory does not declare "
            "(partition_of, partitions): the other slices' memory may be outside the plan");
}

// threat-model: T-INVENTORY-UNSIGNED
TEST(AssumptionsTest, NoneHoldsUnlessTheDelegationNamesTheInventory) {
  // Everything declared for the assumptions to hold: host plan covering physical memory, NVMe out of
  // reach, network isolation, a complete wave run whole, every device reporting its capacity.
  SessionPlan plan = GpuNode();
  plan.host_physical_memory_bytes = plan.devices.back().planned_bytes();
  plan.no_nvme_in_reach = true;
  plan.reach.network_isolated = true;
  plan.wave = WaveContext{"rack-1", true, 1, true, 0};
  AssumptionInputs in;
  in.plan = &plan;
  in.have_report = true;
  for (const PlannedDevice& d : plan.devices) in.device_total_bytes.push_back(d.capacity_bytes);
  in.inventory_signed = true;
  const std::vector<AssumptionResult> signed_results = EvaluateAssumptions(in);
  for (const char* name : {kHostMemoryInPlan, kWaveComplete, kNoNvmeInReach, kCapacityAsDeclared, kNoEgress}) {
    EXPECT_TRUE(Find(signed_results, name).held) << name << ": " << Find(signed_results, name).detail;
  }
  in.inventory_signed = false;
  const std::vector<AssumptionResult> unsigned_results = EvaluateAssumptions(in);
  ASSERT_EQ(unsigned_results.size(), signed_results.size());
  for (size_t i = 0; i < unsigned_results.size(); ++i) {
    EXPECT_EQ(unsigned_results[i].name, signed_results[i].name);
    EXPECT_FALSE(unsigned_results[i].held) << unsigned_results[i].name;
    EXPECT_EQ(unsigned_results[i].detail, std::string(kInventoryNotSigned) + "; " + signed_results[i].detail);
  }
}

// What lies within reach depends on the time memory has to answer: the inventory's reach
// declarations hold only for round deadlines up to its reach_round_deadline_us.
// threat-model: T-REACH-DEADLINE
TEST(AssumptionsTest, ReachDeclarationsHoldOnlyWithinTheirRoundDeadline) {
  SessionPlan plan = GpuNode();
  plan.wave = WaveContext{"w3", true, 3, true, 0};
  plan.no_nvme_in_reach = true;
  plan.reach_round_deadline_us = 20'000;
  plan.profile.round_deadline_us = 20'000;
  AssumptionInputs in;
  in.inventory_signed = true;
  in.plan = &plan;
  in.wave_run.synchronized = true;

  AssumptionResult wave = Find(EvaluateAssumptions(in), kWaveComplete);
  AssumptionResult nvme = Find(EvaluateAssumptions(in), kNoNvmeInReach);
  EXPECT_TRUE(wave.held) << wave.detail;
  EXPECT_TRUE(nvme.held) << nvme.detail;
  EXPECT_NE(wave.detail.find("(for round deadlines up to 20000 us; this session's is 20000 us)"), std::string::npos)
      << wave.detail;
  EXPECT_NE(nvme.detail.find("(for round deadlines up to 20000 us; this session's is 20000 us)"), std::string::npos)
      << nvme.detail;

  plan.profile.round_deadline_us = 20'001;  // one microsecond more than the reach was established for
  wave = Find(EvaluateAssumptions(in), kWaveComplete);
  nvme = Find(EvaluateAssumptions(in), kNoNvmeInReach);
  EXPECT_FALSE(wave.held);
  EXPECT_FALSE(nvme.held);
  const std::string exceeded =
      "the round deadline of 20001 us is longer than the inventory's reach_round_deadline_us of 20000 us";
  EXPECT_NE(wave.detail.find("wave w3 is declared complete, but " + exceeded), std::string::npos) << wave.detail;
  EXPECT_NE(nvme.detail.find("declares no NVMe drive within reach of node " + plan.node_name + ", but " + exceeded),
            std::string::npos)
      << nvme.detail;

  plan.reach_round_deadline_us = 0;  // not declared: held, and the detail says for no stated deadline
  wave = Find(EvaluateAssumptions(in), kWaveComplete);
  nvme = Find(EvaluateAssumptions(in), kNoNvmeInReach);
  EXPECT_TRUE(wave.held);
  EXPECT_TRUE(nvme.held);
  EXPECT_NE(nvme.detail.find("for no stated round deadline"), std::string::npos) << nvme.detail;
}

}  // namespace
}  // namespace wipeproof
