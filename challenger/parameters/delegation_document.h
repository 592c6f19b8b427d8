// The authority's delegation to a challenger key (wipe.capnp Delegation), written on the
// authority's offline machine by `wipeproof-challenger delegate` and carried by every order the
// challenger signs; proto/delegation.h checks an order against it (agent, audits, the challenger).
//
// The authority signs, offline: its adversary classes and parameter profiles (`sign`, `calibrate`)
// and this delegation, which names the challenger's public key, a validity period, and the
// profiles orders may carry, each exactly as an order carries it (WriteProfile), so an agent and an
// auditor read the class, t_min and safety an order runs under from authority-signed text only.
// The challenger holds its delegation and its own secret key, never the authority's.
//
// Units: microseconds since the Unix epoch for times.
// Thread-safety: pure functions (LabDelegation reads the clock it is given).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "challenger/parameters/parameter_profile.h"
#include "common/status.h"
#include "proto/crypto.h"
#include "proto/signing.h"

namespace wipeproof {

struct DelegationTerms {
  proto::PublicKey challenger{};  // the key that may sign orders
  std::string name;               // the authority's name for the delegation
  int64_t not_before_unix_us = 0;
  int64_t not_after_unix_us = 0;
  int64_t issued_at_unix_us = 0;
  // Profiles orders may carry. Each must state a bound as far as who vouches for it goes
  // (ProfileEndorsementProblem is ""): signed by the signing authority, unchanged, its class signed.
  std::vector<Profile> profiles;
  bool allow_unsigned_profiles = false;  // labs: orders may carry an unsigned profile (no bound)
  std::optional<proto::Digest> inventory_digest;  // the inventory the authority checked, if named
};

// Signs `terms` with the authority's key. Errors: INVALID_ARGUMENT for a period that is empty, a
// listed profile that is not endorsed (naming it and why), one endorsed by another key than
// `authority`, or terms that delegate nothing (no profile and no unsigned ones).
StatusOr<proto::SignedEnvelope> SignDelegation(const DelegationTerms& terms, const proto::KeyPair& authority);

// The delegation a lab run makes for itself when it holds the authority's secret key (`wipe` or
// `serve` with --authority_key): valid from an hour before `now_unix_us` for `valid_us`, listing
// `profile` when it is endorsed, allowing unsigned profiles, and naming `inventory_digest` (the
// inventory the lab planned from: a lab holding the authority key is the authority). Returns the
// envelope's bytes (what an order carries). Errors: as SignDelegation.
StatusOr<proto::Bytes> LabDelegation(const proto::KeyPair& authority, const proto::PublicKey& challenger,
                                     const Profile& profile, int64_t now_unix_us, int64_t valid_us,
                                     const std::optional<proto::Digest>& inventory_digest);

}  // namespace wipeproof
