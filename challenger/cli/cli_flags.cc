#include "challenger/cli/cli_flags.h"

#include <cmath>

#include "common/clock.h"
#include "proto/key_files.h"

DEFINE_string(out, "",
              "keygen: path prefix; writes PREFIX-authority.{key,pub} and PREFIX-challenger.{key,pub}; "
              "calibrate: the parameter profile file to write");
DEFINE_bool(overwrite, false, "keygen: replace existing key files");
DEFINE_string(node, "", "wipe, calibrate: inventory name of the node (required)");
DEFINE_string(inventory, "", "inventory JSON file: nodes, waves, allowed reserves (required)");
DEFINE_string(authority_key, "", "authority secret key file (PREFIX-authority.key, mode 0600): signs orders");
DEFINE_string(challenger_key, "",
              "challenger secret key file (PREFIX-challenger.key, mode 0600): signs verdicts, receipts, ledger");
DEFINE_string(ledger, "",
              "ledger database file (SQLite); created if absent (required; calibrate: optional, records its "
              "probe sessions)");
DEFINE_string(profile, "", "parameter profile JSON file; default the built-in uncalibrated profile");
DEFINE_int32(threads, 0, "threads computing expected labels per session; 0 = all cores");
DEFINE_bool(json, false, "print each verdict as one JSON object on stdout (the summary goes to stderr)");
DEFINE_double(connect_timeout_s, 10, "seconds to wait for the TCP connection to an agent; default 10");
DEFINE_string(wave, "", "serve: run only this wave; default every wave of the inventory");
DEFINE_uint64(max_sessions, 0, "serve: stop after the wave run that brings the sessions to at least N; 0 = no limit");
DEFINE_bool(once, false, "serve: run every wave once, now, then exit");

namespace wipeproof {

StatusOr<Inventory> InventoryFromFlag() {
  if (FLAGS_inventory.empty()) return InvalidArgumentError("--inventory is required (inventory JSON file)");
  return LoadInventory(FLAGS_inventory);
}

StatusOr<Profile> ProfileFromFlag() {
  if (FLAGS_profile.empty()) return DefaultProfile();
  return LoadProfile(FLAGS_profile);
}

StatusOr<SessionKeys> KeysFromFlags() {
  if (FLAGS_authority_key.empty()) return InvalidArgumentError("--authority_key is required (secret key file)");
  if (FLAGS_challenger_key.empty()) return InvalidArgumentError("--challenger_key is required (secret key file)");
  SessionKeys keys;
  auto authority = proto::ReadSecretKeyFile(FLAGS_authority_key);
  if (!authority.ok()) return authority.status().WithContext("--authority_key");
  auto challenger = proto::ReadSecretKeyFile(FLAGS_challenger_key);
  if (!challenger.ok()) return challenger.status().WithContext("--challenger_key");
  keys.authority = *authority;
  keys.challenger = *challenger;
  return keys;
}

StatusOr<std::unique_ptr<Ledger>> LedgerFromFlag(const proto::KeyPair& challenger_key) {
  if (FLAGS_ledger.empty()) return InvalidArgumentError("--ledger is required (ledger database file)");
  auto ledger = Ledger::Open(FLAGS_ledger, challenger_key, SystemClock());
  if (!ledger.ok()) return ledger.status().WithContext("--ledger=" + FLAGS_ledger);
  return ledger;
}

StatusOr<TcpSessionOptions> TcpSessionOptionsFromFlags() {
  if (FLAGS_threads < 0) return InvalidArgumentError("--threads must be >= 0, got " + std::to_string(FLAGS_threads));
  if (!(FLAGS_connect_timeout_s > 0) || !std::isfinite(FLAGS_connect_timeout_s)) {
    return InvalidArgumentError("--connect_timeout_s must be > 0");
  }
  TcpSessionOptions options;
  options.clock = &SystemClock();
  options.threads = static_cast<int>(FLAGS_threads);
  options.connect_timeout_us = static_cast<uint64_t>(FLAGS_connect_timeout_s * 1e6);
  return options;
}

StatusOr<WipeSetup> WipeSetupFromFlags() {
  WipeSetup setup;
  WP_ASSIGN_OR_RETURN(setup.inventory, InventoryFromFlag());
  auto profile = ProfileFromFlag();
  if (!profile.ok()) return profile.status().WithContext("--profile");
  setup.profile = *std::move(profile);
  WP_ASSIGN_OR_RETURN(setup.tcp, TcpSessionOptionsFromFlags());
  WP_ASSIGN_OR_RETURN(setup.keys, KeysFromFlags());
  return setup;
}

}  // namespace wipeproof
