// Loading the authority's documents, parameter profiles and adversary-class files, and recording
// whether the authority signed them (threat-model.md "The claim": the adversary class a verdict
// names must be the authority's).
//
// A file is either a plain document (parameter_profile.h, adversary_classes.h) or a signed document
// wrapping one (proto/signed_document.h; `wipeproof-challenger sign` writes them, `calibrate` writes
// signed profiles). Loading never fails on a missing or bad signature: sessions still run under an
// unsigned, altered or differently-signed profile and pass or fail as usual, but the loaded value
// records why the authority does not vouch for it (Profile::endorsement, AdversaryClasses::
// signature_problem) and verdicts under it state no bound, saying why. A wrapper that is malformed
// (not the signed-document shape) is an error like any malformed file.
//
// Endorsing a profile takes both documents: the profile must verify under the authority's key, and
// its class name, t_min and safety factor must equal the class of that name in a classes file that
// verifies under the same key (ParameterProfile.authorityKeyId and documentDigest in the verdict
// tie it to the signed text).
//
// Thread-safety: pure functions (the loaders read files).
#pragma once

#include <string>

#include "challenger/parameters/adversary_classes.h"
#include "challenger/parameters/parameter_profile.h"
#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof {

// The authority's public key and how to name it in messages ("authority key 0123...").
struct AuthorityKey {
  proto::PublicKey public_key{};
  std::string name = "the authority key";
};

// Parses a classes file's text (plain or signed). With `authority` set, a signed file whose
// signature verifies under it is marked signed_by_authority; otherwise signature_problem says why
// not (not signed, signed by another key, altered, or not checked because no key was given).
// Errors: INVALID_ARGUMENT for a malformed document or wrapper (`what` names it).
StatusOr<AdversaryClasses> ParseAdversaryClassesDocument(const std::string& text, const std::string& what,
                                                         const AuthorityKey* authority);
// The file at `path`, or DefaultAdversaryClasses() (never signed) when `path` is empty.
StatusOr<AdversaryClasses> LoadAdversaryClassesDocument(const std::string& path, const AuthorityKey* authority);

// Parses a profile file's text (plain or signed) and endorses it: endorsement.signed_parameters is
// set when the text is a signed profile verifying under `authority`, and endorsement.signed_class
// when `classes` is signed by the same key and has the profile's class. The profile runs either way.
// Errors: INVALID_ARGUMENT for a malformed profile or wrapper (`what` names it).
StatusOr<Profile> ParseProfileDocument(const std::string& text, const std::string& what, const AuthorityKey* authority,
                                       const AdversaryClasses& classes);
// The file at `path`; DefaultProfile() (never signed) when `path` is empty.
StatusOr<Profile> LoadProfileDocument(const std::string& path, const AuthorityKey* authority,
                                      const AdversaryClasses& classes);

// Sets profile->endorsement.signed_class / class_problem from `classes` (signed by the key that
// signed the profile, holding a class of the profile's name). Used by ParseProfileDocument.
void EndorseClass(const AdversaryClasses& classes, Profile* profile);

}  // namespace wipeproof
