// `wipeproof-challenger sign --what=profile|classes --in=FILE --out=FILE --authority_key=KEY` (cli.h):
// the authority signs a hand-written parameter profile or an adversary-class file, so verdicts may
// state bounds under it (challenger/parameters/authority_documents.h). The input is parsed first (a
// document that would not load is refused) and signed byte for byte (proto/signed_document.h).
#include <cstdio>

#include "challenger/cli/cli.h"
#include "challenger/cli/cli_calibration_flags.h"
#include "challenger/cli/cli_flags.h"
#include "challenger/parameters/adversary_classes.h"
#include "challenger/parameters/parameter_profile.h"
#include "common/file_write.h"
#include "common/hex.h"
#include "common/json_fields.h"
#include "common/terminal_text.h"
#include "proto/key_files.h"
#include "proto/signed_document.h"

namespace wipeproof {

namespace {
constexpr char kSub[] = "sign";
}  // namespace

int RunSign() {
  proto::DocumentType type;
  if (FLAGS_what == "profile") {
    type = proto::DocumentType::kParameterProfile;
  } else if (FLAGS_what == "classes") {
    type = proto::DocumentType::kAdversaryClasses;
  } else {
    return ConfigError(kSub, "--what must be profile or classes, got '" + FLAGS_what + "'");
  }
  if (FLAGS_in.empty()) return ConfigError(kSub, "--in is required (the document to sign)");
  if (FLAGS_out.empty()) return ConfigError(kSub, "--out is required (the signed document to write)");
  if (FLAGS_authority_key.empty()) return ConfigError(kSub, "--authority_key is required (secret key file)");
  auto key = proto::ReadSecretKeyFile(FLAGS_authority_key);
  if (!key.ok()) return ConfigError(kSub, key.status().WithContext("--authority_key"));
  if (Status same = RefuseOutputOverInput(FLAGS_out, FLAGS_in, "the document to sign (--in)"); !same.ok()) {
    return ConfigError(kSub, same);
  }
  auto text = ReadTextFile(FLAGS_in);
  if (!text.ok()) return ConfigError(kSub, text.status().WithContext("--in"));
  for (proto::DocumentType t : {proto::DocumentType::kNodeProfile, proto::DocumentType::kParameterProfile,
                                proto::DocumentType::kAdversaryClasses}) {
    if (proto::IsSignedDocument(t, *text)) {
      return ConfigError(kSub, FLAGS_in + " is already a signed " + proto::InfoOf(t).what +
                                   " document: sign the document inside it, not the wrapper");
    }
  }
  if (FLAGS_max_round_deadline_us > kMaxFlagRoundDeadlineUs) {
    return ConfigError(kSub, "--max_round_deadline_us must be in [0, 1e9], got " +
                                 std::to_string(FLAGS_max_round_deadline_us));
  }
  std::string note;
  if (type == proto::DocumentType::kParameterProfile) {
    auto profile = ParseProfileJson(*text, FLAGS_in);
    if (!profile.ok()) return ConfigError(kSub, profile.status());
    // What the signature will vouch for, read before it is given: the round deadline is also the
    // reach of a relay (labels kept on any machine within that round trip answer in time).
    const Profile& p = *profile;
    std::printf("profile %s: class %s, m = %u, R = %u, q = %u, round deadline %llu us (the reach of a relay; "
                "honest p99.9 %llu us), fill deadline %llu ms%s\n",
                TerminalSafe(p.name).c_str(), TerminalSafe(p.adversary.name).c_str(), p.chunk_labels, p.rounds,
                p.labels_per_round, static_cast<unsigned long long>(p.round_deadline_us),
                static_cast<unsigned long long>(p.honest_round_p999_us),
                static_cast<unsigned long long>(p.fill_deadline_us / 1000), p.calibrated ? ", calibrated" : "");
    if (FLAGS_max_round_deadline_us > 0 && p.round_deadline_us > FLAGS_max_round_deadline_us) {
      std::fprintf(stderr,
                   "wipeproof-challenger %s: refused, nothing written: the profile's round deadline %llu us is above "
                   "--max_round_deadline_us %llu: labels kept on any machine within that round trip would answer in "
                   "time, a reach the wave and storage declarations do not cover\n",
                   kSub, static_cast<unsigned long long>(p.round_deadline_us),
                   static_cast<unsigned long long>(FLAGS_max_round_deadline_us));
      return kExitFailed;
    }
    if (!profile->calibrated) note = " (note: the profile is not calibrated: verdicts under it state no bound)";
    if (profile->adversary.safety_factor < kMinStatedSafetyFactor) {
      note = " (note: safety factor below 1.5: verdicts under it state no bound)";
    }
  } else {
    auto classes = ParseAdversaryClassesJson(*text, FLAGS_in);
    if (!classes.ok()) return ConfigError(kSub, classes.status());
    for (const auto& c : classes->classes) {
      if (c.adversary.safety_factor < kMinStatedSafetyFactor) {
        note =
            " (note: class " + c.adversary.name + " has a safety factor below 1.5: verdicts under it state no bound)";
      }
    }
  }
  auto signed_document = proto::SignDocument(type, *text, *key);
  if (!signed_document.ok()) return ConfigError(kSub, signed_document.status());
  Status written = WriteFileReplacing(FLAGS_out, *signed_document);
  if (!written.ok()) return ConfigError(kSub, written.WithContext("--out"));
  const proto::Digest digest =
      proto::Blake2b256(proto::ByteView(reinterpret_cast<const uint8_t*>(text->data()), text->size()));
  std::printf("signed %s %s with authority key %s: %s (document digest %s)%s\n", proto::InfoOf(type).what,
              FLAGS_in.c_str(), proto::KeyIdHex(proto::KeyIdOf(key->public_key)).c_str(), FLAGS_out.c_str(),
              HexEncode(digest.data(), digest.size()).c_str(), note.c_str());
  return kExitOk;
}

const CliSubcommand& SignSubcommand() {
  static const CliSubcommand kSubcommand = {"sign",
   "the authority signs a parameter profile or an adversary-class file",
   "Signs --in (a parameter profile with --what=profile, an adversary-class file with --what=classes) with\n"
   "the authority key and writes the signed document to --out: the text is kept byte for byte and an\n"
   "Ed25519 signature over it added (proto/signed_document.h). wipe and serve verify both under the\n"
   "authority key; a verdict states a bound only under a signed profile whose class, t_min and safety\n"
   "factor are those of the signed class file. The input is checked first: a document that would not\n"
   "load is refused. A profile's parameters are printed before it is signed (its round deadline is the\n"
   "reach of a relay); one whose round deadline is above --max_round_deadline_us is refused (exit 1).\n"
   "calibrate signs the profiles it writes when it holds the authority key; under a delegation it writes\n"
   "them unsigned, for this command.",
   {"what", "in", "out", "authority_key", "max_round_deadline_us"},
   &RunSign,
   {{"what", "what --in is: profile (a parameter profile) or classes (an adversary-class file) (required)"},
    {"in", "the document to sign (JSON, as written by hand or by `calibrate`) (required)"},
    {"out", "the signed document to write (required)"},
    {"authority_key", "authority secret key file (PREFIX-authority.key, mode 0600) that signs --in (required)"},
    {"max_round_deadline_us",
     "with --what=profile: refuse a profile whose round deadline is above this many microseconds (the relay "
     "reach the wave and storage declarations cover); 0 = no cap"}}};
  return kSubcommand;
}

}  // namespace wipeproof
