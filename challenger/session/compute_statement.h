// The compute statement of a verdict: the work a passing node's fill provably did, and the share of
// the node's whole compute that work took (docs/protocol.md "The compute a fill consumed";
// threat-model.md "Compute").
//
// Derivation. The bound (bound.h) says, at confidence c, that the node's planned memory lacked at
// most B bytes at its proof rounds, reserves counted in full: so at least H = planned labels -
// ceil((B - reserves) / 32) planned labels were held. Each held label is an output of its chunk's
// graph under this session's fresh seed, so it was computed in this session, between the order and
// the round that found it (at the latest the last proof round's answer) - unless it came in from
// outside the node: a node declared network-isolated brings none; one with a declared ingress
// bandwidth I at most I x (that interval) / 32 labels; one with neither gets no statement. The
// other labels, H' = H - ingress, were computed on the node, and computing them evaluated at least
// the least number of graph nodes any computation of H' outputs of the plan's chunks evaluates
// (kernels/exclusive_chains.h LeastNodesForOutputs: each chunk's shortest exclusive chains), each
// node c_node compressions (label_spec.h SequentialCompressionsPerNode). W = that product. At the
// node's fastest rate R (the authority's: its CPUs plus each device model's label rate;
// declared_compute.h), W took at least W / R seconds of the node's whole compute inside the
// interval from the order to the last proof round's answer, i.e. at least (W / R) / interval of it.
// The same confidence c as the bound (the statement rests on it). Per device it says nothing:
// labels can be computed on one device and copied to another.
//
// Units: labels, compressions, compressions per second, microseconds. Thread-safety: pure
// functions (a process-wide cache of exclusive chains per m, behind a mutex).
#pragma once

#include <cstdint>
#include <string>

#include "challenger/session/session_plan.h"

namespace wipeproof {

struct ComputeStatementInputs {
  const SessionPlan* plan = nullptr;  // devices, m, format, compute rate, reach (ingress)
  bool pass = false;
  bool bound_stated = false;
  uint64_t bound_total_bytes = 0;        // the bound's B (reserves counted in full)
  std::string no_bound_statement;        // the verdict's statement when no bound is stated
  uint64_t proof_rounds_end_after_order_us = 0;  // the last proof round's answer, after the order
};

struct ComputeStatement {
  bool stated = false;
  uint64_t held_labels = 0;       // H: planned labels held at the proof rounds, at confidence c
  uint64_t ingress_labels = 0;    // labels the declared ingress could have brought in
  uint64_t work_compressions = 0;  // W (saturating at 2^64 - 1)
  double rate_compressions_per_s = 0;  // R
  uint64_t interval_us = 0;       // order sent to the last proof round's answer
  uint64_t min_compute_us = 0;    // W / R, microseconds, rounded down
  std::string statement;          // the sentence, or "no compute statement: " and why
};

ComputeStatement ComputeComputeStatement(const ComputeStatementInputs& in);

}  // namespace wipeproof
