// Writes a parameter profile as the JSON document parameter_profile.h reads (docs/operations.md "Parameter
// profiles"), so `calibrate` output loads with --profile unchanged: ParseProfileJson(dump) gives
// back the same Profile (fill deadline in whole milliseconds, slack in whole seconds).
//
// Thread-safety: pure function.
#pragma once

#include <nlohmann/json.hpp>

#include "challenger/parameters/parameter_profile.h"

namespace wipeproof {

nlohmann::ordered_json ProfileToJson(const Profile& profile);

}  // namespace wipeproof
