// The authority's delegation to a challenger key (wipe.capnp Delegation), and the one check of
// whether an order stands under it: the agent runs it before it accepts an order, `ledger audit`
// on every recorded order, and the challenger on its own delegation before it signs an order;
// docs/audit_recipe.py ports it. Why: the authority's secret key stays offline
// (threat-model.md "Parties"), so whoever holds the challenger host can sign orders, but only
// under the profiles, for the time and as the key the authority named.
//
// An order stands under its delegation when (in this order):
//   1. it carries one (WipeOrder.delegation) that decodes as an envelope of kind delegation and
//      verifies under `authority` (proto/signing.h), with a well-formed Delegation payload;
//   2. the delegation names `challenger`, the key the order itself verified under;
//   3. the order's issuedAtUnixUs and `at_unix_us` (the agent's clock; an audit passes the order's
//      issuedAtUnixUs) lie in [notBeforeUnixUs - skew, notAfterUnixUs + skew);
//   4. the order's profile is one the delegation lists, field for field (canonical bytes), or it
//      names no signature (no authorityKeyId) and the delegation allows unsigned profiles;
//   5. a listed profile's m, format and round deadline are the order's own (WipeOrder chunkLabels,
//      format, roundDeadlineUs): the deadline rule's inputs are the authority's too.
// Skew applies to `at_unix_us` only (the agent's clock against the authority's); the order's
// issue time is the challenger's and must lie in the period exactly, as the audits check it.
// Errors: PERMISSION_DENIED naming the first that does not hold ("order refused" reasons).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include "common/status.h"
#include "proto/codec.h"
#include "proto/crypto.h"
#include "proto/signing.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::proto {

// Checks 1-4 above; returns the verified delegation.
StatusOr<Parsed<Delegation>> CheckOrderDelegation(WipeOrder::Reader order, const PublicKey& authority,
                                                  const PublicKey& challenger, int64_t at_unix_us,
                                                  int64_t clock_skew_us);

// Check 1 alone: the delegation envelope bytes verified under `authority` and parsed. Errors:
// PERMISSION_DENIED "no delegation given", "delegation does not verify under the authority key
// ...", "delegation: <shape problem>".
StatusOr<Parsed<Delegation>> VerifyDelegation(ByteView envelope_bytes, const PublicKey& authority);

// Check 4 alone: `profile` equals one of the delegation's profiles, field for field.
bool DelegationListsProfile(Delegation::Reader delegation, ParameterProfile::Reader profile);

// Check 4 as a status: OK when `profile` is listed, or names no signature and unsigned profiles are
// allowed; PERMISSION_DENIED "the order's profile ... is not signed by the authority, and the
// delegation ... allows only ..." or "... is not one the delegation ... lists".
Status CheckDelegatedProfile(Delegation::Reader delegation, ParameterProfile::Reader profile);

// The inventory digest `delegation` names (Delegation.inventoryDigest); nullopt when it names none.
std::optional<Digest> NamedInventory(Delegation::Reader delegation);

// "delegation 'NAME' to challenger key 0123abcd..., valid 2026-12-01T00:00:00Z to ...".
std::string DescribeDelegation(Delegation::Reader delegation);

}  // namespace wipeproof::proto
