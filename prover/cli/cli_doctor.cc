// `wipeproof-prover doctor`: checks what this node needs before a wipe can run, with the same flags
// as `serve` (serve_flags.h), and prints a table (or JSON with --json) on stdout: GPU devices and
// their memory, MIG/partition mode, host budget against physical memory and MemAvailable, the
// mlock limit, clock synchronisation, the key files, the listen ports, other processes on the GPUs
// (prover/doctor/). Exit status: 0 when a wipe can run (WARNs allowed), 1 when any check FAILs,
// 2 for a bad command line (a malformed flag value such as --listen=bad included, as serve).
#include <gflags/gflags.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "prover/backends/backend_factory.h"
#include "prover/backends/cpu/host_budget.h"
#include "prover/cli/cli.h"
#include "prover/cli/cli_flags.h"
#include "prover/cli/serve_flags.h"
#include "prover/doctor/doctor_check.h"
#include "prover/doctor/doctor_clock.h"
#include "prover/doctor/doctor_gpu.h"
#include "prover/doctor/doctor_keys.h"
#include "prover/doctor/doctor_memory.h"
#include "prover/doctor/doctor_port.h"

DEFINE_bool(json, false, "doctor: print the checks as one JSON object instead of a table");

namespace wipeproof {
namespace {

constexpr char kSub[] = "doctor";

}  // namespace

std::vector<std::string> DoctorFlagNames() {
  std::vector<std::string> names;
  for (const std::string& n : ServeFlagNames()) names.push_back(n);  // --progress accepted, unused
  names.push_back("json");
  return names;
}

int RunDoctor() {
  // A malformed flag value is a bad command line (2), as serve says; the rows' FAIL (1) is kept for
  // what the node itself lacks.
  if (Status s = CheckListenFlags(); !s.ok()) return UsageError(kSub, s.message());
  BackendConfig backend_config;
  if (Status s = DevicesFromFlag(&backend_config); !s.ok()) return UsageError(kSub, s.message());
  auto budget = HostBudgetFromFlags();
  if (!budget.ok()) return UsageError(kSub, budget.status().message());
  if (FLAGS_clock_skew_us < 0) return UsageError(kSub, "--clock_skew_us must be >= 0");
  auto simd = SimdFromFlag();
  if (!simd.ok()) return UsageError(kSub, simd.status().message());

  std::vector<CheckResult> results;
  // Devices, as serve finds them.
  backend_config.host.min_reserve_bytes = FLAGS_host_reserve_bytes;
  backend_config.host.simd = *simd;
  GpuInventory gpus;
  gpus.cuda_wanted = backend_config.enable_cuda;
  gpus.hip_wanted = backend_config.enable_hip;
  bool host_device = false;
  {
    BackendSet backends = CreateBackends(backend_config);
    for (const DeviceInfo& d : backends.Devices()) {
      if (d.kind == DeviceKind::kHost) {
        host_device = true;
      } else {
        gpus.devices.push_back(d);
      }
    }
    gpus.disabled = backends.disabled;
  }
  const bool host_only = host_device && *budget > 0;
  results.push_back(CheckGpuDevices(gpus, host_only, FLAGS_devices));
  const GpuToolAnswers tools = ReadGpuToolAnswers(gpus.cuda_wanted, gpus.hip_wanted);
  results.push_back(CheckPartitionMode(gpus, tools));
  results.push_back(CheckGpuProcesses(gpus, tools, static_cast<int>(getpid())));
  if (host_device) {
    for (CheckResult& r :
         CheckHostMemory(*budget, FLAGS_host_reserve_bytes, ReadHostBudgetFacts(), HostBudgetFlagText())) {
      results.push_back(std::move(r));
    }
  } else if (backend_config.enable_host) {
    results.push_back({"host memory", CheckStatus::kFail, "the host backend did not start", "see --devices"});
  }
  results.push_back(CheckClock(ReadClockFacts(), FLAGS_clock_skew_us));
  for (CheckResult& r :
       CheckKeyFiles({FLAGS_node_key, FLAGS_authority_key, FLAGS_challenger_key, FLAGS_challenger_cert}, geteuid())) {
    results.push_back(std::move(r));
  }
  if (FLAGS_node_name.empty()) {
    results.push_back({"node name", CheckStatus::kFail, "not given (--node_name)",
                       "give --node_name as the challenger's inventory names this node"});
  } else {
    results.push_back({"node name", CheckStatus::kOk, FLAGS_node_name, ""});
  }
  results.push_back(CheckListenAddress("listen port", "--listen", FLAGS_listen));
  if (!FLAGS_metrics_listen.empty()) {
    results.push_back(CheckListenAddress("metrics port", "--metrics_listen", FLAGS_metrics_listen));
    // Both free now, but serve cannot bind both to one port.
    const std::string port = FLAGS_listen.substr(FLAGS_listen.rfind(':') + 1);
    if (port != "0" && port == FLAGS_metrics_listen.substr(FLAGS_metrics_listen.rfind(':') + 1)) {
      results.push_back({"metrics port", CheckStatus::kFail,
                         "--listen and --metrics_listen both use port " + port + ": serve cannot bind both",
                         "give --metrics_listen another port (e.g. 9401)"});
    }
  }

  if (FLAGS_json) {
    std::printf("%s\n", DoctorJson(results).dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("%s", FormatDoctorTable(results).c_str());
  }
  std::fflush(stdout);
  return WipeCanRun(results) ? kExitOk : kExitFailed;
}

const CliSubcommand& DoctorSubcommand() {
  static const CliSubcommand kSubcommand = {"doctor",
   "check what this node needs before a wipe can run (table, or JSON with --json)",
   "Takes the same flags as serve and checks what serve would use: GPU devices and their memory\n"
   "(and the runtimes looked for), MIG or partition mode (nvidia-smi / rocm-smi), other processes\n"
   "holding GPU memory, the host budget against physical memory and MemAvailable, RLIMIT_MEMLOCK\n"
   "(the check serve makes at start-up), clock synchronisation (timedatectl, adjtimex), the key\n"
   "files and their modes, and whether --listen (and --metrics_listen) can be bound. Prints one row\n"
   "per check, OK, WARN or FAIL, with a fix for each FAIL; --json prints {\"wipe_can_run\", \"checks\"}.\n"
   "Exit status: 0 when a wipe can run (WARNs allowed), 1 when any check FAILs, 2 for a bad command line.",
   DoctorFlagNames(),
   &RunDoctor,
   {{"node_key", "this node's secret key file (PREFIX.key, mode 0600), as serve would use it"},
    {"progress", "serve's fill progress (serve --help); accepted so doctor takes serve's flags as they are"}},
   "serve"};
  return kSubcommand;
}

}  // namespace wipeproof
