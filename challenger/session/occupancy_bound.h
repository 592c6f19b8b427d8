// The statement an occupancy window states (issue "Capacity held over time"; threat-model.md
// "Occupancy rounds"): for how long, at most, a node's planned memory lacked labels in more than b
// bytes while it was asked to hold them between its proof rounds and the window's end.
//
// Setting. After its proof rounds the node holds its labels for a window of W seconds. The
// challenger sends occupancy rounds: the gap from one round's answer to the next round's send is
// exponential with mean g = 1/rate, drawn from the CSPRNG before the order and never disclosed, with
// no floor; each round asks o_d labels of device d, in distinct chunks drawn uniformly from the
// device's planned chunks and a uniform label in each (challenges.h), afresh every round (a chunk
// asked before may be asked again). Every round must be answered correctly within the round
// deadline, which is too short to recompute a chunk (the deadline rule, as for the node bound).
//
// Shortfall. At time t the prover's state lets it answer a fraction 1 - f_d(t) of device d's planned
// labels from memory. As in bound.h the labels it can answer occupy at least sum_d (1 - f_d) P_d
// bytes wherever they sit, so the planned bytes that held no labels number at most
// sum_d (C_d - P_d) + s(t) with s(t) = sum_d f_d(t) P_d. "Short by more than b" means s(t) > b.
//
// One round. A round sent while s > b is passed with probability at most prod_d (1 - f_d)^o_d
// (Maclaurin, bound.h), so it detects the shortfall with probability at least
//   d(b) = 1 - exp(-L(b)),  L(b) = min { sum_d o_d * -ln(1 - f_d) : sum_d f_d P_d >= b },
// the dual of bound.h's maximum: with r_d = P_d / o_d the minimiser is f_d = max(0, 1 - mu / r_d),
// where mu solves sum_d o_d max(0, r_d - mu) = sum_{r_d > mu} P_d - mu sum_{r_d > mu} o_d = b (a
// continuous, strictly decreasing, piecewise linear function of mu on [0, max r_d], from sum P_d to
// 0), and then L(b) = sum_{r_d > mu} o_d ln(r_d / mu). A device with o_d = 0 is never asked: its
// planned bytes count as short at no cost (b is first reduced by them; d(b) = 0 when that leaves
// nothing). One device: d(b) = 1 - (1 - b/P)^o. Ratios P_d / o_d all equal: the same with o = sum o_d
// and P = sum P_d.
//
// The window. Let B be the set of times, outside rounds in flight, at which s(t) > b. The prover may
// choose s adaptively from everything it has seen; it cannot see the next send time. While no round
// is in flight the next send comes at rate 1/g whatever happened before (the gaps are memoryless and
// secret), so the rounds that detect a shortfall arrive with an intensity of at least
// d(b)/g on B, and the compensator A(t) of their count is at least d(b) |B ∩ [0, t]| / g. exp(A(t))
// times the indicator "nothing detected by t" is then a martingale of mean 1 (between detections
// it grows as exp(A); a detection, of intensity dA, sets it to 0), so Markov's inequality gives
//   P(every round passes and |B| > T) <= P(every round passes and A(W) >= d(b) T / g) <= exp(-d(b) T / g).
// Setting exp(-d(b) T / g) = 1 - c: at confidence c, |B| <= T* = g ln(1 / (1 - c)) / d(b).
// Protected time. The argument covers only the time during which a send comes at rate 1/g: each
// drawn gap while it runs (the whole gap when the round went out after it, the part that ran when
// the window ended inside it). The rest of the window is unprotected, U: every round in flight (the
// prover knows one is), the challenger's checks between an answer and the next draw, and any delay
// of a send past its gap's end (the event loop's wake-up). The statement adds all of it. So, at
// confidence c,
//   the planned memory lacked labels in more than (sum_d (C_d - P_d) + b) bytes
//   for at most T* + U seconds of the window in total.
// It holds whatever the number K of rounds, including 0; it says something only when T* + U is below
// the window's length. U is the challenger's measurement (its word, like the gaps' secrecy); an
// audit checks that it is at least the occupancy rounds' time in flight and at most the window.
// tests/challenger/session/occupancy_bound_test.cc checks d(b) by exhaustion on small nodes and the
// window statement by simulating borrowing provers.
//
// Units: bytes, labels, microseconds. Rounding: L(b) is lowered by a relative 1e-12 and T* is
// rounded up to whole microseconds, so neither makes the statement stronger than the argument.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

namespace wipeproof {

struct OccupancyDevice {
  uint64_t planned_bytes = 0;  // P_d = labelCount * 32
  uint32_t round_labels = 0;   // o_d, labels asked of the device in every occupancy round (0: never asked)
};

// d(b): the least probability that one occupancy round detects a shortfall of more than
// `shortfall_bytes` of the planned bytes. 0 when the unasked devices alone plan more than that; 1
// never (a shortfall can always be smaller than a chunk's share). REQUIRES: shortfall_bytes < sum P_d.
double OccupancyDetection(const std::vector<OccupancyDevice>& devices, uint64_t shortfall_bytes);

struct OccupancyStatement {
  double detection = 0;          // d(b)
  uint64_t short_time_us = 0;    // T*: within the protected time; UINT64_MAX when d(b) = 0 (no statement)
  uint64_t stated_short_us = 0;  // T* + U, saturating: the statement's figure
  bool says_something = false;   // stated_short_us < window_us
};

// The statement for a window of `window_us` with mean gap `mean_gap_us` and `unprotected_us` of it
// unprotected (U above), every occupancy round passed, at confidence c.
// REQUIRES: 0 < confidence < 1, mean_gap_us >= 1, shortfall_bytes < sum P_d.
OccupancyStatement ComputeOccupancyStatement(const std::vector<OccupancyDevice>& devices, uint64_t shortfall_bytes,
                                             double confidence, uint64_t mean_gap_us, uint64_t unprotected_us,
                                             uint64_t window_us);

// ln P[X <= rounds] for X Poisson with mean `expected_rounds`: how unlikely it is that gaps that ran
// expected_rounds mean gaps in all ended in no more than `rounds` sends. The audits refuse a window
// whose rounds fall below kOccupancyRoundsImplausible of that tail (a window stretched, or rounds left
// out, by whoever signed it); an honest window fails it with about that chance. 0 when rounds >=
// expected_rounds (nothing unlikely).
double OccupancyRoundsLogLowerTail(uint64_t rounds, double expected_rounds);
inline constexpr double kOccupancyRoundsImplausible = 1e-9;
// How much longer than its order's occupancyWindowUs a window may run, beyond one round deadline (a
// round in flight at the end is waited for): the challenger's timer ends a window whose clock does
// not advance a second late (session_run.cc OccupancyWindowOver). The audits refuse a longer one.
inline constexpr uint64_t kOccupancyOverrunSlackUs = 1'000'000;

// The mean gap (microseconds, rounded down so the statement is no weaker) that makes T* equal
// `short_time_us` at confidence c: T* d(b) / ln(1/(1-c)); 0 when d(b) = 0 or that is below 1 us.
uint64_t OccupancyMeanGapFor(const std::vector<OccupancyDevice>& devices, uint64_t shortfall_bytes, double confidence,
                             uint64_t short_time_us);

}  // namespace wipeproof
