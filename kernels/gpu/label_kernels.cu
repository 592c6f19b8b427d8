// The label kernels and the runtime wrapper around them, in CUDA spelling. nvcc compiles this file
// for the CUDA runtime; label_kernels.hip includes it so clang compiles the same text as HIP, with
// gpu_compat.h mapping the runtime names. The kernels are thin: the per-team logic is
// team_executor.h, shared with the CPU emulation the tests run.
//
// Every runtime call goes through WP_GPU_RETURN_IF_ERROR, which turns a failure into a Status
// naming the call, file:line, the runtime and its error string; nothing here exits or throws.
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/gpu/gpu_compat.h"
#include "kernels/gpu/gpu_runtime.h"
#include "kernels/gpu/team_executor.h"

namespace wipeproof {
namespace gpu {
namespace {

// Fill teams are at most this many threads; the compiler may then give each thread up to 255
// registers (the compression's state, block and inputs need ~80).
constexpr uint32_t kMaxTeamThreads = 256;
constexpr uint32_t kLookupThreads = 128;

const char* BaseName(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

Status RuntimeError(cudaError_t e, const char* expr, const char* file, int line) {
  StatusCode code = StatusCode::kInternal;
  if (e == cudaErrorMemoryAllocation) code = StatusCode::kResourceExhausted;
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) code = StatusCode::kUnavailable;
  return Status(code, std::string(kRuntimeName) + " error " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                          ") in " + expr + " at " + BaseName(file) + ":" + std::to_string(line));
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

// One team per block: derive the chunks' material, then the schedule op by op with a block
// barrier after each super-step (team_executor.h explains why that is the only synchronisation).
template <int kFormat>
__global__ void __launch_bounds__(kMaxTeamThreads) FillKernel(const FillWaveArgs a) {
  extern __shared__ uint4 shared_raw[];  // 16-byte aligned for the label vector accesses
  uint32_t* shared = reinterpret_cast<uint32_t*>(shared_raw);
  const Team team = MakeTeam(a, blockIdx.x, shared);
  if (team.chunks == 0) return;  // uniform across the block
  TeamPrologue(a, team, shared, threadIdx.x, blockDim.x);
  __syncthreads();
  uint32_t rotation = 0;  // uniform: every thread follows the same ops
  for (uint32_t k = 0; k < a.op_count; ++k) {
    const DeviceOp op = DecodeOp(a.program, k);
    TeamRunOp<kFormat>(a, team, op, rotation, threadIdx.x, blockDim.x);
    if (op.step_end) {
      __syncthreads();
      rotation = 0;
    } else {
      rotation = (rotation + OpItems(op, team.chunks)) % blockDim.x;
    }
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

// The raw compression rate of the fill's own node hash: a dependent chain of c1 node hashes per
// thread, each reading the previous label as its predecessor, like a narrow layer does.
__global__ void __launch_bounds__(kMaxTeamThreads) CompressChainKernel(uint32_t iterations, uint32_t* sink) {
  const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t key[16];
  for (int i = 0; i < 16; ++i) key[i] = tid * 0x9E3779B9u + i;
  FillWaveArgs unused;
  uint32_t a[8], b[8];
  for (int i = 0; i < 8; ++i) a[i] = tid ^ i, b[i] = ~tid + i;
  for (uint32_t it = 0; it < iterations; ++it) {
    uint32_t out[8];
    HashNode<kFormatC1>(unused, key, it, false, a, b, out);
    for (int i = 0; i < 8; ++i) b[i] = a[i], a[i] = out[i];
  }
  uint32_t x = 0;
  for (int i = 0; i < 8; ++i) x ^= a[i];
  sink[tid] = x;
}

// ---------------------------------------------------------------------------------------------
// The runtime.

class RuntimeImpl final : public GpuRuntime {
 public:
  const char* name() const override { return kRuntimeName; }

  Status DeviceCount(int* count) override {
    *count = 0;
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
    return Status::Ok();
  }

  Status MemoryInfo(int ordinal, uint64_t* free_bytes, uint64_t* total_bytes) override {
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    size_t f = 0, t = 0;
    WP_GPU_RETURN_IF_ERROR(cudaMemGetInfo(&f, &t));
    *free_bytes = f;
    *total_bytes = t;
    return Status::Ok();
  }

  Status Allocate(int ordinal, uint64_t bytes, void** ptr) override {
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

  Status AllocateMappedHost(int ordinal, uint64_t bytes, void** host, void** device) override {
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
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    WP_GPU_RETURN_IF_ERROR(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    return Status::Ok();
  }

  Status CopyToHost(int ordinal, void* dst, const void* src, uint64_t bytes) override {
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    WP_GPU_RETURN_IF_ERROR(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
    return Status::Ok();
  }

  Status FillTeamsPerMultiprocessor(int ordinal, uint32_t format, uint32_t threads_per_team, uint64_t shared_bytes,
                                    int* teams) override {
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    WP_RETURN_IF_ERROR(PrepareSharedMemory(format, shared_bytes));
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
    if (launch.threads_per_team == 0 || launch.threads_per_team > kMaxTeamThreads || launch.teams == 0) {
      return InvalidArgumentError("fill launch needs 1.." + std::to_string(kMaxTeamThreads) +
                                  " threads per team and at least one team");
    }
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    const FillWaveArgs& a = launch.args;
    const uint64_t shared = FillSharedBytes(a.chunks_per_team, a.scratch_labels, a.scratch_in_shared != 0);
    WP_RETURN_IF_ERROR(PrepareSharedMemory(a.session.format, shared));
    if (a.session.format == kFormatC1) {
      FillKernel<kFormatC1><<<launch.teams, launch.threads_per_team, shared>>>(a);
    } else {
      FillKernel<kFormat192><<<launch.teams, launch.threads_per_team, shared>>>(a);
    }
    WP_GPU_RETURN_IF_ERROR(cudaGetLastError());
    WP_GPU_RETURN_IF_ERROR(cudaDeviceSynchronize());
    return Status::Ok();
  }

  Status RunBuildCv0(int ordinal, const Cv0BuildArgs& args) override {
    if (args.nodes == 0) return Status::Ok();
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    const uint64_t blocks = (args.nodes + 255) / 256;
    BuildCv0Kernel<<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), 256>>>(args);
    WP_GPU_RETURN_IF_ERROR(cudaGetLastError());
    WP_GPU_RETURN_IF_ERROR(cudaDeviceSynchronize());
    return Status::Ok();
  }

  Status RunLookup(int ordinal, const LookupArgs& args) override {
    if (args.n == 0) return Status::Ok();
    WP_GPU_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    LookupKernel<<<(args.n + kLookupThreads - 1) / kLookupThreads, kLookupThreads>>>(args);
    WP_GPU_RETURN_IF_ERROR(cudaGetLastError());
    WP_GPU_RETURN_IF_ERROR(cudaDeviceSynchronize());
    return Status::Ok();
  }

  Status MeasureCompressionRate(int ordinal, double seconds, double* per_second) override {
    GpuDeviceProps props;
    WP_RETURN_IF_ERROR(Properties(ordinal, &props));
    const uint32_t threads = 256;
    int per_mp = 0;
    WP_GPU_RETURN_IF_ERROR(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_mp, CompressChainKernel, static_cast<int>(threads), 0));
    const uint32_t blocks = static_cast<uint32_t>(props.multiprocessors * (per_mp > 0 ? per_mp : 1));
    void* sink = nullptr;
    WP_RETURN_IF_ERROR(Allocate(ordinal, static_cast<uint64_t>(blocks) * threads * 4, &sink));
    cudaEvent_t start = nullptr, stop = nullptr;
    Status st = [&]() -> Status {
      WP_GPU_RETURN_IF_ERROR(cudaEventCreate(&start));
      WP_GPU_RETURN_IF_ERROR(cudaEventCreate(&stop));
      uint32_t iterations = 256;  // calibrate: grow until a launch takes a tenth of the target
      for (;;) {
        WP_GPU_RETURN_IF_ERROR(cudaEventRecord(start));
        CompressChainKernel<<<blocks, threads>>>(iterations, static_cast<uint32_t*>(sink));
        WP_GPU_RETURN_IF_ERROR(cudaGetLastError());
        WP_GPU_RETURN_IF_ERROR(cudaEventRecord(stop));
        WP_GPU_RETURN_IF_ERROR(cudaEventSynchronize(stop));
        float ms = 0;
        WP_GPU_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start, stop));
        const double s = ms / 1e3;
        if (s >= seconds / 10 || iterations >= (1u << 30)) {
          const double target = seconds > s ? seconds : s;
          uint64_t scaled = static_cast<uint64_t>(iterations * (target / (s > 0 ? s : 1e-6)));
          if (scaled > (1u << 31)) scaled = 1u << 31;
          iterations = static_cast<uint32_t>(scaled > 1 ? scaled : 1);
          WP_GPU_RETURN_IF_ERROR(cudaEventRecord(start));
          CompressChainKernel<<<blocks, threads>>>(iterations, static_cast<uint32_t*>(sink));
          WP_GPU_RETURN_IF_ERROR(cudaGetLastError());
          WP_GPU_RETURN_IF_ERROR(cudaEventRecord(stop));
          WP_GPU_RETURN_IF_ERROR(cudaEventSynchronize(stop));
          WP_GPU_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start, stop));
          *per_second = static_cast<double>(blocks) * threads * iterations / (ms / 1e3);
          return Status::Ok();
        }
        iterations *= 4;
      }
    }();
    (void)cudaEventDestroy(start);
    (void)cudaEventDestroy(stop);
    Free(ordinal, sink);
    return st;
  }

 private:
  // Dynamic shared memory above the default 48 KiB needs an opt-in per kernel.
  // (AMD GPUs have no opt-in: a block may use all 64 KiB of LDS, and a larger launch fails.)
  Status PrepareSharedMemory(uint32_t format, uint64_t bytes) {
    if (bytes <= 48 * 1024 || kRuntimeIsHip) return Status::Ok();
    if (format == kFormatC1) {
      WP_GPU_RETURN_IF_ERROR(cudaFuncSetMaxDynamicSharedMemory(FillKernel<kFormatC1>, static_cast<int>(bytes)));
    } else {
      WP_GPU_RETURN_IF_ERROR(cudaFuncSetMaxDynamicSharedMemory(FillKernel<kFormat192>, static_cast<int>(bytes)));
    }
    return Status::Ok();
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
