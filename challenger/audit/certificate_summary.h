// What a certificate (certificate.h) says about a session and a wave, computed from their signed
// records alone, so that a verifier recomputes every field and compares: a certificate whose
// summary was edited no longer is what its evidence says. docs/certificate.md describes every
// field; docs/audit_recipe.py computes the same from the records with no wipeproof code.
//
//   session: {"session_id", "node", "node_key_id",                       -- the order's
//             "devices": [{"selector", "planned_bytes", "capacity_bytes", "allowed_reserve_bytes",
//                          "bytes_held", "chunks_checked", "filled_after_us"}],   -- the final verdict's
//             "times": {"order_issued_at_unix_us", "order_issued_at", "order_sent_at_unix_us",
//                       "order_sent_at", "fill_us", "fill_ended_at_unix_us", "fill_ended_at",
//                       "fill_deadline_us", "round_deadline_us", "rounds",
//                       "occupancy_window": null | {"start_after_order_us", "end_after_order_us",
//                                                   "start_at_unix_us", "start_at", "end_at_unix_us", "end_at"},
//                       "verdict_issued_at_unix_us", "verdict_issued_at", "verdict_entry",
//                       "verdict_recorded_at_unix_us", "verdict_recorded_at"},
//             "outcome": {"pass", "failure_reason", "failure_text", "superseded_pass"},
//             "statements": {"bound": {"stated", "statement", "confidence", "total_unwiped_bound_bytes",
//                                      "deadline_rule_satisfied"},
//                            "occupancy": null | {"window_start_after_order_us", "window_end_after_order_us",
//                                                 "rounds", "detection", "short_us", "stated", "statement",
//                                                 "unprotected_us"},
//                            "further": {the verdict's fields this format does not name, as capnp's JSON
//                                        codec writes them (`capnp convert flat:json`), floats as text}},
//             "profile": {"name", "calibrated", "adversary_class", "t_min_ps", "safety_factor",
//                         "confidence", "honest_round_p999_us", "authority_key_id"},
//             "assumptions": [{"name", "held", "detail"}],
//             "declarations": {"inventory_digest" (hex | null), "host_memory_in_plan", "wave", "wave_complete"}}
//   wave:    {"name", "entry", "recorded_at_unix_us", "recorded_at", "issued_at_unix_us", "issued_at",
//             "pass", "complete", "bound_stated", "unwiped_bound_bytes", "confidence", "statement",
//             "members": [{"session_id", "node", "verdict_digest"}], "order_sent_after_wave_us": [...]}
// Units: microseconds (_us), Unix microseconds (_unix_us, with the UTC text beside it), bytes
// (_bytes), picoseconds (t_min_ps). Floats (confidence, safety_factor, detection) are text
// (certificate_text.h FloatText). A time "at" an offset from the order is orderSentAtUnixUs plus
// the offset (the challenger's monotonic offsets placed on its wall clock), null when
// orderSentAtUnixUs is not in (0, 2^60) or the offset is 2^60 or more; fill_ended_at is null too
// when the verdict states no fill time.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "challenger/ledger/ledger_verify.h"
#include "common/status.h"

namespace wipeproof {

// A session's summary from its records (every ledger entry of the session, in ledger order, already
// audited: session_audit.h). The session must have an order first and a verdict. Errors:
// FAILED_PRECONDITION for a session without a verdict; INVALID_ARGUMENT for records that do not
// decode.
StatusOr<nlohmann::ordered_json> CertificateSessionJson(const std::vector<const VerifiedEntry*>& records);

// A wave verdict's summary from its ledger entry (audited: wave_audit.h). Errors: INVALID_ARGUMENT.
StatusOr<nlohmann::ordered_json> CertificateWaveJson(const VerifiedEntry& entry);

// The enumerant name of a verdict's failure reason ("none", "wrongLabel", ...; "reason(N)" past the
// schema's).
std::string FailureReasonName(uint16_t reason);

}  // namespace wipeproof
