// The flags of wipeproof-challenger (gflags, process-global; each subcommand lists the ones it
// takes in cli.h and main.cc rejects the others), and the loaders that turn them into inventory,
// profile, keys and ledger with errors naming the flag.
#pragma once

#include <gflags/gflags.h>

#include <memory>
#include <string>
#include <vector>

#include "challenger/fleet/inventory.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/ledger/ledger.h"
#include "challenger/parameters/adversary_classes.h"
#include "challenger/parameters/parameter_profile.h"
#include "challenger/session/session_runner.h"
#include "common/status.h"

DECLARE_string(out);
DECLARE_bool(overwrite);
DECLARE_string(node);
DECLARE_double(occupancy_window_s);
DECLARE_double(occupancy_mean_gap_s);
DECLARE_double(occupancy_shortfall);
DECLARE_uint32(occupancy_labels);
DECLARE_string(inventory);
DECLARE_string(authority_key);
DECLARE_string(delegation);
DECLARE_string(challenger_key);
DECLARE_string(ledger);
DECLARE_string(profile);
DECLARE_int32(threads);
DECLARE_bool(json);
DECLARE_double(capacity_over_s);
DECLARE_double(connect_timeout_s);
DECLARE_bool(round_channel);
DECLARE_int32(session_loops);
DECLARE_string(progress);
DECLARE_string(wave);
DECLARE_uint64(max_sessions);
DECLARE_bool(once);
DECLARE_string(round_costs);
DECLARE_string(shard);
DECLARE_double(prepare_ahead_gib);
DECLARE_string(metrics_listen);
DECLARE_string(what);
DECLARE_string(in);

namespace wipeproof {

// The non-empty parts of a comma-separated flag value ("a,,b" -> {"a", "b"}).
std::vector<std::string> SplitComma(const std::string& text);

// --inventory (required). Errors: INVALID_ARGUMENT naming the flag when unset; LoadInventory's.
StatusOr<Inventory> InventoryFromFlag();
// --classes under the authority's public key (the built-in classes when empty: never signed).
StatusOr<AdversaryClasses> SignedClassesFromFlag(const proto::PublicKey& authority);
// --profile (plain or signed), or the built-in DefaultProfile() when empty, endorsed under the
// authority's public key against `classes` (authority_documents.h): an unsigned, altered or
// differently-signed profile loads and runs, but its verdicts state no bound and say why.
StatusOr<Profile> ProfileFromFlag(const proto::PublicKey& authority, const AdversaryClasses& classes);
// --challenger_key (secret key file, mode 0600) and either --delegation with --authority_pub (the
// delegation verified under that key and naming the challenger key) or, in a lab, --authority_key
// (the authority's secret key file). Errors: INVALID_ARGUMENT for a missing or doubled flag; the
// key and delegation files' errors (PERMISSION_DENIED for one that does not verify or names another
// challenger key).
StatusOr<SessionKeys> KeysFromFlags();
// OK when keys.delegation (if any) is in force at `now_unix_us` and lists `profile` as this process
// writes it into orders (or allows it unsigned); FAILED_PRECONDITION saying which, before any order.
Status CheckDelegationCovers(const SessionKeys& keys, const Profile& profile, int64_t now_unix_us);
// OK when keys.delegation names no inventory or names `inventory` (its digest); FAILED_PRECONDITION
// naming both digests otherwise: the challenger plans only from the inventory the authority signed.
Status CheckDelegatedInventory(const SessionKeys& keys, const Inventory& inventory);
// --ledger (required): opened for appending with the challenger key, with `inventory`'s text
// recorded once by digest (Ledger::RecordDocument) when a delegation can name it (every key inline).
StatusOr<std::unique_ptr<Ledger>> LedgerFromFlag(const proto::KeyPair& challenger_key, const Inventory& inventory);
// What a wipe needs before its first order, for `wipe` and `serve`: --inventory, the keys
// (KeysFromFlags), --classes and --profile (verified under the authority key; the delegation must
// cover the profile: CheckDelegationCovers, and name no other inventory: CheckDelegatedInventory), --threads and --connect_timeout_s. Errors: the first
// loader's, naming its flag.
struct WipeSetup {
  Inventory inventory;
  AdversaryClasses classes;
  Profile profile;
  TcpSessionOptions tcp;
  SessionKeys keys;
};
StatusOr<WipeSetup> WipeSetupFromFlags();

// The occupancy flags alone: ranges, and the other three only with --occupancy_window_s.
// Errors: INVALID_ARGUMENT naming the flag and its value.
Status CheckOccupancyFlags();
// The occupancy window --occupancy_window_s and its flags ask of `plan` (session_plan.h
// SetOccupancySchedule); no change without a window. Errors: CheckOccupancyFlags', and
// SetOccupancySchedule's naming the flags.
Status ApplyOccupancyFlags(SessionPlan* plan);
// One line on stderr when a wipe's profile cannot state a bound for lack of the authority's
// signature or class ("wipeproof-challenger <sub>: warning: verdicts state no bound: ..."); nothing
// otherwise. Uncalibrated profiles are not warned about (their verdicts say so).
void WarnIfNoBound(const char* subcommand, const Profile& profile);
// One line on stderr when `keys` hold the authority's secret key instead of a delegation (a lab:
// "wipeproof-challenger <sub>: warning: the authority's secret key is on this challenger ..."),
// nothing otherwise.
void WarnIfLabAuthorityKey(const char* subcommand, const SessionKeys& keys);
// One line on stderr when keys.delegation names no inventory, or, in a lab, when `inventory` cannot
// be named (a key by file): verdicts then state no bound and no assumption holds.
void WarnIfInventoryNotDelegated(const char* subcommand, const SessionKeys& keys, const Inventory& inventory);

// The most event loops --session_loops may ask for.
constexpr int kMaxSessionLoops = 4096;

// --threads (>= 0: expected-label threads per session), --connect_timeout_s (> 0), --round_channel
// and --session_loops ([0, kMaxSessionLoops]) as the options of sessions over TCP on the system clock.
StatusOr<TcpSessionOptions> TcpSessionOptionsFromFlags();

}  // namespace wipeproof
