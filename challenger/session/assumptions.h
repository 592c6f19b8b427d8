// The conditions outside the protocol that a pass relies on (docs/threat-model.md "The claim"
// and "What a pass does not prove"). A pass proves that the planned memories, taken together, held the labels;
// it proves a checkpoint is gone only when every memory the node can reach within the round
// deadline is in the plan or absent. The verdict lists each condition with whether it held, as far
// as the challenger knows; unknown counts as not held and says so.
//
//   host-memory-in-plan          host DRAM of the node is planned and covers its physical memory: the
//                                host device's label bytes plus its allowed reserve reach the
//                                inventory's host_physical_memory_bytes (the authority's finding)
//                                but for less than one chunk of m labels, which cannot be planned.
//                                Not held when host memory is unplanned, when the physical memory
//                                is not declared, or when the plan covers less; the detail states
//                                both byte counts
//   wave-complete                the inventory declares the node's wave complete, the whole wave
//                                ran together, and every other member filled and passed every
//                                round it was sent, proof rounds going to every member only after
//                                every member's fill (wave_sync.h)
//   no-nvme-in-reach             the inventory declares no NVMe drive within reach (else unknown)
//                                Both rest on what lies within reach, which depends on the time
//                                memory has to answer: neither holds when the session's round
//                                deadline exceeds the inventory's reach_round_deadline_us (the
//                                longest for which the authority established them); a held one's
//                                detail names that deadline, or says the inventory states none
//   physical-binding             never established in protocol v1: no attestation binds the
//                                answers to the node's physical GPUs
//   device-capacity-as-declared  every device's reported total is at most its declared capacity
//                                (memory beyond the declaration is memory outside the plan). Like
//                                no-nvme-in-reach it rests on a declaration, the inventory's; the
//                                only check is the node's own report of its totals, which a
//                                cheating node controls: it can refute the declaration (not held)
//                                but never confirm it, and the detail says so when it holds
//                                It does not hold either while a slice of a partitioned GPU (MIG
//                                instance, MI300 partition) is planned and another slice of the same
//                                GPU is not (the inventory's partition_of / partitions), nor for a
//                                MIG- selector whose GPU the inventory does not declare
//   no-egress-during-session     the inventory declares the node network-isolated during wipes.
//                                With a declared egress bandwidth instead it does not hold and the
//                                detail states the bytes that could have left: bandwidth x the
//                                session window (order sent to the verdict, after the last round;
//                                the session timeout as an upper bound when the window was not
//                                measured); with neither it is unknown
//   no-uncovered-memory          no memory of the node lies outside every plan. It never holds for
//                                a GPU (its on-chip SRAM: on_chip_memory.h) and does not hold when
//                                the inventory declares DPU, CXL or other memory; the detail lists
//                                the sizes where known (per model from on_chip_memory.h, declared
//                                ones from the inventory) and the devices whose size is unknown
//
// Each of them rests on a declaration of the inventory (capacities, physical memory, reach, waves)
// or never holds. The inventory is the authority's word only when the order's delegation names its
// digest (AssumptionInputs::inventory_signed); otherwise none holds, each detail opening with
// kInventoryNotSigned.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "challenger/session/session_plan.h"

namespace wipeproof {

inline constexpr char kHostMemoryInPlan[] = "host-memory-in-plan";
inline constexpr char kWaveComplete[] = "wave-complete";
inline constexpr char kNoNvmeInReach[] = "no-nvme-in-reach";
inline constexpr char kPhysicalBinding[] = "physical-binding";
inline constexpr char kCapacityAsDeclared[] = "device-capacity-as-declared";
inline constexpr char kNoEgress[] = "no-egress-during-session";
inline constexpr char kNoUncoveredMemory[] = "no-uncovered-memory";

inline constexpr char kInventoryNotSigned[] =
    "not the authority's word: the delegation names no inventory (delegate --inventory), so what the inventory "
    "declares is the challenger's";

struct AssumptionResult {
  std::string name;
  bool held = false;
  std::string detail;
};

// How the rest of the wave fared during a run of several nodes (wave_sync.h).
struct WaveRunResult {
  bool synchronized = false;                // the session ran inside a wave run
  std::vector<std::string> nodes_not_held;  // members that did not fill or failed a round they were sent
};

struct AssumptionInputs {
  const SessionPlan* plan = nullptr;
  // The order's delegation, verified under the authority key, names the inventory the plan came
  // from (SessionPlan::inventory_digest): its declarations are the authority's word. False: no
  // assumption holds, and the verdict states no bound (verdict.h).
  bool inventory_signed = false;
  WaveRunResult wave_run;
  bool have_report = false;
  std::vector<uint64_t> device_total_bytes;  // per planned device, from the fill report; 0 = unknown
  uint64_t session_window_us = 0;            // order sent to the verdict, challenger's monotonic clock; 0 = not
                                             // measured (the plan's session timeout bounds it)
};

// Bytes that can leave at `bytes_per_s` in `window_us`, rounded up, saturating at UINT64_MAX.
uint64_t EgressBytes(uint64_t bytes_per_s, uint64_t window_us);

std::vector<AssumptionResult> EvaluateAssumptions(const AssumptionInputs& in);

// Whether wipeproof can ever establish the assumption `name`: false for physical-binding (never, in
// v1) and no-uncovered-memory (never on a node with a GPU, whose on-chip memory no plan covers); true
// for the others. A gate that waits for every assumption to hold would never open; one that waits
// for these would.
bool AssumptionCanBeEstablished(const std::string& name);

}  // namespace wipeproof
