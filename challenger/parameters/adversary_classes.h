// Adversary classes: the authority's constants that set the security of every calibrated profile
// (docs/calibration.md "The rule"). A class names the fastest sequential time t_min of one
// BLAKE3 compression it must rule out, and a safety factor; the round deadline of a profile for
// that class must stay below 1.5 * m * c_node * t_min / safety (challenger/parameters/deadline_rule.h).
// Measurements from a node never change a class (docs/calibration.md).
//
// The classes come from an authority-owned JSON file (--classes; docs/adversary-classes.json) or,
// without one, DefaultAdversaryClasses():
//   {"classes": [
//     {"name": "commodity-cpu",            required, unique; [a-z0-9._-]+
//      "t_min_ps": 25000,                  required, picoseconds per sequential compression, [1, 2^32-1]
//      "safety_factor": 2,                 optional, default 2, in [1, 1e6]
//      "description": "..."}               optional, shown by `plan`
//   ]}
// A classes file is the authority's only when it is a signed document (proto/signed_document.h,
// type kAdversaryClasses) that verifies under the authority's key (authority_documents.h); the
// built-in classes and unsigned files are usable for planning but a verdict never states a bound
// under a class that is not the authority's (parameter_profile.h ProfileEndorsementProblem).
//
// commodity-cpu's t_min: a 5.7-6 GHz desktop core runs one BLAKE3 compression in about 28-30 ns
// (roughly 170 dependent cycles: 7 rounds of 8 G functions, each a chain of dependent add, xor and
// rotate steps; 170 cycles / 6 GHz = 28.3 ns). 25 ns is taken, below every figure measured, so that
// a faster core (170 cycles at 6.8 GHz) is still ruled out without spending the safety factor.
//
// Thread-safety: AdversaryClasses is a value, immutable after loading.
#pragma once

#include <string>
#include <vector>

#include "challenger/parameters/parameter_profile.h"
#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof {

inline constexpr double kDefaultSafetyFactor = 2.0;
inline constexpr uint64_t kCommodityCpuTMinPs = 25'000;  // 25 ns: one fast commodity CPU core (above)
inline constexpr uint64_t kFpgaAsicTMinPs = 5'000;       // 5 ns: a dedicated BLAKE3 pipeline

struct AdversaryClassEntry {
  AdversaryClass adversary;  // name, t_min_ps, safety_factor
  std::string description;
};

struct AdversaryClasses {
  std::vector<AdversaryClassEntry> classes;
  std::string source;  // the file, or "built-in"
  // Set by authority_documents.h: the file verified under the authority's key.
  bool signed_by_authority = false;
  proto::KeyId authority_key_id{};  // when signed_by_authority
  std::string signature_problem;    // why not, e.g. "the built-in classes are not signed"

  // Errors: NOT_FOUND naming the class and listing the known ones.
  StatusOr<AdversaryClass> Find(const std::string& name) const;
};

// commodity-cpu (25 ns) and fpga-asic (5 ns), both with safety factor 2; not signed.
AdversaryClasses DefaultAdversaryClasses();

// Errors: INVALID_ARGUMENT naming the field (`what` names the document).
StatusOr<AdversaryClasses> ParseAdversaryClassesJson(const std::string& text, const std::string& what = "classes");
// The file at `path`, or DefaultAdversaryClasses() when `path` is empty.
StatusOr<AdversaryClasses> LoadAdversaryClasses(const std::string& path);

}  // namespace wipeproof
