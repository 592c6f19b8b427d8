// `wipeproof-challenger delegate` (cli.h): on the authority's offline machine, the authority lets
// one challenger key order wipes, for a period, under the signed profiles it lists
// (challenger/parameters/delegation_document.h). The challenger gets the file it writes, never the
// authority's secret key; renewing is running it again, revoking is letting it expire (keep the
// period short) and pinning a new challenger key on the agents.
#include <gflags/gflags.h>

#include <cmath>
#include <cstdio>

#include "challenger/cli/cli.h"
#include "challenger/cli/cli_calibration_flags.h"
#include "challenger/cli/cli_flags.h"
#include "challenger/parameters/authority_documents.h"
#include "challenger/parameters/delegation_document.h"
#include "common/clock.h"
#include "common/file_write.h"
#include "common/hex.h"
#include "common/json_fields.h"
#include "proto/delegation.h"
#include "proto/key_files.h"

DEFINE_string(challenger_pub, "", "delegate: the challenger's public key file (PREFIX-challenger.pub) to delegate to");
DEFINE_double(valid_days, 30, "delegate: days the delegation is in force, from now; in (0, 366]; default 30");
DEFINE_bool(allow_unsigned_profiles, false,
            "delegate: also let orders carry an unsigned profile (labs, demos: such sessions state no bound)");

namespace wipeproof {

namespace {

constexpr char kSub[] = "delegate";

}  // namespace

int RunDelegate() {
  if (FLAGS_authority_key.empty()) return ConfigError(kSub, "--authority_key is required (the authority's secret key file)");
  if (FLAGS_challenger_pub.empty()) return ConfigError(kSub, "--challenger_pub is required (the challenger's public key file)");
  if (FLAGS_out.empty()) return ConfigError(kSub, "--out is required (the delegation file to write)");
  if (!(FLAGS_valid_days > 0 && FLAGS_valid_days <= 366) || !std::isfinite(FLAGS_valid_days)) {
    return ConfigError(kSub, "--valid_days must be in (0, 366]");
  }
  const std::vector<std::string> profile_paths = SplitComma(FLAGS_profile);
  if (profile_paths.empty() && !FLAGS_allow_unsigned_profiles) {
    return ConfigError(kSub, "--profile (signed profiles, comma-separated) or --allow_unsigned_profiles is needed: "
                             "a delegation that lists nothing delegates nothing");
  }
  auto authority = proto::ReadSecretKeyFile(FLAGS_authority_key);
  if (!authority.ok()) return ConfigError(kSub, authority.status().WithContext("--authority_key"));
  auto challenger = proto::ReadPublicKeyFile(FLAGS_challenger_pub);
  if (!challenger.ok()) return ConfigError(kSub, challenger.status().WithContext("--challenger_pub"));

  AuthorityKey key;
  key.public_key = authority->public_key;
  key.name = "the authority key (--authority_key)";
  auto classes = LoadAdversaryClassesDocument(FLAGS_classes, &key);
  if (!classes.ok()) return ConfigError(kSub, classes.status().WithContext("--classes"));

  DelegationTerms terms;
  size_t inventory_nodes = 0;
  uint64_t reach_round_deadline_us = 0;  // the inventory's (every node's declarations carry it)
  terms.challenger = *challenger;
  terms.issued_at_unix_us = SystemClock().UnixMicros();
  terms.not_before_unix_us = terms.issued_at_unix_us;
  terms.not_after_unix_us = terms.issued_at_unix_us + static_cast<int64_t>(FLAGS_valid_days * 86'400e6);
  terms.name = FLAGS_name.empty() ? "challenger " + proto::KeyIdHex(proto::KeyIdOf(*challenger)) : FLAGS_name;
  terms.allow_unsigned_profiles = FLAGS_allow_unsigned_profiles;
  for (const std::string& path : profile_paths) {
    auto profile = LoadProfileDocument(path, &key, *classes);
    if (!profile.ok()) return ConfigError(kSub, profile.status().WithContext("--profile " + path));
    terms.profiles.push_back(*std::move(profile));
  }
  if (!FLAGS_inventory.empty()) {
    auto text = ReadTextFile(FLAGS_inventory);
    if (!text.ok()) return ConfigError(kSub, text.status().WithContext("--inventory"));
    // Read as an audit will read its copy: apart from its folder, every node key inline.
    auto signed_inventory = ReadSignedInventory(*text, FLAGS_inventory);
    if (!signed_inventory.ok()) return ConfigError(kSub, signed_inventory.status().WithContext("--inventory"));
    terms.inventory_digest = signed_inventory->digest;
    inventory_nodes = signed_inventory->nodes.size();
    if (!signed_inventory->nodes.empty()) {
      reach_round_deadline_us = signed_inventory->nodes.begin()->second.reach_round_deadline_us;
    }
  }
  auto envelope = SignDelegation(terms, *authority);
  if (!envelope.ok()) return ConfigError(kSub, envelope.status());
  const proto::Bytes bytes = proto::EncodeEnvelope(*envelope);
  Status written = WriteFileReplacing(FLAGS_out, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  if (!written.ok()) return ConfigError(kSub, written.WithContext("--out"));
  auto parsed = proto::VerifyDelegation(proto::AsView(bytes), authority->public_key);
  if (!parsed.ok()) return ConfigError(kSub, parsed.status());
  std::printf("wrote %s: %s, signed by authority key %s; %zu profile(s)%s\n", FLAGS_out.c_str(),
              proto::DescribeDelegation(parsed->root()).c_str(),
              proto::KeyIdHex(proto::KeyIdOf(authority->public_key)).c_str(), terms.profiles.size(),
              terms.allow_unsigned_profiles ? " and unsigned profiles (no bound under those)" : "");
  for (const Profile& p : terms.profiles) {
    std::printf("  profile %s: class %s, t_min %llu ps, safety %g, document digest %s\n", p.name.c_str(),
                p.adversary.name.c_str(), static_cast<unsigned long long>(p.adversary.t_min_ps),
                p.adversary.safety_factor,
                HexEncode(p.endorsement.document_digest.data(), p.endorsement.document_digest.size()).c_str());
  }
  if (terms.inventory_digest) {
    std::printf("  inventory %s: %zu node(s), digest %s: the challenger plans only from this file\n",
                FLAGS_inventory.c_str(), inventory_nodes,
                HexEncode(terms.inventory_digest->data(), terms.inventory_digest->size()).c_str());
    if (reach_round_deadline_us == 0) {
      std::printf("  reach: for no stated round deadline (the inventory has no reach_round_deadline_us)\n");
    } else {
      std::printf("  reach: round deadlines up to %llu us (reach_round_deadline_us)\n",
                  static_cast<unsigned long long>(reach_round_deadline_us));
    }
    for (const Profile& p : terms.profiles) {
      if (reach_round_deadline_us == 0 || p.round_deadline_us <= reach_round_deadline_us) continue;
      std::fprintf(stderr,
                   "warning: profile %s's round deadline of %llu us is longer than the inventory's "
                   "reach_round_deadline_us of %llu us: its verdicts will hold neither wave-complete nor "
                   "no-nvme-in-reach\n",
                   p.name.c_str(), static_cast<unsigned long long>(p.round_deadline_us),
                   static_cast<unsigned long long>(reach_round_deadline_us));
    }
  } else {
    std::printf("  no inventory named (--inventory): verdicts under this delegation state no bound\n");
  }
  std::printf("copy %s%s to the challenger (serve/wipe --delegation, with --authority_pub); the authority's secret key "
              "stays here\n",
              FLAGS_out.c_str(), terms.inventory_digest ? (" and " + FLAGS_inventory).c_str() : "");
  return kExitOk;
}

const CliSubcommand& DelegateSubcommand() {
  static const CliSubcommand kSubcommand = {"delegate",
   "the authority, offline, lets one challenger key order wipes under the profiles it lists",
   "Run on the authority's offline machine. Writes --out, a delegation signed by --authority_key: the\n"
   "challenger key of --challenger_pub may sign wipe orders for --valid_days from now, under the signed\n"
   "profiles of --profile (comma-separated; each must verify under the authority key with its class in\n"
   "the signed --classes) and, with --allow_unsigned_profiles, under unsigned ones that state no bound.\n"
   "Every order carries the delegation; agents refuse an order outside it, and `ledger audit` and\n"
   "docs/audit_recipe.py take the class, t_min and safety only from it. Copy the file to the challenger\n"
   "(wipe/serve --delegation, --authority_pub); renew it by running this again before it expires; a\n"
   "challenger key that must lose its delegation early is replaced on the agents (docs/deploy.md).",
   {"authority_key", "challenger_pub", "profile", "classes", "valid_days", "name", "allow_unsigned_profiles",
    "inventory", "out"},
   &RunDelegate,
   {{"authority_key", "the authority's secret key file (PREFIX-authority.key, mode 0600) (required)"},
    {"profile", "signed parameter profile files orders may run under, comma-separated"},
    {"classes", "the authority's signed adversary-class file the profiles' classes must come from"},
    {"name", "the authority's name for the delegation; default \"challenger KEYID\""},
    {"inventory", "the inventory the authority signs (its findings: capacities, reserves, physical memory, reach, "
                  "waves; node keys inline): the challenger plans only from it; without it no bound is stated"},
    {"out", "the delegation file to write (required)"}}};
  return kSubcommand;
}

}  // namespace wipeproof
