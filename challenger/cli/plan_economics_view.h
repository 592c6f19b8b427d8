// `plan --economics_p999_us`'s output (challenger/calibration/plan_economics.h): a table for people,
// one line per honest round p99.9 and class, e.g.
//   p99.9    class          m     deadline  fill H200  fill H100  fill MI300X  challenger CPU / node-wipe  ...
//   100 us   fpga-asic      2^15  120 us    38.5 s     21.7 s     24.8 s       39.7 s                      ...
// headed by what it assumes and followed by where the modelled fills come from; and the same as one
// JSON object (plan --json's "economics").
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "challenger/calibration/parameter_planner.h"
#include "challenger/calibration/plan_economics.h"

namespace wipeproof {

// `node` is what the economics were computed from; `lookup_added_us` the node profile's slowest
// lookup p99.9 added to each listed value (0 without --node_profile).
std::string PlanEconomicsTable(const PlanInputs& node, const PlanEconomics& economics, uint64_t lookup_added_us);
nlohmann::ordered_json PlanEconomicsJson(const PlanInputs& node, const PlanEconomics& economics,
                                         uint64_t lookup_added_us);

}  // namespace wipeproof
