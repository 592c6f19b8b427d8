// Doctor checks of the GPUs: devices found by the runtimes this build has (through the backend
// factory, as `serve` finds them) and their memory; MIG (NVIDIA) or compute partition (AMD) mode;
// other processes holding GPU memory. The backends do not report partition modes or per-process
// use, so those come from `nvidia-smi` / `rocm-smi`: looked for first in the standard folders
// (kGpuToolDirs), only then in PATH (a binary planted early in PATH must not speak for the vendor's
// tool), and the checks name the absolute path they ran; without them the check says it cannot
// tell, never guesses.
// Thread-safety: pure functions (ReadGpuToolAnswers runs the tools).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "prover/backends/backend.h"
#include "prover/doctor/doctor_check.h"

namespace wipeproof {

// What `serve` would find: the GPU devices of the enabled backends, and why others are off.
struct GpuInventory {
  bool cuda_wanted = false;           // --devices names cuda
  bool hip_wanted = false;            // --devices names hip
  std::vector<DeviceInfo> devices;    // GPU devices only (kind kCuda or kHip)
  std::vector<std::string> disabled;  // "cuda: disabled: <reason>" from the factory
};

// Where the vendor tools are looked for before PATH, in this order.
inline const std::vector<std::string> kGpuToolDirs = {"/usr/bin", "/usr/local/bin", "/opt/rocm/bin", "/usr/sbin",
                                                      "/bin"};

// The absolute path of the executable `name` in the first of `dirs`, else in the first folder of
// `path_env` (a PATH value, ':'-separated; relative folders are skipped) that has it; "" when none.
std::string FindGpuTool(const std::string& name, const std::vector<std::string>& dirs, const std::string& path_env);

// stdout of the vendor tools (empty optional: the tool was not found or failed).
struct GpuToolAnswers {
  // The absolute paths of the tools run ("" when not found): named in the checks' details.
  std::string nvidia_smi;
  std::string rocm_smi;
  // nvidia-smi --query-gpu=uuid,mig.mode.current --format=csv,noheader: "GPU-..., Disabled" rows.
  std::optional<std::string> nvidia_mig;
  // nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits.
  std::optional<std::string> nvidia_apps;
  // rocm-smi --showcomputepartition --showmemorypartition.
  std::optional<std::string> rocm_partition;
  // rocm-smi --showpids.
  std::optional<std::string> rocm_pids;
};

// Runs only the tools of the vendors wanted (`cuda_wanted`: nvidia-smi, `hip_wanted`: rocm-smi).
GpuToolAnswers ReadGpuToolAnswers(bool cuda_wanted, bool hip_wanted);

// "gpu devices": OK listing each device (model, id, memory in GiB and bytes); when none is found,
// WARN on a host-only node (`host_only` : a host budget is given and host is enabled), FAIL
// otherwise, naming the runtimes looked for and why each is off. OK "not requested" when --devices
// names no GPU backend.
CheckResult CheckGpuDevices(const GpuInventory& inventory, bool host_only, const std::string& devices_flag);

// "partition mode": from nvidia-smi / rocm-smi; WARN when MIG or a non-SPX partition is on (only
// the instances this process sees are wiped), WARN when GPUs are present but no tool can tell.
CheckResult CheckPartitionMode(const GpuInventory& inventory, const GpuToolAnswers& tools);

// "gpu processes": FAIL when another process (not `own_pid`) holds GPU memory (a wipe must fill it
// all), naming pid, program and MiB; WARN when GPUs are present but no tool can tell.
CheckResult CheckGpuProcesses(const GpuInventory& inventory, const GpuToolAnswers& tools, int own_pid);

}  // namespace wipeproof
