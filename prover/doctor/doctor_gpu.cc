#include "prover/doctor/doctor_gpu.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "common/subprocess.h"

namespace wipeproof {
namespace {

constexpr uint64_t kToolTimeoutUs = 10'000'000;

std::optional<std::string> Tool(const std::vector<std::string>& argv) {
  auto run = RunProcess(argv, kToolTimeoutUs);
  if (!run.ok() || run->exit_code != 0) return std::nullopt;
  return run->stdout_text;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::string Trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// " (ran /usr/bin/nvidia-smi)": the binaries whose answers a check used, by absolute path.
std::string Ran(const std::string& nvidia, bool nvidia_told, const std::string& rocm, bool rocm_told) {
  std::string ran;
  if (nvidia_told && !nvidia.empty()) ran = nvidia;
  if (rocm_told && !rocm.empty()) ran += (ran.empty() ? "" : ", ") + rocm;
  return ran.empty() ? "" : " (ran " + ran + ")";
}

std::string LookedFor(const GpuInventory& inv) {
  std::string s;
  if (inv.cuda_wanted) s += "CUDA";
  if (inv.hip_wanted) s += std::string(s.empty() ? "" : " and ") + "HIP (ROCm)";
  return s;
}

}  // namespace

std::string FindGpuTool(const std::string& name, const std::vector<std::string>& dirs, const std::string& path_env) {
  std::vector<std::string> folders = dirs;
  std::istringstream path(path_env);
  std::string folder;
  while (std::getline(path, folder, ':')) {
    if (!folder.empty() && folder[0] == '/') folders.push_back(folder);
  }
  for (const std::string& f : folders) {
    const std::string candidate = f + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

GpuToolAnswers ReadGpuToolAnswers(bool cuda_wanted, bool hip_wanted) {
  GpuToolAnswers a;
  const char* path = std::getenv("PATH");
  if (cuda_wanted) {
    a.nvidia_smi = FindGpuTool("nvidia-smi", kGpuToolDirs, path != nullptr ? path : "");
    if (!a.nvidia_smi.empty()) {
      a.nvidia_mig = Tool({a.nvidia_smi, "--query-gpu=uuid,mig.mode.current", "--format=csv,noheader"});
      a.nvidia_apps =
          Tool({a.nvidia_smi, "--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader,nounits"});
    }
  }
  if (hip_wanted) {
    a.rocm_smi = FindGpuTool("rocm-smi", kGpuToolDirs, path != nullptr ? path : "");
    if (!a.rocm_smi.empty()) {
      a.rocm_partition = Tool({a.rocm_smi, "--showcomputepartition", "--showmemorypartition"});
      a.rocm_pids = Tool({a.rocm_smi, "--showpids"});
    }
  }
  return a;
}

CheckResult CheckGpuDevices(const GpuInventory& inv, bool host_only, const std::string& devices_flag) {
  CheckResult r{"gpu devices", CheckStatus::kOk, "", ""};
  if (!inv.cuda_wanted && !inv.hip_wanted) {
    r.detail = "no GPU backend requested (--devices=" + devices_flag + ")";
    return r;
  }
  if (inv.devices.empty()) {
    std::string why;
    for (const std::string& d : inv.disabled) why += "; " + d;
    r.detail = "no GPU runtime/devices found (looked for " + LookedFor(inv) + ")" + why;
    if (host_only) {
      r.status = CheckStatus::kWarn;
      r.detail += "; a host-only node: only host memory will be wiped";
      r.fix = "nothing for a host-only node; on a GPU node install the driver and a build with CUDA or HIP";
    } else {
      r.status = CheckStatus::kFail;
      r.fix =
          "install the GPU driver and use a build with CUDA or HIP, or for a host-only node give --host_budget_gib and "
          "--devices=host";
    }
    return r;
  }
  for (const DeviceInfo& d : inv.devices) {
    r.detail += (r.detail.empty() ? "" : "; ") + d.name + " " + d.id + ": " + BytesForPeople(d.total_bytes) +
                ", free " + BytesForPeople(d.available_bytes);
  }
  r.detail = std::to_string(inv.devices.size()) + " GPU(s): " + r.detail;
  for (const std::string& d : inv.disabled) r.detail += "; " + d;
  return r;
}

CheckResult CheckPartitionMode(const GpuInventory& inv, const GpuToolAnswers& tools) {
  CheckResult r{"partition mode", CheckStatus::kOk, "", ""};
  std::vector<std::string> parts;
  bool partitioned = false, told = false;
  if (tools.nvidia_mig.has_value()) {
    told = true;
    for (const std::string& line : Lines(*tools.nvidia_mig)) {
      const size_t comma = line.find(',');
      const std::string uuid = Trim(line.substr(0, comma));
      const std::string mode = comma == std::string::npos ? "unknown" : Trim(line.substr(comma + 1));
      parts.push_back(uuid + " MIG " + (mode == "[N/A]" ? "not supported" : mode));
      partitioned |= mode == "Enabled";
    }
  }
  if (tools.rocm_partition.has_value()) {
    told = true;
    for (const std::string& line : Lines(*tools.rocm_partition)) {
      const std::string low = Lower(line);
      if (low.find("partition") == std::string::npos || low.find("====") != std::string::npos) continue;
      parts.push_back("rocm-smi: " + Trim(line));
      for (const char* mode : {"dpx", "tpx", "qpx", "cpx", "nps2", "nps4", "nps8"}) {
        partitioned |= low.find(mode) != std::string::npos;
      }
    }
  }
  if (!told) {
    if (inv.devices.empty()) {
      r.detail = "not applicable: no GPU devices found";
      return r;
    }
    r.status = CheckStatus::kWarn;
    r.detail =
        "cannot tell: the backends do not report MIG or partition mode, and neither nvidia-smi nor rocm-smi "
        "answered";
    r.fix = "install nvidia-smi (NVIDIA) or rocm-smi (AMD) so doctor can tell";
    return r;
  }
  for (const std::string& p : parts) r.detail += (r.detail.empty() ? "" : "; ") + p;
  if (r.detail.empty()) {
    r.detail = "the tools listed no GPU";
    if (!inv.devices.empty()) {
      // A stub tool, or one in a container that sees none of the devices: it told nothing.
      r.status = CheckStatus::kWarn;
      r.detail = "cannot tell: the backends found " + std::to_string(inv.devices.size()) +
                 " GPU(s) but nvidia-smi/rocm-smi listed none";
      r.fix = "run doctor where nvidia-smi or rocm-smi sees the node's GPUs";
    }
  }
  if (partitioned) {
    r.status = CheckStatus::kWarn;
    r.detail = "partitioned: only the instances this process sees are wiped, not whole GPUs; " + r.detail;
    r.fix =
        "to wipe whole GPUs turn partitioning off (`nvidia-smi -i N -mig 0` as root with the GPU idle; AMD: "
        "`amd-smi set --compute-partition SPX`)";
  }
  r.detail += Ran(tools.nvidia_smi, tools.nvidia_mig.has_value(), tools.rocm_smi, tools.rocm_partition.has_value());
  return r;
}

CheckResult CheckGpuProcesses(const GpuInventory& inv, const GpuToolAnswers& tools, int own_pid) {
  CheckResult r{"gpu processes", CheckStatus::kOk, "", ""};
  std::vector<std::string> holders;
  bool told = false;
  if (tools.nvidia_apps.has_value()) {
    told = true;
    for (const std::string& line : Lines(*tools.nvidia_apps)) {
      std::vector<std::string> f;
      std::istringstream in(line);
      std::string field;
      while (std::getline(in, field, ',')) f.push_back(Trim(field));
      if (f.size() < 3 || f[0] == std::to_string(own_pid)) continue;
      holders.push_back("pid " + f[0] + " (" + f[1] + ") holds " + f[2] + " MiB");
    }
  }
  if (tools.rocm_pids.has_value()) {
    told = true;
    for (const std::string& line : Lines(*tools.rocm_pids)) {
      const std::string t = Trim(line);
      if (t.empty() || !std::isdigit(static_cast<unsigned char>(t[0]))) continue;
      const std::string pid = t.substr(0, t.find_first_of(" \t"));
      if (pid == std::to_string(own_pid)) continue;
      holders.push_back("rocm-smi: " + t);
    }
  }
  if (!told) {
    if (inv.devices.empty()) {
      r.detail = "not applicable: no GPU devices found";
      return r;
    }
    uint64_t others = 0;
    for (const DeviceInfo& d : inv.devices) others += d.held_by_others_bytes;
    r.status = CheckStatus::kWarn;
    r.detail = "cannot tell without nvidia-smi/rocm-smi which process holds GPU memory; the runtime reports " +
               BytesForPeople(others) + " in use outside any fill (this check's own runtime context included)";
    r.fix = "install nvidia-smi (NVIDIA) or rocm-smi (AMD) so doctor can tell";
    return r;
  }
  const std::string ran =
      Ran(tools.nvidia_smi, tools.nvidia_apps.has_value(), tools.rocm_smi, tools.rocm_pids.has_value());
  if (holders.empty()) {
    r.detail =
        "no other process holds GPU memory (as far as nvidia-smi/rocm-smi see: a container sees only "
        "its own processes)" +
        ran;
    return r;
  }
  r.status = CheckStatus::kFail;
  for (const std::string& h : holders) r.detail += (r.detail.empty() ? "" : "; ") + h;
  r.detail = "other processes hold GPU memory, so a wipe cannot fill it: " + r.detail + ran;
  r.fix = "stop them (or drain the node) before the wipe";
  return r;
}

}  // namespace wipeproof
