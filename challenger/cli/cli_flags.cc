#include "challenger/cli/cli_flags.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <capnp/message.h>

#include "challenger/cli/cli_calibration_flags.h"
#include "challenger/cli/precompute_progress.h"
#include "challenger/cli/session_progress_lines.h"
#include "challenger/parameters/authority_documents.h"
#include "challenger/parameters/delegation_document.h"
#include "common/hex.h"
#include "common/clock.h"
#include "common/json_fields.h"
#include "common/progress_line.h"
#include "proto/delegation.h"
#include "proto/key_files.h"
#include "proto/validate.h"

DEFINE_string(out, "",
              "keygen: path prefix; writes PREFIX-authority.{key,pub} and PREFIX-challenger.{key,pub}; "
              "calibrate: the parameter profile file to write (signed by --authority_key); sign: the signed "
              "document to write");
DEFINE_bool(overwrite, false, "keygen: replace existing key files");
DEFINE_string(node, "", "wipe, calibrate: inventory name of the node (required)");
DEFINE_string(inventory, "", "inventory JSON file: nodes, waves, allowed reserves (required)");
DEFINE_string(authority_key, "",
              "authority secret key file (PREFIX-authority.key, mode 0600), on the authority's offline machine: "
              "signs profiles, class files and delegations; wipe and serve take it only in a lab (use "
              "--delegation and --authority_pub in deployment)");
DEFINE_string(delegation, "",
              "wipe, serve: the authority's delegation to this challenger's key (written offline by `delegate`); "
              "every order carries it; with --authority_pub, the deployment form (the authority's secret key "
              "stays offline)");
DEFINE_string(challenger_key, "",
              "challenger secret key file (PREFIX-challenger.key, mode 0600): signs verdicts, receipts, ledger");
DEFINE_string(ledger, "",
              "ledger database file (SQLite); created if absent (required; calibrate: optional, records its "
              "probe sessions)");
DEFINE_string(profile, "",
              "parameter profile JSON file, plain or signed by the authority (calibrate writes signed ones; `sign "
              "--what=profile` signs a hand-written one); verdicts state a bound only under a signed one; default the "
              "built-in uncalibrated profile");
DEFINE_int32(threads, 0, "threads computing expected labels per session; 0 = all cores");
DEFINE_bool(json, false, "print each verdict as one JSON object on stdout (the summary goes to stderr)");
DEFINE_double(capacity_over_s, 604800, "status: the span, seconds before now, of each node's proven capacity");
DEFINE_double(connect_timeout_s, 10, "seconds to wait for the TCP connection to an agent; default 10");
DEFINE_bool(round_channel, true,
            "send each session's rounds on a round channel, a second connection to the agent without the RPC "
            "system (docs/protocol.md \"The round channel\"; an agent without one gets them over RPC); false: over "
            "RPC always, some 25-40 us slower a round (calibrate measures rounds the same way: run wipe and serve "
            "as the profile was calibrated); default true");
DEFINE_int32(session_loops, 0,
             "serve: run a wave's sessions on this many event loops (threads), each member's session a fiber on "
             "one of them, instead of a thread for every member: for waves of many more members than the "
             "challenger has cores (docs/operations.md \"Session loops\"); 0 = a thread per member; default 0");
DEFINE_string(progress, "auto",
              "progress on stderr, per node, of each step that takes more than a second: the expected-label "
              "precompute, the wait for the node's fill and the proof rounds: auto (only when stderr is a "
              "terminal), always, never");
DEFINE_double(occupancy_window_s, 0,
              "wipe: after the proof rounds the node holds its labels this many seconds and answers occupancy "
              "rounds at secret exponential gaps; the verdict then states, at the profile's confidence c, that its "
              "planned memory lacked labels in more than b bytes (beyond its reserves) for at most T* + U of the "
              "window, T* = mean gap x ln(1/(1-c)) / d(b) (docs/protocol.md \"Occupancy rounds\"; how to choose: "
              "docs/calibration.md \"Occupancy windows\"). Stated only under a calibrated, signed profile. The "
              "agent must keep sessions that long (wipeproof-prover serve's session timeout, 1 h by default); "
              "0 = none");
DEFINE_double(occupancy_mean_gap_s, 1,
              "wipe, with --occupancy_window_s: mean gap between occupancy rounds, seconds (secret draws); shorter "
              "gaps tighten T* and cost the challenger more; default 1");
DEFINE_double(occupancy_shortfall, 0.01,
              "wipe, with --occupancy_window_s: b, the shortfall the statement rules out for longer than T*, as a "
              "fraction of the node's planned bytes, in (0, 1); default 0.01");
DEFINE_uint32(occupancy_labels, 8,
              "wipe, with --occupancy_window_s: labels one occupancy round asks over the node's devices (by planned "
              "bytes, at least one each); more raise d(b) (the chance a round sees the shortfall) and each is one "
              "chunk the challenger recomputes; default 8");
DEFINE_string(wave, "", "serve: run only this wave; default every wave of the inventory");
DEFINE_uint64(max_sessions, 0, "serve: stop after the wave run that brings the sessions to at least N; 0 = no limit");
DEFINE_bool(once, false, "serve: run every wave once, now, then exit");
DEFINE_string(round_costs, "",
              "serve: when it ends, write the challenger's own share of each round to this file as one JSON "
              "object (build and check time, p50/p99/p99.9 and CPU per round: session/round_costs.h); a benchmark "
              "figure, never recorded in the ledger; default none");
DEFINE_string(shard, "",
              "serve: I/N: run only the inventory's waves k with k mod N = I (one of N challengers, each with its "
              "own ledger; the Kubernetes StatefulSet passes its replica ordinal); default every wave");
DEFINE_double(prepare_ahead_gib, 4,
              "serve: expected labels (GiB) that waves' next runs may hold while prepared ahead of their time; a run "
              "that would go over is prepared at its time instead (its orders then wait for it)");
DEFINE_string(metrics_listen, "",
              "serve: HOST:PORT to serve Prometheus metrics on (GET /metrics, /healthz; plain HTTP, no "
              "authentication: bind an address only the scraper reaches); port 0 picks a free one (printed on "
              "stderr); empty (default) = no metrics");
DEFINE_string(what, "", "sign: what --in is: profile (a parameter profile) or classes (an adversary-class file)");
DEFINE_string(in, "", "sign: the document to sign (JSON, as written by hand or by `calibrate`)");

namespace wipeproof {

std::vector<std::string> SplitComma(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}


StatusOr<Inventory> InventoryFromFlag() {
  if (FLAGS_inventory.empty()) return InvalidArgumentError("--inventory is required (inventory JSON file)");
  return LoadInventory(FLAGS_inventory);
}

namespace {

AuthorityKey AuthorityKeyOf(const proto::PublicKey& authority) {
  AuthorityKey key;
  key.public_key = authority;
  key.name = "the authority key (--authority_key)";
  return key;
}

}  // namespace

StatusOr<AdversaryClasses> SignedClassesFromFlag(const proto::PublicKey& authority) {
  const AuthorityKey key = AuthorityKeyOf(authority);
  auto classes = LoadAdversaryClassesDocument(FLAGS_classes, &key);
  if (!classes.ok()) return classes.status().WithContext("--classes");
  return classes;
}

StatusOr<Profile> ProfileFromFlag(const proto::PublicKey& authority, const AdversaryClasses& classes) {
  const AuthorityKey key = AuthorityKeyOf(authority);
  return LoadProfileDocument(FLAGS_profile, &key, classes);
}

void WarnIfLabAuthorityKey(const char* subcommand, const SessionKeys& keys) {
  if (!keys.delegation.empty()) return;
  std::fprintf(stderr,
               "wipeproof-challenger %s: warning: the authority's secret key is on this challenger (--authority_key): "
               "lab use only; whoever holds this host can order under any class. In deployment the authority signs "
               "a delegation offline (`delegate`) and the challenger runs with --delegation and --authority_pub "
               "(docs/deploy.md \"3. Keys and the authority's delegation\")\n",
               subcommand);
}

void WarnIfInventoryNotDelegated(const char* subcommand, const SessionKeys& keys, const Inventory& inventory) {
  if (keys.delegation.empty()) {
    // A lab's delegation names the inventory it planned from, when the inventory can be named.
    if (inventory.digest) return;
    std::fprintf(stderr,
                 "wipeproof-challenger %s: warning: verdicts will state no bound and no assumption will hold: the "
                 "inventory names node keys by file (public_key_file), so no delegation can name it; write each key "
                 "inline (\"public_key\")\n",
                 subcommand);
    return;
  }
  auto delegation = proto::VerifyDelegation(proto::AsView(keys.delegation), keys.authority.public_key);
  if (!delegation.ok() || proto::NamedInventory(delegation->root())) return;
  std::fprintf(stderr,
               "wipeproof-challenger %s: warning: verdicts will state no bound and no assumption will hold: the "
               "delegation names no inventory, so the capacities, reserves and reach it declares are this "
               "challenger's word, not the authority's (the authority signs it: `delegate --inventory`)\n",
               subcommand);
}

Status CheckDelegatedInventory(const SessionKeys& keys, const Inventory& inventory) {
  if (keys.delegation.empty()) return Status::Ok();
  WP_ASSIGN_OR_RETURN(auto delegation, proto::VerifyDelegation(proto::AsView(keys.delegation), keys.authority.public_key));
  const std::optional<proto::Digest> named = proto::NamedInventory(delegation.root());
  if (!named || (inventory.digest && *named == *inventory.digest)) return Status::Ok();
  if (!inventory.digest) {
    return FailedPreconditionError("--inventory=" + FLAGS_inventory + " names node keys by file (public_key_file), and the " +
                                   proto::DescribeDelegation(delegation.root()) +
                                   " names an inventory by a digest that must cover every key: use the file the "
                                   "authority signed, each key inline (\"public_key\")");
  }
  const std::string have = HexEncode(inventory.digest->data(), inventory.digest->size());
  return FailedPreconditionError("--inventory=" + FLAGS_inventory + " (digest " + have + ") is not the inventory the " +
                                 proto::DescribeDelegation(delegation.root()) + " names (" +
                                 HexEncode(named->data(), named->size()) +
                                 "): plan only from the inventory the authority signed, or ask it to sign this one "
                                 "(`delegate --inventory`)");
}

void WarnIfNoBound(const char* subcommand, const Profile& profile) {
  if (!profile.calibrated) return;
  const std::string problem = ProfileEndorsementProblem(profile);
  if (problem.empty()) return;
  std::fprintf(stderr, "wipeproof-challenger %s: warning: verdicts will state no bound: %s\n", subcommand,
               problem.c_str());
}

StatusOr<SessionKeys> KeysFromFlags() {
  if (FLAGS_challenger_key.empty()) return InvalidArgumentError("--challenger_key is required (secret key file)");
  const bool delegated = !FLAGS_delegation.empty();
  if (delegated == !FLAGS_authority_key.empty()) {
    return InvalidArgumentError(
        "give --delegation with --authority_pub (deployment: the authority's secret key stays offline), or "
        "--authority_key (a lab holding the authority's secret key), not both and not neither");
  }
  SessionKeys keys;
  auto challenger = proto::ReadSecretKeyFile(FLAGS_challenger_key);
  if (!challenger.ok()) return challenger.status().WithContext("--challenger_key");
  keys.challenger = *challenger;
  if (!delegated) {
    auto authority = proto::ReadSecretKeyFile(FLAGS_authority_key);
    if (!authority.ok()) return authority.status().WithContext("--authority_key");
    keys.authority = *authority;
    return keys;
  }
  if (FLAGS_authority_pub.empty()) {
    return InvalidArgumentError("--delegation needs --authority_pub (the authority's public key file, PREFIX-authority.pub)");
  }
  auto authority = proto::ReadPublicKeyFile(FLAGS_authority_pub);
  if (!authority.ok()) return authority.status().WithContext("--authority_pub");
  keys.authority.public_key = *authority;
  auto text = ReadTextFile(FLAGS_delegation, uint64_t{1} << 20, "a delegation file");  // VerifyDelegation limits it further
  if (!text.ok()) return text.status().WithContext("--delegation");
  proto::Bytes bytes(text->begin(), text->end());
  auto delegation = proto::VerifyDelegation(proto::AsView(bytes), *authority);
  if (!delegation.ok()) return delegation.status().WithContext("--delegation=" + FLAGS_delegation);
  const capnp::Data::Reader named = delegation->root().getChallengerPublicKey();
  if (named.size() != keys.challenger.public_key.size() ||
      !std::equal(named.begin(), named.end(), keys.challenger.public_key.begin())) {
    return PermissionDeniedError("--delegation=" + FLAGS_delegation + ": the " +
                                 proto::DescribeDelegation(delegation->root()) + " is not for --challenger_key (" +
                                 proto::KeyIdHex(proto::KeyIdOf(keys.challenger.public_key)) + ")");
  }
  keys.delegation = std::move(bytes);
  return keys;
}

Status CheckDelegationCovers(const SessionKeys& keys, const Profile& profile, int64_t now_unix_us) {
  if (keys.delegation.empty()) return Status::Ok();  // a lab delegation is made per order
  WP_ASSIGN_OR_RETURN(auto delegation, proto::VerifyDelegation(proto::AsView(keys.delegation), keys.authority.public_key));
  const proto::Delegation::Reader d = delegation.root();
  if (now_unix_us < d.getNotBeforeUnixUs() || now_unix_us >= d.getNotAfterUnixUs()) {
    return FailedPreconditionError("the " + proto::DescribeDelegation(d) +
                                   " is not in force now: ask the authority to renew it (`delegate`)");
  }
  capnp::MallocMessageBuilder message;
  auto wire = message.initRoot<proto::ParameterProfile>();
  WriteProfile(profile, wire);
  if (proto::CheckDelegatedProfile(d, wire.asReader()).ok()) return Status::Ok();
  return FailedPreconditionError("the " + proto::DescribeDelegation(d) + " does not list profile '" + profile.name +
                                 "' as loaded here" +
                                 (wire.getAuthorityKeyId().size() == 0 ? std::string(" (unsigned, and it allows no unsigned profile)")
                                                                       : std::string("")) +
                                 ": agents would refuse every order");
}

StatusOr<std::unique_ptr<Ledger>> LedgerFromFlag(const proto::KeyPair& challenger_key, const Inventory& inventory) {
  if (FLAGS_ledger.empty()) return InvalidArgumentError("--ledger is required (ledger database file)");
  // SQLite would say only "unable to open database file" for a ledger in a missing folder.
  const size_t slash = FLAGS_ledger.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : FLAGS_ledger.substr(0, slash);
  struct stat st;
  if (::stat(folder.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
    return NotFoundError("--ledger=" + FLAGS_ledger + ": the folder " + folder + " does not exist; create it first");
  }
  auto ledger = Ledger::Open(FLAGS_ledger, challenger_key, SystemClock());
  if (!ledger.ok()) return ledger.status().WithContext("--ledger=" + FLAGS_ledger);
  if (inventory.digest) {  // a document a delegation can name (every key inline)
    Status recorded = (*ledger)->RecordDocument("inventory", inventory.text);
    if (!recorded.ok()) return recorded.WithContext("--ledger=" + FLAGS_ledger + ": recording the inventory");
  }
  return ledger;
}

StatusOr<TcpSessionOptions> TcpSessionOptionsFromFlags() {
  if (FLAGS_threads < 0) return InvalidArgumentError("--threads must be >= 0, got " + std::to_string(FLAGS_threads));
  if (!(FLAGS_connect_timeout_s > 0) || !std::isfinite(FLAGS_connect_timeout_s)) {
    return InvalidArgumentError("--connect_timeout_s must be > 0");
  }
  if (FLAGS_session_loops < 0 || FLAGS_session_loops > kMaxSessionLoops) {
    return InvalidArgumentError("--session_loops must be in [0, " + std::to_string(kMaxSessionLoops) + "], got " +
                                std::to_string(FLAGS_session_loops));
  }
  auto progress = ParseProgressMode(FLAGS_progress);
  if (!progress.ok()) return progress.status();
  TcpSessionOptions options;
  if (ProgressWanted(*progress)) {
    auto lines = std::make_shared<PrecomputeProgress>(true);
    options.prepare_progress = [lines](const std::string& node, uint64_t done, uint64_t total) {
      lines->Report(node, done, total);
    };
    auto sessions = std::make_shared<SessionProgressLines>();
    options.session_progress = [sessions](const std::string& node, const SessionProgress& p) {
      sessions->Report(node, p);
    };
  }
  options.clock = &SystemClock();
  options.threads = static_cast<int>(FLAGS_threads);
  options.connect_timeout_us = static_cast<uint64_t>(FLAGS_connect_timeout_s * 1e6);
  options.round_channel = FLAGS_round_channel;
  options.session_loops = static_cast<int>(FLAGS_session_loops);
  return options;
}

namespace {

std::string FlagNumber(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.10g", x);
  return text;
}

}  // namespace

Status CheckOccupancyFlags() {
  auto given = [](const char* flag) { return !gflags::GetCommandLineFlagInfoOrDie(flag).is_default; };
  auto number = FlagNumber;
  if (FLAGS_occupancy_window_s == 0) {
    for (const char* flag : {"occupancy_mean_gap_s", "occupancy_shortfall", "occupancy_labels"}) {
      if (given(flag)) {
        return InvalidArgumentError(std::string("--") + flag +
                                    " is used only with an occupancy window: give --occupancy_window_s too");
      }
    }
    return Status::Ok();
  }
  constexpr double kMaxSeconds = static_cast<double>(proto::kMaxOccupancyWindowUs) / 1e6;
  if (!(FLAGS_occupancy_window_s > 0 && FLAGS_occupancy_window_s <= kMaxSeconds)) {
    return InvalidArgumentError("--occupancy_window_s " + number(FLAGS_occupancy_window_s) + " is not in (0, " +
                                number(kMaxSeconds) + "] seconds (31 days)");
  }
  if (!(FLAGS_occupancy_mean_gap_s >= 1e-6 && FLAGS_occupancy_mean_gap_s <= FLAGS_occupancy_window_s)) {
    return InvalidArgumentError("--occupancy_mean_gap_s " + number(FLAGS_occupancy_mean_gap_s) +
                                " is not in [0.000001, --occupancy_window_s " + number(FLAGS_occupancy_window_s) +
                                "] seconds");
  }
  if (!(FLAGS_occupancy_shortfall > 0 && FLAGS_occupancy_shortfall < 1)) {
    return InvalidArgumentError("--occupancy_shortfall " + number(FLAGS_occupancy_shortfall) +
                                " is not a fraction in (0, 1) of the planned bytes");
  }
  if (FLAGS_occupancy_labels == 0) return InvalidArgumentError("--occupancy_labels must be >= 1");
  return Status::Ok();
}

Status ApplyOccupancyFlags(SessionPlan* plan) {
  WP_RETURN_IF_ERROR(CheckOccupancyFlags());
  if (FLAGS_occupancy_window_s == 0) return Status::Ok();
  auto number = FlagNumber;
  const OccupancyRequest request = OccupancyRequestOf(*plan, FLAGS_occupancy_window_s, FLAGS_occupancy_mean_gap_s,
                                                      FLAGS_occupancy_shortfall, FLAGS_occupancy_labels);
  return SetOccupancySchedule(plan, request)
      .WithContext("--occupancy_labels=" + std::to_string(FLAGS_occupancy_labels) + " --occupancy_mean_gap_s=" +
                   number(FLAGS_occupancy_mean_gap_s) + " --occupancy_window_s=" + number(FLAGS_occupancy_window_s));
}

StatusOr<WipeSetup> WipeSetupFromFlags() {
  WipeSetup setup;
  WP_ASSIGN_OR_RETURN(setup.inventory, InventoryFromFlag());
  WP_ASSIGN_OR_RETURN(setup.keys, KeysFromFlags());
  WP_ASSIGN_OR_RETURN(setup.classes, SignedClassesFromFlag(setup.keys.authority.public_key));
  auto profile = ProfileFromFlag(setup.keys.authority.public_key, setup.classes);
  if (!profile.ok()) return profile.status().WithContext("--profile");
  setup.profile = *std::move(profile);
  Status covered = CheckDelegationCovers(setup.keys, setup.profile, SystemClock().UnixMicros());
  if (!covered.ok()) return covered.WithContext("--delegation=" + FLAGS_delegation);
  WP_RETURN_IF_ERROR(CheckDelegatedInventory(setup.keys, setup.inventory));
  WP_ASSIGN_OR_RETURN(setup.tcp, TcpSessionOptionsFromFlags());
  return setup;
}

}  // namespace wipeproof
