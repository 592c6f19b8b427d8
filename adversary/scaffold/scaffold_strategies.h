// Stored-set strategies for the scaffold-storage experiments (docs/scaffold-depth.md): ways an
// adversary might choose internal ("scaffold") nodes to keep instead of outputs, each given the
// outputs it dropped and a budget of scaffold labels. They are heuristics that try to cut the long
// paths into the dropped outputs; none is claimed optimal (choosing the best set is a hitting-set
// problem over paths).
//
// Every strategy returns distinct node ids that are not outputs and not already stored, at most
// `budget` of them. Thread-safety: pure functions (the random ones take their seed explicitly).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adversary/scaffold/scaffold_dag.h"

namespace wipeproof {

enum class ScaffoldStrategy {
  kNone,                      // no scaffold: the honest drop baseline
  kRandom,                    // uniform non-output nodes
  kPredecessors,              // the parent of each dropped output (the tight one-for-one baseline)
  kCriticalPath,              // per slow dropped output (nearest the threshold first), cut its current
                              // longest path at the lowest point that leaves a tail < threshold;
                              // recompute; repeat. (Cutting the same path again further down, "evenly
                              // spaced", cannot shorten that tail, so one cut per path is all it takes.)
  kMaxDescendants,            // nodes with the most dropped-output descendants
  kTopLayers,                 // ancestors of dropped outputs with the largest depth (just below outputs)
  kEveryJthLayer,             // ancestors at depths D-1, D-1-s, ... (D: deepest dropped, s = threshold/4)
  kStandaloneRightCut,        // structural: the right half of the base of each copy's top standalone(n)
                              // (the outputs of its connected(n-1) block, m/4 per copy); not budgeted
  kStandaloneRightCut2,       // the same at levels n and n-1 (m/4 + m/8 per copy); not budgeted
  kRightCutThenCriticalPath,  // kStandaloneRightCut, then kCriticalPath on what is still slow
                              // until every dropped output is fast or the rounds run out; not
                              // budgeted (its size is whatever that takes)
};

// True for the strategies that ignore StrategyInput::budget.
bool IsStructuralStrategy(ScaffoldStrategy s);

std::string ScaffoldStrategyName(ScaffoldStrategy s);
std::vector<ScaffoldStrategy> AllScaffoldStrategies();

struct StrategyInput {
  const ChunkDag* dag = nullptr;
  std::vector<uint8_t> stored;    // per node: kept outputs (the strategy adds scaffold to it)
  std::vector<uint32_t> dropped;  // output ranks not kept
  uint32_t budget = 0;            // scaffold labels allowed (ignored by the structural cuts)
  uint32_t threshold = 0;         // nodes; the depth to get under
  uint64_t seed = 0;              // for kRandom
  int max_rounds = 16;            // kCriticalPath, kRightCutThenCriticalPath: recompute rounds
};

// The scaffold node ids the strategy stores. REQUIRES: input.dag set, masks of node_count().
std::vector<uint32_t> ChooseScaffold(ScaffoldStrategy s, const StrategyInput& input);

}  // namespace wipeproof
