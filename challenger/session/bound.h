// The bound a passing session states (threat-model.md "The claim"): how many bytes of the node's
// planned memory, taken together, may not have held labels.
//
// Setting. Device d has declared capacity C_d, planned bytes P_d = labelCount * 32 (whole chunks)
// and N_d distinct chunks challenged over all rounds, all answered correctly. Let f_d be the
// fraction of device d's planned labels the prover could not answer from memory (it kept something
// else there, or nothing). Labels are incompressible, so the labels it can answer occupy at least
// sum_d (1 - f_d) P_d bytes of memory; wherever they sit, planned memory or any device's reserve
// (the allowed reserve plus the sub-chunk remainder the plan rounds away, C_d - P_d), the bytes of
// the node's planned devices that held no labels number at most
//   U(f) = sum_d (C_d - P_d) + sum_d f_d P_d.
// The reserves are added in full because labels of one device can be relocated into another planned
// device's reserve within microseconds: a per-device statement "at most X bytes of device d were not
// wiped" is therefore not sound (device d may have moved its labels out and kept a checkpoint in
// their place), and the per-device figures below are diagnostics only.
//
// Test. Each challenge of device d picks a chunk (distinct within a round) and a uniform label in
// it. Given the set of distinct chunks, uniform of size N_d, all of them pass with probability at
// most (1 - f_d)^N_d (Maclaurin's inequality for a uniform subset; a chunk asked twice passes its
// second question no less often than its first), independently across devices, so
//   P(pass | f) <= prod_d (1 - f_d)^N_d.
// Rejecting every f with prod_d (1 - f_d)^N_d < 1 - c is a test of level 1 - c: the true f survives
// with probability >= c. At confidence c, then,
//   unwiped <= sum_d (C_d - P_d) + M,   M = max { sum_d f_d P_d : sum_d N_d * -ln(1 - f_d) <= L },
// with L = -ln(1 - c) and 0 <= f_d <= 1.
//
// The maximum (Lagrange multipliers, KKT). The objective is linear and the constraint convex
// (-ln(1 - f) is convex), so the KKT conditions are sufficient. Stationarity P_d = lambda N_d /
// (1 - f_d) gives
//   f_d = max(0, 1 - lambda / r_d),  r_d = P_d / N_d,
// and lambda > 0 makes the constraint tight: g(lambda) = sum_{r_d > lambda} N_d ln(r_d / lambda) = L.
// g is continuous and strictly decreasing on (0, max r_d], from +inf to 0, so lambda is unique; the
// active devices {r_d > lambda} are the k largest ratios, and for that prefix A
//   ln lambda = (sum_A N_d ln r_d - L) / sum_A N_d,    M = sum_A P_d (1 - lambda / r_d).
// ComputeJointBound sorts by r_d and takes the one prefix k whose lambda lies in [r_{k+1}, r_k).
// A device with N_d = 0 (never checked) has f_d = 1: all its planned bytes count, at no cost.
// Special cases: D = 1 gives M = P (1 - (1 - c)^(1/N)), the one-device formula; equal ratios
// P_d / N_d give M = (sum P_d)(1 - (1 - c)^(1 / sum N_d)): checks spread in proportion to the bytes
// act like one pool, so a node needs N = ln(1 - c) / ln(1 - f) checked chunks *in all* for the
// statement "at most a fraction f of its planned bytes" (calibration_rule.h plans them so).
//
// The wave statement is the same function over the devices of every member of the wave.
//
// Diagnostics. Per device, the old union-bound figure reserve_d + (1 - (1 - c_d)^(1/N_d)) P_d at
// c_d = 1 - (1 - c)/D: what device d would have kept unwiped had no label left it. It is labelled
// a diagnostic wherever it is shown; no statement rests on it.
//
// Units: bytes. Results are rounded up to whole bytes (a bound must not shrink by rounding; the
// maximum is computed in double precision; a relative 1e-12 of M and 1e-14 of the planned bytes are
// added before rounding up, well above the rounding error of the exponents).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wipeproof {

// 1 - (1 - confidence)^(1/checked_chunks): the largest missing fraction of a device that passes
// `checked_chunks` uniform challenges with probability >= 1 - confidence.
// REQUIRES: 0 < confidence < 1, checked_chunks >= 1.
double MissingFractionBound(double confidence, uint64_t checked_chunks);

// Per-device confidence of a D-device union bound at overall confidence c: 1 - (1-c)/D (diagnostics).
double PerDeviceConfidence(double confidence, size_t devices);

struct DeviceBoundInput {
  uint64_t capacity_bytes = 0;  // C_d, declared capacity
  uint64_t planned_bytes = 0;   // P_d = labelCount * 32; <= capacity_bytes
  uint64_t checked_chunks = 0;  // N_d, distinct chunks challenged over all rounds (0: none)
};

// The joint statement for memory taken together (a node's devices, or a wave's).
struct JointBound {
  uint64_t outside_bytes = 0;           // sum_d (C_d - P_d): reserves and sub-chunk remainders, in full
  uint64_t planned_bytes = 0;           // sum_d P_d
  uint64_t missing_bytes = 0;           // ceil(M): planned bytes that may not have held labels
  uint64_t total_bytes = 0;             // outside_bytes + missing_bytes, saturating at UINT64_MAX
  double lambda = 0;                    // the multiplier (0 when every device went unchecked)
  std::vector<double> worst_fractions;  // f_d at the maximum, per input device
};

// REQUIRES: 0 < confidence < 1, planned <= capacity for every device.
JointBound ComputeJointBound(const std::vector<DeviceBoundInput>& devices, double confidence);

// M / sum P_d of ComputeJointBound, as a fraction of the planned bytes (0 when nothing is planned):
// what calibration plans against its target fraction. `checked_chunks` may be fractional
// (expected counts); devices as DeviceBoundInput with checked_chunks replaced.
double JointMissingFraction(const std::vector<uint64_t>& planned_bytes, const std::vector<double>& checked_chunks,
                            double confidence);

struct BoundResult {
  JointBound node;                     // the statement: the node's planned memory taken together
  std::vector<uint64_t> device_bytes;  // diagnostics: per device at per_device_confidence
  double per_device_confidence = 0;    // diagnostics: 1 - (1 - c)/D
  uint64_t total_bytes = 0;            // = node.total_bytes, the stated bound
};

// The node statement and the per-device diagnostics.
// REQUIRES: 0 < confidence < 1, planned <= capacity.
BoundResult ComputeBound(const std::vector<DeviceBoundInput>& devices, double confidence);

}  // namespace wipeproof
