// The flags of wipeproof-challenger (gflags, process-global; each subcommand lists the ones it
// takes in cli.h and main.cc rejects the others), and the loaders that turn them into inventory,
// profile, keys and ledger with errors naming the flag.
#pragma once

#include <gflags/gflags.h>

#include <memory>
#include <string>

#include "challenger/fleet/inventory.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/ledger/ledger.h"
#include "challenger/parameters/parameter_profile.h"
#include "challenger/session/session_runner.h"
#include "common/status.h"

DECLARE_string(out);
DECLARE_bool(overwrite);
DECLARE_string(node);
DECLARE_string(inventory);
DECLARE_string(authority_key);
DECLARE_string(challenger_key);
DECLARE_string(ledger);
DECLARE_string(profile);
DECLARE_int32(threads);
DECLARE_bool(json);
DECLARE_double(connect_timeout_s);
DECLARE_string(wave);
DECLARE_uint64(max_sessions);
DECLARE_bool(once);

namespace wipeproof {

// --inventory (required). Errors: INVALID_ARGUMENT naming the flag when unset; LoadInventory's.
StatusOr<Inventory> InventoryFromFlag();
// --profile, or the built-in DefaultProfile() when empty.
StatusOr<Profile> ProfileFromFlag();
// --authority_key and --challenger_key (secret key files, mode 0600).
StatusOr<SessionKeys> KeysFromFlags();
// --ledger (required): opened for appending with the challenger key, checked for room.
StatusOr<std::unique_ptr<Ledger>> LedgerFromFlag(const proto::KeyPair& challenger_key);
// What a wipe needs before its first order, for `wipe` and `serve`: --inventory, --profile,
// --threads and --connect_timeout_s, --authority_key and --challenger_key. Errors: the first
// loader's, naming its flag.
struct WipeSetup {
  Inventory inventory;
  Profile profile;
  TcpSessionOptions tcp;
  SessionKeys keys;
};
StatusOr<WipeSetup> WipeSetupFromFlags();

// --threads (>= 0: expected-label threads per session) and --connect_timeout_s (> 0) as the
// options of sessions over TCP on the system clock.
StatusOr<TcpSessionOptions> TcpSessionOptionsFromFlags();

}  // namespace wipeproof
