#include "proto/delegation.h"

#include <cstring>
#include <string>
#include <tuple>

#include "common/clock.h"
#include "common/peer_text.h"

namespace wipeproof::proto {

namespace {

std::string KeyIdText(ByteView public_key) {
  PublicKey key{};
  if (public_key.size() == key.size()) std::memcpy(key.data(), public_key.begin(), key.size());
  return KeyIdHex(KeyIdOf(key));
}

bool Within(int64_t t, int64_t not_before, int64_t not_after, int64_t skew) {
  const int64_t from = not_before < INT64_MIN + skew ? INT64_MIN : not_before - skew;
  const int64_t to = not_after > INT64_MAX - skew ? INT64_MAX : not_after + skew;
  return t >= from && t < to;
}

std::string ProfileText(ParameterProfile::Reader p) {
  return "profile '" + PeerText(p.getName().cStr(), 128) + "' (class '" + PeerText(p.getAdversaryClass().cStr(), 128) +
         "', tMinPs " + std::to_string(p.getTMinPs()) + ", safety " + std::to_string(p.getSafetyFactor()) + ")";
}

}  // namespace

StatusOr<Parsed<Delegation>> VerifyDelegation(ByteView envelope_bytes, const PublicKey& authority) {
  if (envelope_bytes.size() == 0) return PermissionDeniedError("no delegation given");
  auto payload = VerifyEnvelope(envelope_bytes, MessageKind::DELEGATION, authority);
  if (!payload.ok()) {
    return PermissionDeniedError("delegation does not verify under the authority key " + KeyIdHex(KeyIdOf(authority)) +
                                 ": " + payload.status().message());
  }
  auto parsed = ParseMessage<Delegation>(AsView(*payload));
  if (!parsed.ok()) return PermissionDeniedError("delegation: " + parsed.status().message());
  return parsed;
}

bool DelegationListsProfile(Delegation::Reader delegation, ParameterProfile::Reader profile) {
  auto wanted = EncodeCanonical(profile);
  if (!wanted.ok()) return false;
  for (ParameterProfile::Reader listed : delegation.getProfiles()) {
    auto bytes = EncodeCanonical(listed);
    if (bytes.ok() && *bytes == *wanted) return true;
  }
  return false;
}

std::string DescribeDelegation(Delegation::Reader delegation) {
  return "delegation '" + PeerText(delegation.getName().cStr(), 128) + "' to challenger key " +
         KeyIdText(delegation.getChallengerPublicKey()) + ", valid " +
         FormatUnixMicrosUtc(delegation.getNotBeforeUnixUs()) + " to " +
         FormatUnixMicrosUtc(delegation.getNotAfterUnixUs());
}

StatusOr<Parsed<Delegation>> CheckOrderDelegation(WipeOrder::Reader order, const PublicKey& authority,
                                                  const PublicKey& challenger, int64_t at_unix_us,
                                                  int64_t clock_skew_us) {
  if (order.getDelegation().size() == 0) {
    return PermissionDeniedError("the order carries no delegation from the authority");
  }
  auto verified = VerifyDelegation(order.getDelegation(), authority);
  if (!verified.ok()) return PermissionDeniedError("the order's " + verified.status().message());
  Parsed<Delegation> parsed = std::move(verified).value();
  Delegation::Reader d = parsed.root();
  const ByteView delegated = d.getChallengerPublicKey();
  if (delegated.size() != challenger.size() || std::memcmp(delegated.begin(), challenger.data(), challenger.size()) != 0) {
    return PermissionDeniedError("the " + DescribeDelegation(d) + " is not for the challenger key " +
                                 KeyIdHex(KeyIdOf(challenger)) + " that signed the order");
  }
  const int64_t skew = clock_skew_us < 0 ? 0 : clock_skew_us;
  for (const auto& [what, t, allowed] :
       {std::tuple<const char*, int64_t, int64_t>{"the order was issued", order.getIssuedAtUnixUs(), 0},
        std::tuple<const char*, int64_t, int64_t>{"it is now", at_unix_us, skew}}) {
    if (!Within(t, d.getNotBeforeUnixUs(), d.getNotAfterUnixUs(), allowed)) {
      return PermissionDeniedError(std::string(what) + " " + FormatUnixMicrosUtc(t) + ", outside the " +
                                   DescribeDelegation(d) + " (renewed by the authority: `delegate`)");
    }
  }
  ParameterProfile::Reader profile = order.getProfile();
  WP_RETURN_IF_ERROR(CheckDelegatedProfile(d, profile));
  // Past check 4, a profile naming a signature is a listed one: check 5.
  if (profile.getAuthorityKeyId().size() != 0 || profile.getDocumentDigest().size() != 0) {
    if (order.getChunkLabels() != profile.getChunkLabels() || order.getFormat() != profile.getFormat() ||
        order.getRoundDeadlineUs() != profile.getRoundDeadlineUs()) {
      return PermissionDeniedError(
          "the order's m " + std::to_string(order.getChunkLabels()) + ", format " +
          std::to_string(static_cast<int>(order.getFormat())) + " and round deadline " +
          std::to_string(order.getRoundDeadlineUs()) + " us are not its delegated " + ProfileText(profile) + "'s (m " +
          std::to_string(profile.getChunkLabels()) + ", format " + std::to_string(static_cast<int>(profile.getFormat())) +
          ", " + std::to_string(profile.getRoundDeadlineUs()) + " us)");
    }
  }
  return parsed;
}

std::optional<Digest> NamedInventory(Delegation::Reader delegation) {
  const ByteView named = delegation.getInventoryDigest();
  if (named.size() != kDigestBytes) return std::nullopt;
  Digest digest{};
  std::memcpy(digest.data(), named.begin(), kDigestBytes);
  return digest;
}

Status CheckDelegatedProfile(Delegation::Reader d, ParameterProfile::Reader profile) {
  if (DelegationListsProfile(d, profile)) return Status::Ok();
  if (profile.getAuthorityKeyId().size() == 0 && profile.getDocumentDigest().size() == 0) {
    if (d.getAllowUnsignedProfiles()) return Status::Ok();
    return PermissionDeniedError("the order's " + ProfileText(profile) +
                                 " is not signed by the authority, and the " + DescribeDelegation(d) +
                                 " allows only the " + std::to_string(d.getProfiles().size()) +
                                 " signed profile(s) it lists");
  }
  return PermissionDeniedError("the order's " + ProfileText(profile) + " is not one the " + DescribeDelegation(d) +
                               " lists (" + std::to_string(d.getProfiles().size()) +
                               " profile(s); each must match field for field)");
}

}  // namespace wipeproof::proto
