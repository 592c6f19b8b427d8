#include "challenger/parameters/authority_documents.h"

#include <memory>

#include "common/json_fields.h"
#include "proto/signed_document.h"

namespace wipeproof {

namespace {

using proto::DocumentType;

// The document text inside `text` and, when it is a signed wrapper, whether it verified.
struct Unwrapped {
  std::string text;
  bool verified = false;
  proto::KeyId key_id{};
  proto::Digest digest{};
  std::string problem;  // when !verified
};

StatusOr<Unwrapped> Unwrap(DocumentType type, const std::string& text, const std::string& what,
                           const AuthorityKey* authority) {
  Unwrapped out;
  if (!proto::IsSignedDocument(type, text)) {
    out.text = text;
    out.problem = what + " carries no signature";
    return out;
  }
  auto parts = proto::ReadSignedDocument(type, text);
  if (!parts.ok()) return parts.status().WithContext(what);
  out.text = parts->text;
  if (authority == nullptr) {
    out.problem =
        what + ": signature by key " + proto::KeyIdHex(parts->signer_key_id) + " not checked (no authority key given)";
    return out;
  }
  auto verified = proto::VerifyDocument(type, text, authority->public_key, authority->name);
  if (verified.ok()) {
    out.verified = true;
    out.key_id = verified->signer_key_id;
    out.digest = verified->digest;
    return out;
  }
  if (verified.status().code() != StatusCode::kPermissionDenied) return verified.status().WithContext(what);
  out.problem = what + ": " + verified.status().message();
  return out;
}

}  // namespace

StatusOr<AdversaryClasses> ParseAdversaryClassesDocument(const std::string& text, const std::string& what,
                                                         const AuthorityKey* authority) {
  WP_ASSIGN_OR_RETURN(Unwrapped doc, Unwrap(DocumentType::kAdversaryClasses, text, what, authority));
  WP_ASSIGN_OR_RETURN(AdversaryClasses classes, ParseAdversaryClassesJson(doc.text, what));
  classes.signed_by_authority = doc.verified;
  classes.authority_key_id = doc.key_id;
  classes.signature_problem = doc.verified ? "" : doc.problem;
  return classes;
}

StatusOr<AdversaryClasses> LoadAdversaryClassesDocument(const std::string& path, const AuthorityKey* authority) {
  if (path.empty()) return DefaultAdversaryClasses();
  WP_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseAdversaryClassesDocument(text, path, authority);
}

void EndorseClass(const AdversaryClasses& classes, Profile* profile) {
  ProfileEndorsement& e = profile->endorsement;
  e.signed_class.reset();
  e.class_problem.clear();
  if (!classes.signed_by_authority) {
    e.class_problem = classes.signature_problem.empty() ? classes.source + " is not signed by the authority"
                                                        : classes.signature_problem;
    return;
  }
  if (e.signed_parameters != nullptr && classes.authority_key_id != e.authority_key_id) {
    e.class_problem = classes.source + " is signed by key " + proto::KeyIdHex(classes.authority_key_id) +
                      ", the profile by key " + proto::KeyIdHex(e.authority_key_id);
    return;
  }
  auto found = classes.Find(profile->adversary.name);
  if (!found.ok()) {
    e.class_problem = found.status().message();
    return;
  }
  e.signed_class = *found;
}

StatusOr<Profile> ParseProfileDocument(const std::string& text, const std::string& what, const AuthorityKey* authority,
                                       const AdversaryClasses& classes) {
  WP_ASSIGN_OR_RETURN(Unwrapped doc, Unwrap(DocumentType::kParameterProfile, text, what, authority));
  WP_ASSIGN_OR_RETURN(Profile profile, ParseProfileJson(doc.text, what));
  if (doc.verified) {
    profile.endorsement.signed_parameters = std::make_shared<const Profile>(profile);
    profile.endorsement.authority_key_id = doc.key_id;
    profile.endorsement.document_digest = doc.digest;
  } else {
    profile.endorsement.signature_problem = doc.problem;
  }
  EndorseClass(classes, &profile);
  return profile;
}

StatusOr<Profile> LoadProfileDocument(const std::string& path, const AuthorityKey* authority,
                                      const AdversaryClasses& classes) {
  if (path.empty()) {
    Profile p = DefaultProfile();
    p.endorsement.signature_problem = "the built-in profile is not signed";
    EndorseClass(classes, &p);
    return p;
  }
  WP_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseProfileDocument(text, path, authority, classes);
}

}  // namespace wipeproof
