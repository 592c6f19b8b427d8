// What the authority's signed inventory declares of one node, as an audit needs it: the node key,
// each device's model, capacity and allowed reserve, partitions, physical host memory, reach and
// its wave. The inventory document itself is read by challenger/fleet/inventory.h
// (DeclarationsOf); the challenger plans from it (plan_builder.h) and an order restates part of it
// (devices, hostMemoryInPlan, waveName, waveComplete, nodeKeyId). An audit never takes those from
// the challenger-signed order: it checks them against this (CheckOrderDeclarations) and puts the
// rest, which no order carries, into the plan it recomputes the verdict from (ApplyDeclarations).
//
// Units: bytes. Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "challenger/session/declared_compute.h"
#include "challenger/session/node_reach.h"
#include "challenger/session/session_plan.h"
#include "common/status.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

struct DeclaredDevice {
  std::string selector;
  std::string model;
  uint64_t capacity_bytes = 0;
  uint64_t allowed_reserve_bytes = 0;  // the inventory's reserve for the model
  std::string partition_of;            // "" for a whole device
  uint32_t partitions = 0;
};

struct DeclaredWave {
  std::string name;  // "" when the node is in no wave
  bool complete = false;
  size_t nodes = 0;
  std::vector<std::string> members;  // its nodes, as the inventory lists them
};

struct NodeDeclarations {
  std::string name;
  proto::PublicKey public_key{};
  bool no_nvme_in_reach = false;
  // The longest round deadline (us) for which the inventory's reach declarations (no_nvme_in_reach,
  // the wave's completeness) were established; 0 = not declared.
  uint64_t reach_round_deadline_us = 0;
  NodeReach reach;
  uint64_t host_physical_memory_bytes = 0;  // 0 = not declared
  DeclaredCompute compute;                  // the node's fastest label rate
  std::vector<DeclaredDevice> devices;      // the inventory's order, which a plan keeps
  DeclaredWave wave;
};

// An inventory document as an audit reads it: its digest and every node's declarations by name.
struct SignedInventory {
  proto::Digest digest{};
  std::map<std::string, NodeDeclarations> nodes;
};

// OK when the order restates `node`'s declarations: its nodeKeyId is the key's id, its devices are
// the declared ones in the declared order with the declared model, capacityBytes and
// allowedReserveBytes, each planning exactly the whole chunks its capacity less its reserve holds
// (labelCount = floor((capacity - reserve) / (32 m)) * m: labels never planned into the reserve), hostMemoryInPlan says
// whether a "host" device is among them, waveName is the declared wave's (or empty), and waveComplete is set only for a
// wave declared complete and a roundDeadlineUs within the inventory's reach_round_deadline_us (when declared). Errors:
// DATA_LOSS naming the first field that differs.
Status CheckOrderDeclarations(proto::WipeOrder::Reader order, const NodeDeclarations& node);

// Puts into `plan` (one built by PlanFromOrder) what no order carries: the reach (and the round
// deadline it was established for), NVMe and physical memory declarations, each device's
// partition, the wave's declared completeness and size (the whole wave in the run as the order's
// waveComplete says).
void ApplyDeclarations(const NodeDeclarations& node, SessionPlan* plan);

}  // namespace wipeproof
