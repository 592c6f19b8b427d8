// The label kernels and the runtime wrapper around them, in CUDA spelling. nvcc compiles this file
// for the CUDA runtime; label_kernels.hip includes it so clang compiles the same text as HIP, with
// gpu_compat.h mapping the runtime names. The kernels are thin: the per-team logic is
// team_executor.h, shared with the CPU emulation the tests run.
//
// Every runtime call goes through WP_GPU_RETURN_IF_ERROR, which turns a failure into a Status
// naming the call, file:line, the runtime and its error string; nothing here exits or throws. A
// device fault (gpu_compat.h GpuErrorIsDeviceLost) is recorded once for the process, since the
// runtime's context is then unusable in it, and every later call returns DeviceLostError.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/gpu/gpu_compat.h"
#include "kernels/gpu/gpu_runtime.h"
#include "kernels/gpu/team_executor.h"

namespace wipeproof {
namespace gpu {
namespace {

// Fill teams are at most this many threads.
constexpr uint32_t kMaxTeamThreads = 256;
constexpr uint32_t kLookupThreads = 128;

const char* BaseName(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// The first device fault of this process. Sticky errors belong to the process's context, not to
// one RuntimeImpl (the backend and the host filler each make one), so one record serves all.
class LostRecord {
 public:
  Status Get() const {
    if (!lost_.load(std::memory_order_acquire)) return Status::Ok();
    std::lock_guard<std::mutex> lock(mu_);
    return DeviceLostError(detail_);
  }
  Status Record(const std::string& detail) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!lost_.load(std::memory_order_relaxed)) {
      detail_ = detail;
      lost_.store(true, std::memory_order_release);
    }
    return DeviceLostError(detail_);
  }

 private:
  mutable std::mutex mu_;
  std::atomic<bool> lost_{false};
  std::string detail_;
};

LostRecord& Lost() {
  static LostRecord* record = new LostRecord();  // never destroyed: used until the process exits
  return *record;
}

Status RuntimeError(cudaError_t e, const char* expr, const char* file, int line) {
  const std::string what = std::string(kRuntimeName) + " error " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                           ") in " + expr + " at " + BaseName(file) + ":" + std::to_string(line);
  if (GpuErrorIsDeviceLost(e)) return Lost().Record(what);
  StatusCode code = StatusCode::kInternal;
  if (e == cudaErrorMemoryAllocation) code = StatusCode::kResourceExhausted;
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) code = StatusCode::kUnavailable;
  return Status(code, what);
}

}  // namespace
}  // namespace gpu
}  // namespace wipeproof

// The one GPU error macro: records the expression, file:line and the runtime's error string and
// returns a Status from the enclosing function.
#define WP_GPU_RETURN_IF_ERROR(expr)                                                         \
  do {                                                                                       \
    const cudaError_t wp_gpu_error_ = (expr);                                                \
    if (wp_gpu_error_ != cudaSuccess) {                                                      \
      (void)cudaGetLastError(); /* clear a non-sticky error so later calls are not blamed */ \
      return ::wipeproof::gpu::RuntimeError(wp_gpu_error_, #expr, __FILE__, __LINE__);       \
    }                                                                                        \
  } while (0)

namespace wipeproof {
namespace gpu {
namespace {

// ---------------------------------------------------------------------------------------------
// Kernels.

// Adds the device-wide timer's reading now (DeviceWideTimer ticks) to a launch's team timer words:
// to their sum, their extremes and their count, whose kTeamTimer* indices say whether this is a
// team's start or its end.
__device__ void RecordTeamTime(uint64_t* words, int sum, int first_not, int last, int count) {
  auto* w = reinterpret_cast<unsigned long long*>(words);
  const unsigned long long t = DeviceWideTimer();
  atomicAdd(w + sum, t);
  atomicMax(w + first_not, ~t);
  atomicMax(w + last, t);
  atomicAdd(w + count, 1ull);
}

// One team per block: derive the chunks' material, then the program one super-step at a time,
// a block barrier after each (team_executor.h explains why that is the only synchronisation).
// The launch bound caps registers so that kFillMinBlocks blocks of kMaxTeamThreads fit
// (c1: 64 registers, 1024 threads per SM; one register more would cost two teams of 64 per SM).
// Block 0's thread 0 records the SM clock counter at its start and end (clock64): with the
// launch's wall time that gives the clock the fill really ran at.
template <int kFormat>
__global__ void __launch_bounds__(kMaxTeamThreads, kFillMinBlocks[kFormat]) FillKernel(const FillWaveArgs a) {
  extern __shared__ uint4 shared_raw[];  // 16-byte aligned
  uint32_t* shared = reinterpret_cast<uint32_t*>(shared_raw);
  if (blockIdx.x >= a.team_count) return;  // uniform across the block
  const Team team = MakeTeam(a, blockIdx.x, shared, threadIdx.x);
  const bool clock_probe = a.clock_out != nullptr && blockIdx.x == 0 && threadIdx.x == 0;
  if (clock_probe) a.clock_out[0] = clock64();
  if (a.team_timer != nullptr && threadIdx.x == 0) {
    RecordTeamTime(a.team_timer, kTeamTimerStartSum, kTeamTimerFirstStartNot, kTeamTimerLastStart, kTeamTimerStarted);
  }
  TeamPrologue(a, blockIdx.x, team, threadIdx.x, blockDim.x);
  __syncthreads();
  for (uint32_t s = 0; s < team.steps; ++s) {
    TeamRunStep<kFormat>(a, team, s, threadIdx.x, blockDim.x);
    __syncthreads();
  }
  if (clock_probe) a.clock_out[1] = clock64();
  if (a.team_timer != nullptr && threadIdx.x == 0) {
    RecordTeamTime(a.team_timer, kTeamTimerEndSum, kTeamTimerFirstEndNot, kTeamTimerLastEnd, kTeamTimerEnded);
  }
}

__global__ void BuildCv0Kernel(const Cv0BuildArgs a) {
  const uint64_t stride = static_cast<uint64_t>(gridDim.x) * blockDim.x;
  for (uint64_t n = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; n < a.nodes; n += stride) {
    Cv0Entry(a, n);
  }
}

__global__ void LookupKernel(const LookupArgs a) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < a.n) LookupOne(a, k);
}

__global__ void LookupWordKernel(const LookupArgs a) {
  const uint64_t t = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < static_cast<uint64_t>(a.n) * 8) LookupWord(a, t);
}

// The raw compression rate of the fill's own node hash: a dependent chain of c1 node hashes per
// thread, each reading the previous label as its predecessor, like a narrow layer does. Thread 0
// of each block records its SM clock counter at start and end.
__global__ void __launch_bounds__(kMaxTeamThreads)
    CompressChainKernel(uint32_t iterations, uint32_t* sink, unsigned long long* clocks) {
  const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned long long start = clock64();
  uint32_t key[16];
  for (int i = 0; i < 16; ++i) key[i] = tid * 0x9E3779B9u + i;
  FillWaveArgs unused;
  uint32_t block[16];
  for (int i = 0; i < 8; ++i) block[i] = tid ^ i, block[8 + i] = ~tid + i;
  for (uint32_t it = 0; it < iterations; ++it) {
    uint32_t out[8];
    HashNode<kFormatC1>(unused, key, it, false, block, out);
    for (int i = 0; i < 8; ++i) block[8 + i] = block[i], block[i] = out[i];
  }
  uint32_t x = 0;
  for (int i = 0; i < 8; ++i) x ^= block[i];
  sink[tid] = x;
  if (threadIdx.x == 0) {
    clocks[2 * blockIdx.x] = start;
    clocks[2 * blockIdx.x + 1] = clock64();
  }
}

// ---------------------------------------------------------------------------------------------
// The runtime.

class RuntimeImpl final : public GpuRuntime {
 public:
  const char* name() const override { return kRuntimeName; }

  Status Health() const override { return Lost().Get(); }

  Status DeviceCount(int* count) override {
    *count = 0;
    WP_RETURN_IF_ERROR(Health());
    const cudaError_t e = cudaGetDeviceCount(count);
    if (e == cudaErrorNoDevice) {
      (void)cudaGetLastError();
      *count = 0;
      return Status::Ok();
    }
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return RuntimeError(e, "cudaGetDeviceCount(count)", __FILE__, __LINE__);
    }
    return Status::Ok();
  }

  Status Properties(int ordinal, GpuDeviceProps* props) override {
    WP_RETURN_IF_ERROR(Health());
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    cudaDeviceProp prop;
    WP_GPU_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, ordinal));
    size_t free_bytes = 0, total_bytes = 0;
    WP_GPU_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
    int optin = 0;
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal) != cudaSuccess) {
      (void)cudaGetLastError();
      optin = 0;
    }
    int time_limited = 0;
    if (cudaDeviceGetAttribute(&time_limited, cudaDevAttrKernelExecTimeout, ordinal) != cudaSuccess) {
      (void)cudaGetLastError();
      time_limited = 0;
    }
    char bus[32] = {0};
    WP_GPU_RETURN_IF_ERROR(cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal));
    props->ordinal = ordinal;
    props->name = prop.name;
    props->id = GpuStableId(ordinal, prop);
    props->pci_bus_id = bus;
    props->arch = GpuArchName(prop);
    props->total_bytes = total_bytes;
    props->free_bytes = free_bytes;
    props->multiprocessors = prop.multiProcessorCount;
    props->warp_size = prop.warpSize;
    props->max_threads_per_block = prop.maxThreadsPerBlock;
    props->max_threads_per_multiprocessor = prop.maxThreadsPerMultiProcessor;
    props->shared_bytes_per_block = optin > 0 ? static_cast<uint64_t>(optin) : prop.sharedMemPerBlock;
    props->l2_bytes = prop.l2CacheSize > 0 ? static_cast<uint64_t>(prop.l2CacheSize) : 0;
    props->kernel_time_limited = time_limited != 0;
    return Status::Ok();
  }

  Status MemoryInfo(int ordinal, uint64_t* free_bytes, uint64_t* total_bytes) override {
    WP_RETURN_IF_ERROR(Health());
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    size_t f = 0, t = 0;
    WP_GPU_RETURN_IF_ERROR(cudaMemGetInfo(&f, &t));
    *free_bytes = f;
    *total_bytes = t;
    return Status::Ok();
  }

  Status Allocate(int ordinal, uint64_t bytes, void** ptr) override {
    WP_RETURN_IF_ERROR(Health());
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    *ptr = nullptr;
    WP_GPU_RETURN_IF_ERROR(cudaMalloc(ptr, bytes));  // plain device memory, never managed
    return Status::Ok();
  }

  void Free(int ordinal, void* ptr) override {
    if (ptr == nullptr) return;
    (void)cudaSetDevice(ordinal);
    (void)cudaFree(ptr);
    (void)cudaGetLastError();
  }

  Status QueryMemory(int ordinal, const void* ptr, MemoryKind* kind) override {
    WP_RETURN_IF_ERROR(Health());
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    *kind = MemoryKind();
    cudaPointerAttributes attributes;
    WP_GPU_RETURN_IF_ERROR(cudaPointerGetAttributes(&attributes, ptr));
    kind->managed = attributes.type == cudaMemoryTypeManaged;
    kind->device = attributes.type == cudaMemoryTypeDevice && attributes.device == ordinal;
    kind->detail = std::string("pointer type ") + MemoryTypeName(attributes.type) + " on device " +
                   std::to_string(attributes.device);
    const CompressionQuery q = QueryCompression(ptr);
    kind->compression_checked = q.checked;
    kind->compressible = q.compressible;
    kind->detail += "; " + q.detail;
    return Status::Ok();
  }

  Status AllocateMappedHost(int ordinal, uint64_t bytes, void** host, void** device) override {
    WP_RETURN_IF_ERROR(Health());
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    *host = *device = nullptr;
    WP_GPU_RETURN_IF_ERROR(cudaHostAlloc(host, bytes, cudaHostAllocMapped));
    const cudaError_t e = cudaHostGetDevicePointer(device, *host, 0);
    if (e != cudaSuccess) {
      (void)cudaFreeHost(*host);
      *host = nullptr;
      (void)cudaGetLastError();
      return RuntimeError(e, "cudaHostGetDevicePointer(device, *host, 0)", __FILE__, __LINE__);
    }
    return Status::Ok();
  }

  void FreeMappedHost(int ordinal, void* host) override {
    if (host == nullptr) return;
    (void)cudaSetDevice(ordinal);
    (void)cudaFreeHost(host);
    (void)cudaGetLastError();
  }

  Status RegisterHost(int ordinal, void* host, uint64_t bytes, void** device) override {
    WP_RETURN_IF_ERROR(Health());
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    *device = nullptr;
    WP_GPU_RETURN_IF_ERROR(cudaHostRegister(host, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable));
    const cudaError_t e = cudaHostGetDevicePointer(device, host, 0);
    if (e != cudaSuccess) {
      (void)cudaHostUnregister(host);
      (void)cudaGetLastError();
      return RuntimeError(e, "cudaHostGetDevicePointer(device, host, 0)", __FILE__, __LINE__);
    }
    return Status::Ok();
  }

  void UnregisterHost(int ordinal, void* host) override {
    if (host == nullptr) return;
    (void)cudaSetDevice(ordinal);
    (void)cudaHostUnregister(host);
    (void)cudaGetLastError();
  }

  Status CopyToDevice(int ordinal, void* dst, const void* src, uint64_t bytes) override {
    WP_RETURN_IF_ERROR(Health());
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    WP_GPU_RETURN_IF_ERROR(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    return Status::Ok();
  }

  Status CopyToHost(int ordinal, void* dst, const void* src, uint64_t bytes) override {
    WP_RETURN_IF_ERROR(Health());
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    WP_GPU_RETURN_IF_ERROR(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return Status::Ok();
  }

  Status FillTeamsPerMultiprocessor(int ordinal, uint32_t format, uint32_t threads_per_team, uint64_t shared_bytes,
                                    int* teams) override {
    WP_RETURN_IF_ERROR(Health());
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    *teams = 0;
    if (format == kFormatC1) {
      WP_GPU_RETURN_IF_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          teams, FillKernel<kFormatC1>, static_cast<int>(threads_per_team), shared_bytes));
    } else {
      WP_GPU_RETURN_IF_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          teams, FillKernel<kFormat192>, static_cast<int>(threads_per_team), shared_bytes));
    }
    return Status::Ok();
  }

  Status RunFill(int ordinal, const FillLaunch& launch) override {
    const FillWaveArgs& a = launch.args;
    if (launch.threads_per_team == 0 || launch.threads_per_team > kMaxTeamThreads || a.team_count == 0 ||
        a.max_team_chunks == 0 || a.max_team_chunks > kMaxTeamChunks) {
      return InvalidArgumentError("fill launch needs 1.." + std::to_string(kMaxTeamThreads) +
                                  " threads per team, at least one team and 1.." + std::to_string(kMaxTeamChunks) +
                                  " chunks per team");
    }
    WP_RETURN_IF_ERROR(Health());
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    // A launch runs for seconds: the host thread sleeps on a blocking-sync event instead of spinning
    // a core in cudaDeviceSynchronize (one busy core per GPU otherwise).
    cudaEvent_t done = nullptr;
    WP_GPU_RETURN_IF_ERROR(cudaEventCreateWithFlags(&done, cudaEventBlockingSync | cudaEventDisableTiming));
    Status st = [&]() -> Status {
      const uint64_t shared = FillSharedBytes(a.max_team_chunks);  // <= 16 KiB: no opt-in needed
      if (a.session.format == kFormatC1) {
        FillKernel<kFormatC1><<<a.team_count, launch.threads_per_team, shared>>>(a);
      } else {
        FillKernel<kFormat192><<<a.team_count, launch.threads_per_team, shared>>>(a);
      }
      WP_GPU_RETURN_IF_ERROR(cudaGetLastError());
      WP_GPU_RETURN_IF_ERROR(cudaEventRecord(done));
      WP_GPU_RETURN_IF_ERROR(cudaEventSynchronize(done));
      WP_GPU_RETURN_IF_ERROR(cudaGetLastError());
      return Status::Ok();
    }();
    (void)cudaEventDestroy(done);
    return st;
  }

  Status RunBuildCv0(int ordinal, const Cv0BuildArgs& args) override {
    if (args.nodes == 0) return Status::Ok();
    WP_RETURN_IF_ERROR(Health());
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    const uint64_t blocks = (args.nodes + 255) / 256;
    BuildCv0Kernel<<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), 256>>>(args);
    WP_GPU_RETURN_IF_ERROR(cudaGetLastError());
    WP_GPU_RETURN_IF_ERROR(cudaDeviceSynchronize());
    return Status::Ok();
  }

  // A lookup queue: a non-blocking stream of its own (so lookups of several regions, or of a region
  // while another device's work runs, do not wait for each other) and the event recorded after each
  // lookup; WaitLookup waits for that event (spinning: a lookup takes microseconds, a sleeping wait
  // would add the wake-up to every round).
  struct LookupQueue {
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
    bool launched = false;
  };

  Status CreateLookupQueue(int ordinal, void** queue) override {
    *queue = nullptr;
    WP_RETURN_IF_ERROR(Health());
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    auto q = std::make_unique<LookupQueue>();
    WP_GPU_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&q->stream, cudaStreamNonBlocking));
    const cudaError_t e = cudaEventCreateWithFlags(&q->done, cudaEventDisableTiming);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      (void)cudaStreamDestroy(q->stream);
      return RuntimeError(e, "cudaEventCreateWithFlags(&q->done, cudaEventDisableTiming)", __FILE__, __LINE__);
    }
    *queue = q.release();
    return Status::Ok();
  }

  void DestroyLookupQueue(int ordinal, void* queue) override {
    auto* q = static_cast<LookupQueue*>(queue);
    if (q == nullptr) return;
    if (cudaSetDevice(ordinal) == cudaSuccess) {
      if (q->launched) (void)cudaEventSynchronize(q->done);
      (void)cudaEventDestroy(q->done);
      (void)cudaStreamDestroy(q->stream);
    }
    (void)cudaGetLastError();
    delete q;
  }

  Status LaunchLookup(int ordinal, const LookupArgs& args, void* queue) override {
    auto* q = static_cast<LookupQueue*>(queue);
    if (args.n == 0) return Status::Ok();
    WP_RETURN_IF_ERROR(CheckLookupShape(args));
    WP_RETURN_IF_ERROR(Health());
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    const uint64_t items = static_cast<uint64_t>(args.n) * args.threads_per_label;
    const auto blocks = static_cast<unsigned>((items + kLookupThreads - 1) / kLookupThreads);
    if (args.threads_per_label == 8) {
      LookupWordKernel<<<blocks, kLookupThreads, 0, q->stream>>>(args);
    } else {
      LookupKernel<<<blocks, kLookupThreads, 0, q->stream>>>(args);
    }
    WP_GPU_RETURN_IF_ERROR(cudaGetLastError());
    WP_GPU_RETURN_IF_ERROR(cudaEventRecord(q->done, q->stream));
    q->launched = true;
    return Status::Ok();
  }

  Status WaitLookup(int ordinal, void* queue) override {
    auto* q = static_cast<LookupQueue*>(queue);
    if (!q->launched) return Status::Ok();
    // `launched` stays set until the event completed: after any error here (another device lost,
    // a failed wait) DestroyLookupQueue still waits for the kernel before its buffers are freed.
    WP_RETURN_IF_ERROR(Health());
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    WP_GPU_RETURN_IF_ERROR(cudaEventSynchronize(q->done));
    q->launched = false;
    WP_GPU_RETURN_IF_ERROR(cudaGetLastError());
    return Status::Ok();
  }

  Status MeasureCompressionRate(int ordinal, double seconds, double* per_second) override {
    ChainRun run;
    run.threads_per_block = 256;
    run.seconds = seconds;
    ChainResult result;
    WP_RETURN_IF_ERROR(MeasureCompressionChain(ordinal, run, &result));
    *per_second = result.compressions_per_s;
    return Status::Ok();
  }

  Status MeasureCompressionChain(int ordinal, const ChainRun& run, ChainResult* result) override {
    WP_RETURN_IF_ERROR(Health());
    GpuDeviceProps props;
    WP_RETURN_IF_ERROR(Properties(ordinal, &props));
    const uint32_t threads = run.threads_per_block;
    if (threads == 0 || threads > kMaxTeamThreads) return InvalidArgumentError("chain: 1..256 threads per block");
    int per_mp = 0;
    WP_GPU_RETURN_IF_ERROR(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_mp, CompressChainKernel, static_cast<int>(threads), 0));
    if (run.blocks_per_multiprocessor > 0) {
      if (static_cast<int>(run.blocks_per_multiprocessor) > per_mp) {
        return InvalidArgumentError("chain: " + std::to_string(run.blocks_per_multiprocessor) + " blocks of " +
                                    std::to_string(threads) + " threads per multiprocessor do not fit (" +
                                    std::to_string(per_mp) + " do)");
      }
      per_mp = static_cast<int>(run.blocks_per_multiprocessor);
    }
    const uint32_t blocks = static_cast<uint32_t>(props.multiprocessors * (per_mp > 0 ? per_mp : 1));
    void* sink = nullptr;
    void* clocks = nullptr;
    WP_RETURN_IF_ERROR(Allocate(ordinal, static_cast<uint64_t>(blocks) * threads * 4, &sink));
    Status st = Allocate(ordinal, static_cast<uint64_t>(blocks) * 16, &clocks);
    cudaEvent_t start = nullptr, stop = nullptr;
    if (st.ok()) {
      Status measured = [&]() -> Status {
        WP_GPU_RETURN_IF_ERROR(cudaEventCreate(&start));
        WP_GPU_RETURN_IF_ERROR(cudaEventCreate(&stop));
        auto* clock_words = static_cast<unsigned long long*>(clocks);
        auto timed = [&](uint32_t iterations, float* ms) -> Status {
          WP_GPU_RETURN_IF_ERROR(cudaEventRecord(start));
          CompressChainKernel<<<blocks, threads>>>(iterations, static_cast<uint32_t*>(sink), clock_words);
          WP_GPU_RETURN_IF_ERROR(cudaGetLastError());
          WP_GPU_RETURN_IF_ERROR(cudaEventRecord(stop));
          WP_GPU_RETURN_IF_ERROR(cudaEventSynchronize(stop));
          WP_GPU_RETURN_IF_ERROR(cudaEventElapsedTime(ms, start, stop));
          return Status::Ok();
        };
        uint32_t iterations = 256;  // calibrate: grow until a launch takes a tenth of the target
        float ms = 0;
        for (;;) {
          WP_RETURN_IF_ERROR(timed(iterations, &ms));
          if (ms / 1e3 >= run.seconds / 10 || iterations >= (1u << 30)) break;
          iterations *= 4;
        }
        const double s = ms / 1e3, target = run.seconds > s ? run.seconds : s;
        uint64_t scaled = static_cast<uint64_t>(iterations * (target / (s > 0 ? s : 1e-6)));
        if (scaled > (1u << 31)) scaled = 1u << 31;
        iterations = static_cast<uint32_t>(scaled > 1 ? scaled : 1);
        WP_RETURN_IF_ERROR(timed(iterations, &ms));
        std::vector<unsigned long long> host(2ull * blocks);
        WP_RETURN_IF_ERROR(CopyToHost(ordinal, host.data(), clocks, host.size() * 8));
        // The longest block's span: every block is resident from the start (one wave), but the
        // scheduler favours the oldest warps, so blocks of equal work finish far apart (on an H200 at
        // eight warps per sub-partition the mean span was 57% of the kernel): the mean would
        // understate the clock.
        double cycles = 0;
        for (uint32_t b = 0; b < blocks; ++b) {
          cycles = std::max(cycles, static_cast<double>(host[2 * b + 1] - host[2 * b]));
        }
        result->seconds = ms / 1e3;
        result->threads = static_cast<uint64_t>(blocks) * threads;
        result->blocks_per_multiprocessor = static_cast<uint32_t>(per_mp);
        result->compressions_per_s = static_cast<double>(blocks) * threads * iterations / result->seconds;
        result->sm_clock_hz = cycles / result->seconds;
        return Status::Ok();
      }();
      st = measured;
    }
    (void)cudaEventDestroy(start);
    (void)cudaEventDestroy(stop);
    Free(ordinal, sink);
    Free(ordinal, clocks);
    return st;
  }

 private:
  struct CompressionQuery {
    bool checked = false, compressible = false;
    std::string detail;
  };

  static const char* MemoryTypeName(int type) {
    switch (type) {
      case cudaMemoryTypeDevice:
        return "device";
      case cudaMemoryTypeHost:
        return "host";
      case cudaMemoryTypeManaged:
        return "managed";
      default:
        return "unregistered";
    }
  }

  // Generic compression is a property of the physical allocation (CUDA: cuMemCreate with
  // CU_MEM_ALLOCATION_COMP_GENERIC; cudaMalloc never asks for it). GpuCompressionOf asks the
  // driver where the runtime API can (gpu_compat.h says how, per vendor).
  static CompressionQuery QueryCompression(const void* ptr) {
    CompressionQuery q;
    q.checked = GpuCompressionOf(ptr, &q.compressible, &q.detail);
    return q;
  }
};

}  // namespace

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
std::unique_ptr<GpuRuntime> MakeHipRuntime() { return std::make_unique<RuntimeImpl>(); }
#else
std::unique_ptr<GpuRuntime> MakeCudaRuntime() { return std::make_unique<RuntimeImpl>(); }
#endif

}  // namespace gpu
}  // namespace wipeproof
