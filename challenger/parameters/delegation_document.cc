#include "challenger/parameters/delegation_document.h"

#include <capnp/message.h>

#include "proto/codec.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

StatusOr<proto::SignedEnvelope> SignDelegation(const DelegationTerms& terms, const proto::KeyPair& authority) {
  if (terms.not_after_unix_us <= terms.not_before_unix_us) {
    return InvalidArgumentError("delegation: its period is empty (not after must follow not before)");
  }
  if (terms.profiles.empty() && !terms.allow_unsigned_profiles) {
    return InvalidArgumentError("delegation: no profile listed and unsigned profiles not allowed: it delegates nothing");
  }
  const proto::KeyId authority_id = proto::KeyIdOf(authority.public_key);
  capnp::MallocMessageBuilder message;
  auto d = message.initRoot<proto::Delegation>();
  d.setChallengerPublicKey(proto::AsView(terms.challenger));
  d.setNotBeforeUnixUs(terms.not_before_unix_us);
  d.setNotAfterUnixUs(terms.not_after_unix_us);
  d.setIssuedAtUnixUs(terms.issued_at_unix_us);
  d.setName(terms.name);
  d.setAllowUnsignedProfiles(terms.allow_unsigned_profiles);
  if (terms.inventory_digest) d.setInventoryDigest(proto::AsView(*terms.inventory_digest));
  auto profiles = d.initProfiles(static_cast<unsigned>(terms.profiles.size()));
  for (size_t i = 0; i < terms.profiles.size(); ++i) {
    const Profile& p = terms.profiles[i];
    const std::string problem = ProfileEndorsementProblem(p);
    if (!problem.empty()) {
      return InvalidArgumentError("delegation: profile '" + p.name + "' cannot be delegated: " + problem);
    }
    if (p.endorsement.authority_key_id != authority_id) {
      return InvalidArgumentError("delegation: profile '" + p.name + "' is signed by authority key " +
                                  proto::KeyIdHex(p.endorsement.authority_key_id) + ", not by the delegating " +
                                  proto::KeyIdHex(authority_id));
    }
    WriteProfile(p, profiles[static_cast<unsigned>(i)]);
  }
  WP_RETURN_IF_ERROR(proto::ValidateShape(d.asReader()).WithContext("delegation"));
  return proto::SignMessage(d.asReader(), authority);
}

StatusOr<proto::Bytes> LabDelegation(const proto::KeyPair& authority, const proto::PublicKey& challenger,
                                     const Profile& profile, int64_t now_unix_us, int64_t valid_us,
                                     const std::optional<proto::Digest>& inventory_digest) {
  constexpr int64_t kHourUs = int64_t{3600} * 1'000'000;
  DelegationTerms terms;
  terms.challenger = challenger;
  terms.name = "lab (made by a challenger holding the authority key)";
  terms.not_before_unix_us = now_unix_us - kHourUs;
  terms.not_after_unix_us = now_unix_us + valid_us;
  terms.issued_at_unix_us = now_unix_us;
  terms.allow_unsigned_profiles = true;
  terms.inventory_digest = inventory_digest;
  if (ProfileEndorsementProblem(profile).empty() &&
      profile.endorsement.authority_key_id == proto::KeyIdOf(authority.public_key)) {
    terms.profiles.push_back(profile);
  }
  WP_ASSIGN_OR_RETURN(proto::SignedEnvelope envelope, SignDelegation(terms, authority));
  return proto::EncodeEnvelope(envelope);
}

}  // namespace wipeproof
