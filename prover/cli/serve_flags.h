// The flags of `wipeproof-prover serve` (defined in cli_serve.cc) as `doctor` reads them too, so
// doctor checks exactly what serve would use, and the helpers that turn them into values.
// Thread-safety: read the gflags globals; call after flag parsing, from one thread.
#pragma once

#include <gflags/gflags.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "prover/backends/backend_factory.h"

DECLARE_string(listen);
DECLARE_string(authority_key);
DECLARE_string(challenger_key);
DECLARE_string(challenger_cert);
DECLARE_string(node_key);
DECLARE_string(node_name);
DECLARE_uint64(host_budget_bytes);
DECLARE_double(host_budget_gib);
DECLARE_uint64(host_reserve_bytes);
DECLARE_string(devices);
DECLARE_int64(clock_skew_us);
DECLARE_string(metrics_listen);

namespace wipeproof {

// The flags serve takes (its --help lists them; doctor takes the same plus --json).
const std::vector<std::string>& ServeFlagNames();
// ServeFlagNames() less --progress, plus --json.
std::vector<std::string> DoctorFlagNames();

// --devices into the enable_* switches of `config`. Errors: INVALID_ARGUMENT naming an unknown
// entry, or when none is named.
Status DevicesFromFlag(BackendConfig* config);

// The host budget in bytes from --host_budget_bytes or --host_budget_gib (0: no budget).
// Errors: INVALID_ARGUMENT when both are given or the GiB value is negative.
StatusOr<uint64_t> HostBudgetFromFlags();

// How the budget was given, for messages: "--host_budget_gib=2" or "--host_budget_bytes=0".
std::string HostBudgetFlagText();

// --listen and --metrics_listen (when given) are HOST:PORT with a port from 0 to 65535: a malformed
// address is a bad command line (exit 2) in serve and doctor alike. Errors: INVALID_ARGUMENT naming
// the flag. Whether the host resolves and the port is free is checked by binding (serve) or by
// doctor's rows.
Status CheckListenFlags();

}  // namespace wipeproof
