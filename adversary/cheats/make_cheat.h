// The one place a Deviation (deviation.h) becomes the cheat that plays it (cheat.h): the cheating
// agent calls MakeCheat once, when it is built.
#pragma once

#include <memory>

#include "adversary/cheats/cheat.h"
#include "adversary/deviation.h"

namespace wipeproof::adversary {

// The cheat for `deviation.kind` (DeviationKind::kNone: one that overrides nothing, the honest
// agent). REQUIRES: `deviation` and everything `tools` points to outlive the cheat.
std::unique_ptr<Cheat> MakeCheat(const Deviation& deviation, CheatTools tools);

}  // namespace wipeproof::adversary
