// The flags of `wipeproof-challenger calibrate` and `plan` (cli_calibrate.cc, cli_plan.cc), on top
// of the shared ones in cli_flags.h, and the helpers that turn them into an adversary class and a
// calibration policy with errors naming the flag. main.cc treats these flags like cli_flags.cc's:
// a subcommand that does not list one rejects it.
#pragma once

#include <gflags/gflags.h>

#include <cstdint>
#include <vector>

#include "challenger/calibration/calibration_rule.h"
#include "challenger/calibration/calibration_session.h"
#include "challenger/parameters/adversary_classes.h"
#include "challenger/parameters/authority_documents.h"
#include "common/status.h"

DECLARE_string(class);
DECLARE_string(classes);
DECLARE_string(authority_pub);
DECLARE_string(format);
DECLARE_double(margin);
DECLARE_double(fill_slack);
DECLARE_double(target_fraction);
DECLARE_double(confidence);
DECLARE_uint32(labels_per_round);
DECLARE_uint32(max_chunk_labels);
DECLARE_double(max_fill_s);
DECLARE_uint64(max_round_deadline_us);
DECLARE_string(node_profile);
DECLARE_string(node_pub);
DECLARE_uint32(probe_chunk_labels);
DECLARE_uint32(probe_rounds);
DECLARE_uint64(probe_round_deadline_us);
DECLARE_double(probe_fill_deadline_s);
DECLARE_string(name);
DECLARE_uint32(gpus);
DECLARE_string(gpu_model);
DECLARE_uint64(gpu_memory_bytes);
DECLARE_uint64(gpu_reserve_bytes);
DECLARE_double(gpu_fill_gib_per_s);
DECLARE_double(host_memory_gib);
DECLARE_uint64(host_reserve_bytes);
DECLARE_double(host_fill_gib_per_s);
DECLARE_uint32(fill_rate_chunk_labels);
DECLARE_uint64(round_p999_us);
DECLARE_string(economics_p999_us);
DECLARE_double(occupancy_short_s);
DECLARE_uint32(nodes_per_wave);
DECLARE_int32(challenger_cores);
DECLARE_double(verify_rate);
DECLARE_double(compute_rate);
DECLARE_string(plot);
DECLARE_uint64(fleet_nodes);
DECLARE_double(period_s);

namespace wipeproof {

// Documented ranges of the floating flags (also in their --help), so no product or conversion to
// an integer overflows. --margin and --fill_slack: calibration_rule.h kMaxRoundMargin and
// kMaxFillSlack; --round_p999_us: kMaxHonestRoundP999Us.
inline constexpr double kMaxFlagFillSeconds = 1e6;     // --max_fill_s, --probe_fill_deadline_s
inline constexpr uint64_t kMaxFlagRoundDeadlineUs = 1'000'000'000;  // --max_round_deadline_us
inline constexpr double kMaxHostMemoryGib = 1048576;   // --host_memory_gib: 1 PiB
inline constexpr double kMinFillGibPerS = 1e-3;        // --gpu_fill_gib_per_s, --host_fill_gib_per_s
inline constexpr double kMaxFillGibPerS = 1e6;
inline constexpr double kMinVerifyRate = 1e3;          // --verify_rate when not 0 (measure)
inline constexpr double kMaxVerifyRate = 1e12;

// The file defining the flags above, as gflags records it (main.cc's applicability check).
inline constexpr char kCalibrationFlagsFile[] = "challenger/cli/cli_calibration_flags.cc";

// --classes (or the built-in classes), signatures checked under `authority` when it is not null
// (authority_documents.h).
StatusOr<AdversaryClasses> ClassesFromFlag(const AuthorityKey* authority);
// --format, --margin, --fill_slack, --target_fraction, --confidence, --labels_per_round,
// --max_chunk_labels, --max_fill_s, with `adversary` as the class.
StatusOr<CalibrationPolicy> PolicyFromFlags(const AdversaryClass& adversary);
// --probe_chunk_labels, --probe_rounds, --probe_round_deadline_us, --probe_fill_deadline_s.
StatusOr<ProbeOptions> ProbeOptionsFromFlags();
// plan's own flags: --round_p999_us, --host_memory_gib, --gpu_fill_gib_per_s, --host_fill_gib_per_s,
// --verify_rate in their documented ranges (finite; NaN and inf refused), and --node_pub only with
// --node_profile. Errors: INVALID_ARGUMENT naming the flag and its range.
Status CheckPlanFlags();
// --economics_p999_us as whole microseconds in the order given; empty when the flag is. Errors:
// INVALID_ARGUMENT naming the flag for an empty or non-numeric value, one out of [1,
// kMaxHonestRoundP999Us], or more than kMaxEconomicsRoundTimes values (plan_economics.h).
StatusOr<std::vector<uint64_t>> EconomicsRoundTimesFromFlag();

}  // namespace wipeproof
