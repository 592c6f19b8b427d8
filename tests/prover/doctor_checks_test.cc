// The checks of `wipeproof-prover doctor` (prover/doctor/) on injected facts: memory limits, clock
// state, key files written here, a port held here, GPU inventories and vendor-tool answers; and
// the table and JSON they are printed as.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/numbers.h"
#include "proto/key_files.h"
#include "proto/tls_certificate.h"
#include "prover/doctor/doctor_check.h"
#include "prover/doctor/doctor_clock.h"
#include "prover/doctor/doctor_gpu.h"
#include "prover/doctor/doctor_keys.h"
#include "prover/doctor/doctor_memory.h"
#include "prover/doctor/doctor_port.h"

namespace wipeproof {
namespace {


bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(DoctorReport, TableAndJsonSayWhetherAWipeCanRun) {
  const std::vector<CheckResult> results = {{"node key", CheckStatus::kFail, "mode 0644", "chmod 600 /k"},
                                            {"gpu devices", CheckStatus::kWarn, "none", ""},
                                            {"clock sync", CheckStatus::kOk, "synchronised", ""}};
  EXPECT_FALSE(WipeCanRun(results));
  EXPECT_TRUE(WipeCanRun({results[1], results[2]}));
  const std::string table = FormatDoctorTable(results);
  EXPECT_TRUE(Has(table, "CHECK        STATUS  DETAIL\n")) << table;
  EXPECT_TRUE(Has(table, "node key     FAIL    mode 0644\n")) << table;
  EXPECT_TRUE(Has(table, "fix: chmod 600 /k\n")) << table;
  EXPECT_TRUE(Has(table, "wipe can run: no (1 FAIL, 1 WARN)\n")) << table;
  const nlohmann::json json = DoctorJson(results);
  EXPECT_EQ(json["wipe_can_run"], false);
  ASSERT_EQ(json["checks"].size(), 3u);
  EXPECT_EQ(json["checks"][0]["status"], "FAIL");
  EXPECT_EQ(json["checks"][0]["fix"], "chmod 600 /k");
  EXPECT_EQ(json["checks"][1]["status"], "WARN");
}

// A detail or fix carrying terminal controls (a --node_name, a key path, a GPU tool's output) is printed
// escaped in the table; the JSON keeps the text (its encoder escapes it).
TEST(DoctorReport, TheTableEscapesTerminalControls) {
  const std::vector<CheckResult> results = {{"node name", CheckStatus::kOk, "n\x1b]0;x\x07", ""},
                                            {"node key", CheckStatus::kFail, "mode 0644", "chmod 600 /k\x1b[2J"}};
  const std::string table = FormatDoctorTable(results);
  EXPECT_FALSE(Has(table, "\x1b")) << table;
  EXPECT_TRUE(Has(table, "n\\u001b]0;x\\u0007\n")) << table;
  EXPECT_TRUE(Has(table, "fix: chmod 600 /k\\u001b[2J\n")) << table;
  EXPECT_EQ(DoctorJson(results)["checks"][0]["detail"], "n\x1b]0;x\x07");
}

HostBudgetFacts Machine(uint64_t physical, uint64_t available, uint64_t memlock_limit) {
  HostBudgetFacts facts;
  facts.physical_bytes = physical;
  facts.available_bytes = available;
  facts.memlock.unlimited = memlock_limit == 0;
  facts.memlock.limit_bytes = memlock_limit;
  return facts;
}

TEST(DoctorMemory, BudgetAndMlockLimitVerdicts) {
  // A 16 GiB machine with 8 GiB available and an 8 MiB lock limit: a 1 GiB budget cannot be locked.
  auto low_limit = CheckHostMemory(kGiB, 256 << 20, Machine(16 * kGiB, 8 * kGiB, 8 << 20), "--host_budget_gib=1");
  ASSERT_EQ(low_limit.size(), 2u);
  EXPECT_EQ(low_limit[0].status, CheckStatus::kOk) << low_limit[0].detail;
  EXPECT_TRUE(Has(low_limit[0].detail, "--host_budget_gib=1: 1.00 GiB (1073741824 bytes) (6% of physical)"))
      << low_limit[0].detail;
  EXPECT_EQ(low_limit[1].check, "mlock limit");
  EXPECT_EQ(low_limit[1].status, CheckStatus::kFail);
  EXPECT_TRUE(Has(low_limit[1].detail, "RLIMIT_MEMLOCK is 8.00 MiB (8388608 bytes)")) << low_limit[1].detail;
  EXPECT_TRUE(Has(low_limit[1].fix, "ulimit -l unlimited")) << low_limit[1].fix;
  EXPECT_TRUE(Has(low_limit[1].fix, "LimitMEMLOCK=infinity")) << low_limit[1].fix;

  auto above_physical = CheckHostMemory(32 * kGiB, 0, Machine(16 * kGiB, 8 * kGiB, 0), "--host_budget_gib=32");
  EXPECT_EQ(above_physical[0].status, CheckStatus::kFail);
  EXPECT_TRUE(Has(above_physical[0].detail, "more than this machine's physical memory")) << above_physical[0].detail;

  auto above_available = CheckHostMemory(12 * kGiB, 0, Machine(16 * kGiB, 8 * kGiB, 0), "--host_budget_gib=12");
  EXPECT_EQ(above_available[0].status, CheckStatus::kWarn);
  EXPECT_TRUE(Has(above_available[0].detail, "more than MemAvailable less the reserve (8.00 GiB (8589934592 bytes))"))
      << above_available[0].detail;
  EXPECT_EQ(above_available[1].status, CheckStatus::kOk);
  EXPECT_TRUE(Has(above_available[1].detail, "RLIMIT_MEMLOCK unlimited")) << above_available[1].detail;

  // No budget: MemAvailable less the reserve must be lockable.
  auto no_budget = CheckHostMemory(0, kGiB, Machine(16 * kGiB, 8 * kGiB, 4 * kGiB), "--host_budget_bytes=0");
  EXPECT_EQ(no_budget[0].status, CheckStatus::kOk);
  EXPECT_EQ(no_budget[1].status, CheckStatus::kFail);
  HostBudgetFacts capable = Machine(16 * kGiB, 8 * kGiB, 4 * kGiB);
  capable.memlock.cap_ipc_lock = true;
  EXPECT_EQ(CheckHostMemory(0, kGiB, capable, "--host_budget_bytes=0")[1].status, CheckStatus::kOk);
}

TEST(DoctorClock, SynchronisedUnsynchronisedAndUnknown) {
  ClockFacts synced;
  synced.ntp_synchronized = true;
  synced.kernel_known = true;
  synced.kernel_unsynchronized = false;
  synced.est_error_us = 1500;
  synced.max_error_us = 250000;
  CheckResult ok = CheckClock(synced, 300'000'000);
  EXPECT_EQ(ok.status, CheckStatus::kOk);
  EXPECT_TRUE(Has(ok.detail, "NTPSynchronized=yes")) << ok.detail;
  EXPECT_TRUE(Has(ok.detail, "estimated error 0.002 s, maximum error 0.250 s")) << ok.detail;

  ClockFacts drifting;  // no timedatectl; the kernel says unsynchronised, 16 s error bound
  drifting.kernel_known = true;
  drifting.kernel_unsynchronized = true;
  drifting.max_error_us = 16'000'000;
  EXPECT_EQ(CheckClock(drifting, 300'000'000).status, CheckStatus::kWarn);
  CheckResult fail = CheckClock(drifting, 1'000'000);
  EXPECT_EQ(fail.status, CheckStatus::kFail);
  EXPECT_TRUE(Has(fail.detail, "exceeds the tolerated skew")) << fail.detail;
  EXPECT_TRUE(Has(fail.fix, "timedatectl set-ntp true")) << fail.fix;

  ClockFacts unknown;
  unknown.kernel_known = false;
  CheckResult cannot = CheckClock(unknown, 300'000'000);
  EXPECT_EQ(cannot.status, CheckStatus::kWarn);
  EXPECT_TRUE(Has(cannot.detail, "cannot tell")) << cannot.detail;
}

class DoctorKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test: ctest runs this fixture's tests at the same time, in separate processes.
    dir_ = ::testing::TempDir() + "/doctor_keys_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + std::to_string(::getpid());
    std::system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str());
    node_ = proto::GenerateKeyFiles(dir_ + "/node").value();
    ASSERT_TRUE(proto::GenerateKeyFiles(dir_ + "/authority").ok());
    auto challenger = proto::GenerateKeyFiles(dir_ + "/challenger");
    ASSERT_TRUE(challenger.ok());
    challenger_ = proto::ReadSecretKeyFile(dir_ + "/challenger.key").value();
    ASSERT_TRUE(proto::WriteCertificateFile(dir_ + "/challenger.crt", challenger_).ok());
    paths_ = {dir_ + "/node.key", dir_ + "/authority.pub", dir_ + "/challenger.pub", dir_ + "/challenger.crt"};
  }
  std::string dir_;
  proto::GeneratedKeyFiles node_;
  proto::KeyPair challenger_;
  KeyFilePaths paths_;
};

TEST_F(DoctorKeys, GoodFilesPass) {
  auto results = CheckKeyFiles(paths_, geteuid());
  ASSERT_EQ(results.size(), 4u);
  for (const CheckResult& r : results) EXPECT_EQ(r.status, CheckStatus::kOk) << r.check << ": " << r.detail;
  EXPECT_TRUE(Has(results[0].detail, "secret key, mode 0600")) << results[0].detail;
  EXPECT_TRUE(Has(results[0].detail, "matches " + dir_ + "/node.pub")) << results[0].detail;
  // Someone else's key file: the agent's user may not read it.
  EXPECT_EQ(CheckKeyFiles(paths_, geteuid() + 1)[0].status, CheckStatus::kWarn);
}

TEST_F(DoctorKeys, ReadableKeyMismatchedPubWrongCertAndMissingFlagFail) {
  ASSERT_EQ(chmod(paths_.node_key.c_str(), 0644), 0);
  CheckResult readable = CheckKeyFiles(paths_, geteuid())[0];
  EXPECT_EQ(readable.status, CheckStatus::kFail);
  EXPECT_TRUE(Has(readable.detail, "mode 0644")) << readable.detail;
  EXPECT_EQ(readable.fix, "chmod 600 " + paths_.node_key);
  ASSERT_EQ(chmod(paths_.node_key.c_str(), 0600), 0);

  // node.pub replaced by another key's public half.
  ASSERT_EQ(std::system(("cp " + dir_ + "/authority.pub " + dir_ + "/node.pub").c_str()), 0);
  CheckResult mismatch = CheckKeyFiles(paths_, geteuid())[0];
  EXPECT_EQ(mismatch.status, CheckStatus::kFail);
  EXPECT_TRUE(Has(mismatch.detail, dir_ + "/node.pub holds another key")) << mismatch.detail;

  KeyFilePaths wrong = paths_;
  wrong.challenger_cert = dir_ + "/authority.crt";
  ASSERT_TRUE(
      proto::WriteCertificateFile(wrong.challenger_cert, proto::ReadSecretKeyFile(paths_.node_key).value()).ok());
  auto results = CheckKeyFiles(wrong, geteuid());
  EXPECT_EQ(results[3].status, CheckStatus::kFail);
  EXPECT_TRUE(Has(results[3].detail, "is not the expected key")) << results[3].detail;

  KeyFilePaths missing = paths_;
  missing.authority_key.clear();
  missing.node_key = dir_ + "/nope.key";
  results = CheckKeyFiles(missing, geteuid());
  EXPECT_EQ(results[0].status, CheckStatus::kFail);
  EXPECT_TRUE(Has(results[0].detail, "nope.key: cannot be read")) << results[0].detail;
  EXPECT_EQ(results[1].status, CheckStatus::kFail);
  EXPECT_EQ(results[1].detail, "not given (--authority_key)");
}

TEST(DoctorPort, HeldPortFailsNamingPortAndHolder) {
  const int holder = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(holder, 0);
  sockaddr_in bound{};
  bound.sin_family = AF_INET;
  bound.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof bound;
  ASSERT_EQ(bind(holder, reinterpret_cast<sockaddr*>(&bound), sizeof bound), 0);
  ASSERT_EQ(listen(holder, 1), 0);
  ASSERT_EQ(getsockname(holder, reinterpret_cast<sockaddr*>(&bound), &size), 0);
  const std::string port = std::to_string(ntohs(bound.sin_port));
  CheckResult taken = CheckListenAddress("listen port", "--listen", "127.0.0.1:" + port);
  close(holder);
  EXPECT_EQ(taken.status, CheckStatus::kFail);
  // Named by its whole program name, not comm's first 15 characters ("doctor_checks_t").
  EXPECT_TRUE(Has(taken.detail,
                  "port " + port + " is already in use by pid " + std::to_string(getpid()) + " (doctor_checks_test)"))
      << taken.detail;
  EXPECT_EQ(taken.fix, "stop the process holding port " + port + " or choose another --listen");

  EXPECT_EQ(CheckListenAddress("listen port", "--listen", "127.0.0.1:0").status, CheckStatus::kOk);
  // serve refuses these: so does doctor.
  EXPECT_EQ(CheckListenAddress("listen port", "--listen", "127.0.0.1:99999").status, CheckStatus::kFail);
  EXPECT_EQ(CheckListenAddress("listen port", "--listen", "::1:0").status, CheckStatus::kFail);
  CheckResult bad = CheckListenAddress("listen port", "--listen", "7300");
  EXPECT_EQ(bad.status, CheckStatus::kFail);
  EXPECT_TRUE(Has(bad.detail, "not HOST:PORT")) << bad.detail;
}

TEST(DoctorPort, ListeningInodeFromProcNetTcp) {
  const std::string text =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 0100007F:1C84 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 424242 1 0\n"
      "   1: 0100007F:1C85 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 515151 1 0\n";
  EXPECT_EQ(ListeningInode(text, 7300), std::optional<uint64_t>(424242));
  EXPECT_EQ(ListeningInode(text, 7301), std::nullopt);  // connected, not listening
  EXPECT_EQ(ListeningInode(text, 80), std::nullopt);
}

DeviceInfo Gpu(const std::string& id, uint64_t total) {
  DeviceInfo d;
  d.kind = DeviceKind::kCuda;
  d.id = id;
  d.name = "NVIDIA H200";
  d.total_bytes = total;
  d.available_bytes = total - kGiB;
  d.held_by_others_bytes = 3 * kGiB;
  return d;
}

TEST(DoctorGpu, DevicesFoundOrNot) {
  GpuInventory none;
  none.cuda_wanted = none.hip_wanted = true;
  none.disabled = {"cuda: disabled: built without CUDA", "hip: disabled: built without HIP"};
  CheckResult host_only = CheckGpuDevices(none, /*host_only=*/true, "host,cuda,hip");
  EXPECT_EQ(host_only.status, CheckStatus::kWarn);
  EXPECT_TRUE(Has(host_only.detail,
                  "no GPU runtime/devices found (looked for CUDA and HIP (ROCm)); cuda: disabled: "
                  "built without CUDA"))
      << host_only.detail;
  EXPECT_EQ(CheckGpuDevices(none, /*host_only=*/false, "host,cuda,hip").status, CheckStatus::kFail);
  EXPECT_EQ(CheckGpuDevices(GpuInventory{}, false, "host").status, CheckStatus::kOk);

  GpuInventory two;
  two.cuda_wanted = true;
  two.devices = {Gpu("GPU-a", 141 * kGiB), Gpu("GPU-b", 141 * kGiB)};
  CheckResult found = CheckGpuDevices(two, false, "cuda");
  EXPECT_EQ(found.status, CheckStatus::kOk);
  EXPECT_TRUE(Has(found.detail, "2 GPU(s): NVIDIA H200 GPU-a: 141.00 GiB (151397597184 bytes)")) << found.detail;
}

TEST(DoctorGpu, PartitionModeFromToolsOrSaysItCannotTell) {
  GpuInventory two;
  two.cuda_wanted = true;
  two.devices = {Gpu("GPU-a", 141 * kGiB), Gpu("GPU-b", 141 * kGiB)};
  GpuToolAnswers tools;
  tools.nvidia_mig = "GPU-a, Enabled\nGPU-b, Disabled\n";
  CheckResult mig = CheckPartitionMode(two, tools);
  EXPECT_EQ(mig.status, CheckStatus::kWarn);
  EXPECT_TRUE(Has(mig.detail, "GPU-a MIG Enabled; GPU-b MIG Disabled")) << mig.detail;
  tools.nvidia_mig = "GPU-a, Disabled\nGPU-b, [N/A]\n";
  CheckResult whole = CheckPartitionMode(two, tools);
  EXPECT_EQ(whole.status, CheckStatus::kOk);
  EXPECT_TRUE(Has(whole.detail, "GPU-b MIG not supported")) << whole.detail;
  CheckResult unknown = CheckPartitionMode(two, GpuToolAnswers{});
  EXPECT_EQ(unknown.status, CheckStatus::kWarn);
  EXPECT_TRUE(Has(unknown.detail, "cannot tell")) << unknown.detail;
  EXPECT_EQ(CheckPartitionMode(GpuInventory{}, GpuToolAnswers{}).status, CheckStatus::kOk);
  // A tool that answers but lists none of the GPUs the backends found (a stub, another container)
  // told nothing: WARN, never OK.
  GpuToolAnswers silent;
  silent.nvidia_mig = "";
  EXPECT_EQ(CheckPartitionMode(two, silent).status, CheckStatus::kWarn);
}

TEST(DoctorGpu, OtherProcessesOnTheGpus) {
  GpuInventory one;
  one.cuda_wanted = true;
  one.devices = {Gpu("GPU-a", 141 * kGiB)};
  GpuToolAnswers tools;
  tools.nvidia_apps = "4242, python3, 2048\n777, wipeproof-prover, 300\n";
  CheckResult busy = CheckGpuProcesses(one, tools, /*own_pid=*/777);
  EXPECT_EQ(busy.status, CheckStatus::kFail);
  EXPECT_TRUE(Has(busy.detail, "pid 4242 (python3) holds 2048 MiB")) << busy.detail;
  EXPECT_FALSE(Has(busy.detail, "777")) << busy.detail;
  tools.nvidia_apps = "777, wipeproof-prover, 300\n";
  EXPECT_EQ(CheckGpuProcesses(one, tools, 777).status, CheckStatus::kOk);
  CheckResult cannot = CheckGpuProcesses(one, GpuToolAnswers{}, 777);
  EXPECT_EQ(cannot.status, CheckStatus::kWarn);
  EXPECT_TRUE(Has(cannot.detail, "cannot tell without nvidia-smi/rocm-smi")) << cannot.detail;
  EXPECT_TRUE(Has(cannot.detail, "3.00 GiB (3221225472 bytes)")) << cannot.detail;
}

// The vendor tools come from the standard folders before PATH (a binary planted in PATH does not
// speak for nvidia-smi), and the checks name the binary they ran.
TEST(DoctorGpu, ToolsFromStandardFoldersFirstAndNamedByPath) {
  char dir[] = "/tmp/wp-doctor-tools-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string root = dir;
  for (const char* sub : {"/std", "/planted", "/plain"}) ASSERT_EQ(::mkdir((root + sub).c_str(), 0755), 0);
  auto tool = [](const std::string& path, mode_t mode) {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("#!/bin/sh\n", f);
    std::fclose(f);
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
  };
  tool(root + "/std/nvidia-smi", 0755);
  tool(root + "/planted/nvidia-smi", 0755);
  tool(root + "/planted/rocm-smi", 0755);
  tool(root + "/plain/rocm-smi", 0644);  // not executable
  const std::string path = "relative:" + root + "/planted";
  EXPECT_EQ(FindGpuTool("nvidia-smi", {root + "/std"}, path), root + "/std/nvidia-smi");
  EXPECT_EQ(FindGpuTool("rocm-smi", {root + "/plain", root + "/std"}, path), root + "/planted/rocm-smi");
  EXPECT_EQ(FindGpuTool("rocm-smi", {root + "/std"}, "relative"), "");
  std::system(("rm -rf " + root).c_str());

  GpuInventory one;
  one.cuda_wanted = true;
  one.devices = {Gpu("GPU-a", 141 * kGiB)};
  GpuToolAnswers tools;
  tools.nvidia_smi = "/usr/bin/nvidia-smi";
  tools.nvidia_mig = "GPU-a, Disabled\n";
  tools.nvidia_apps = "";
  EXPECT_TRUE(Has(CheckPartitionMode(one, tools).detail, "GPU-a MIG Disabled (ran /usr/bin/nvidia-smi)"));
  EXPECT_TRUE(Has(CheckGpuProcesses(one, tools, 1).detail, "(ran /usr/bin/nvidia-smi)"));
}

}  // namespace
}  // namespace wipeproof
