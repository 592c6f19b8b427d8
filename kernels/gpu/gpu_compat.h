// One kernel source for two runtimes: label_kernels.cu is written against the CUDA runtime API;
// compiled as HIP (label_kernels.hip), this header maps the names it uses onto HIP with type
// aliases, constants and inline wrappers (no macros), as sppark's cuda2hip.hpp and ggml's
// vendors/hip.h do. Only what the kernel source uses is mapped; add names here, never #ifdefs
// in the kernel source.
//
// Nothing here assumes a warp width: the kernels use block barriers only.
// Include only from label_kernels.cu.
#pragma once

#include <string>

// 16 UUID bytes as "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (nvidia-smi -L's spelling).
inline std::string FormatGpuUuid(const unsigned char* bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string id = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) id += '-';
    id += kHex[bytes[i] >> 4];
    id += kHex[bytes[i] & 15];
  }
  return id;
}

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)

#include <hip/hip_runtime.h>

namespace wipeproof {
namespace gpu {
constexpr const char kRuntimeName[] = "hip";
constexpr bool kRuntimeIsHip = true;
// FillKernel's second launch bound, per format (c1, 192). hip-clang turns it into
// amdgpu_waves_per_eu: at least 5 (c1: <= 102 VGPRs; gfx940 uses 88, gfx90a 88) or 4 (192: <= 128;
// uses 112 / 114) waves per SIMD, no scratch (clang 15). Label accesses in the global address
// space (team_executor.h LoadHalf) cost ~16 VGPRs over flat ones: at 6 / 5 waves both kernels spill
// (c1 28 bytes, 192 68 bytes of scratch per lane). With flat label accesses c1 would fit 6 waves
// (72 VGPRs) but every label access would wait on both the LDS and the memory counters. Which is
// faster on an MI300X is for gpu-check --runtime=hip to measure (docs/kernels.md).
constexpr int kFillMinBlocks[2] = {5, 4};
}  // namespace gpu
}  // namespace wipeproof

using cudaError_t = hipError_t;
using cudaEvent_t = hipEvent_t;
using cudaStream_t = hipStream_t;
using cudaDeviceProp = hipDeviceProp_t;
using cudaMemcpyKind = hipMemcpyKind;
using cudaDeviceAttr = hipDeviceAttribute_t;

constexpr hipError_t cudaSuccess = hipSuccess;
constexpr hipError_t cudaErrorMemoryAllocation = hipErrorOutOfMemory;
constexpr hipError_t cudaErrorNoDevice = hipErrorNoDevice;
constexpr hipError_t cudaErrorInsufficientDriver = hipErrorInsufficientDriver;
constexpr hipMemcpyKind cudaMemcpyHostToDevice = hipMemcpyHostToDevice;
constexpr hipMemcpyKind cudaMemcpyDeviceToHost = hipMemcpyDeviceToHost;
constexpr unsigned cudaHostAllocMapped = hipHostMallocMapped;
constexpr unsigned cudaHostRegisterMapped = hipHostRegisterMapped;
constexpr unsigned cudaHostRegisterPortable = hipHostRegisterPortable;
constexpr hipDeviceAttribute_t cudaDevAttrMaxSharedMemoryPerBlockOptin = hipDeviceAttributeSharedMemPerBlockOptin;
constexpr hipDeviceAttribute_t cudaDevAttrKernelExecTimeout = hipDeviceAttributeKernelExecTimeout;
constexpr unsigned cudaEventBlockingSync = hipEventBlockingSync;
constexpr unsigned cudaEventDisableTiming = hipEventDisableTiming;
constexpr unsigned cudaStreamNonBlocking = hipStreamNonBlocking;
constexpr hipError_t cudaErrorNotReady = hipErrorNotReady;
// CUDA's cudaMemoryType values, and the two fields of cudaPointerAttributes the source reads.
constexpr int cudaMemoryTypeHost = 1;
constexpr int cudaMemoryTypeDevice = 2;
constexpr int cudaMemoryTypeManaged = 3;
struct cudaPointerAttributes {
  int type = 0;
  int device = -1;
};

inline const char* cudaGetErrorName(hipError_t e) { return hipGetErrorName(e); }
inline const char* cudaGetErrorString(hipError_t e) { return hipGetErrorString(e); }
inline hipError_t cudaGetLastError() { return hipGetLastError(); }
inline hipError_t cudaGetDeviceCount(int* count) { return hipGetDeviceCount(count); }
inline hipError_t cudaSetDevice(int device) { return hipSetDevice(device); }
inline hipError_t cudaGetDeviceProperties(hipDeviceProp_t* prop, int device) {
  return hipGetDeviceProperties(prop, device);
}
inline hipError_t cudaDeviceGetAttribute(int* value, hipDeviceAttribute_t attr, int device) {
  return hipDeviceGetAttribute(value, attr, device);
}
inline hipError_t cudaDeviceGetPCIBusId(char* id, int len, int device) { return hipDeviceGetPCIBusId(id, len, device); }
inline hipError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  return hipMemGetInfo(free_bytes, total_bytes);
}
inline hipError_t cudaMalloc(void** ptr, size_t bytes) { return hipMalloc(ptr, bytes); }
inline hipError_t cudaFree(void* ptr) { return hipFree(ptr); }
inline hipError_t cudaHostAlloc(void** ptr, size_t bytes, unsigned flags) { return hipHostMalloc(ptr, bytes, flags); }
inline hipError_t cudaFreeHost(void* ptr) { return hipHostFree(ptr); }
inline hipError_t cudaHostRegister(void* host, size_t bytes, unsigned flags) {
  return hipHostRegister(host, bytes, flags);
}
inline hipError_t cudaHostUnregister(void* host) { return hipHostUnregister(host); }
inline hipError_t cudaHostGetDevicePointer(void** device, void* host, unsigned flags) {
  return hipHostGetDevicePointer(device, host, flags);
}
inline hipError_t cudaMemcpy(void* dst, const void* src, size_t bytes, hipMemcpyKind kind) {
  return hipMemcpy(dst, src, bytes, kind);
}
inline hipError_t cudaDeviceSynchronize() { return hipDeviceSynchronize(); }
inline hipError_t cudaEventCreate(hipEvent_t* event) { return hipEventCreate(event); }
inline hipError_t cudaEventCreateWithFlags(hipEvent_t* event, unsigned flags) {
  return hipEventCreateWithFlags(event, flags);
}
inline hipError_t cudaEventQuery(hipEvent_t event) { return hipEventQuery(event); }
inline hipError_t cudaEventRecord(hipEvent_t event) { return hipEventRecord(event, nullptr); }
inline hipError_t cudaEventRecord(hipEvent_t event, hipStream_t stream) { return hipEventRecord(event, stream); }
inline hipError_t cudaStreamCreateWithFlags(hipStream_t* stream, unsigned flags) {
  return hipStreamCreateWithFlags(stream, flags);
}
inline hipError_t cudaStreamDestroy(hipStream_t stream) { return hipStreamDestroy(stream); }
inline hipError_t cudaEventSynchronize(hipEvent_t event) { return hipEventSynchronize(event); }
inline hipError_t cudaEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop) {
  return hipEventElapsedTime(ms, start, stop);
}
inline hipError_t cudaEventDestroy(hipEvent_t event) { return hipEventDestroy(event); }
template <typename Kernel>
inline hipError_t cudaFuncSetMaxDynamicSharedMemory(Kernel* kernel, int bytes) {
  return hipFuncSetAttribute(reinterpret_cast<const void*>(kernel), hipFuncAttributeMaxDynamicSharedMemorySize, bytes);
}
template <typename Kernel>
inline hipError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, Kernel kernel, int threads,
                                                                size_t shared_bytes) {
  return hipOccupancyMaxActiveBlocksPerMultiprocessor(blocks, kernel, threads, shared_bytes);
}
// Asks one attribute at a time (hipPointerGetAttribute): its spelling is the same in ROCm 5 and 6,
// unlike hipPointerAttribute_t's fields.
inline hipError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* ptr) {
  hipDeviceptr_t p = const_cast<void*>(ptr);
  unsigned int memory_type = 0;
  int managed = 0, device = -1;
  hipError_t e = hipPointerGetAttribute(&memory_type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, p);
  if (e == hipSuccess) e = hipPointerGetAttribute(&managed, HIP_POINTER_ATTRIBUTE_IS_MANAGED, p);
  if (e == hipSuccess) e = hipPointerGetAttribute(&device, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p);
  if (e != hipSuccess) return e;
  a->type = managed                                                     ? cudaMemoryTypeManaged
            : memory_type == static_cast<unsigned>(hipMemoryTypeDevice) ? cudaMemoryTypeDevice
                                                                        : cudaMemoryTypeHost;
  a->device = device;
  return hipSuccess;
}
// Compression: HIP has no compressible buffer allocation and no query for one (AMD's delta colour
// compression applies to images, not to hipMalloc buffers), so nothing can be asked.
inline bool GpuCompressionOf(const void* /*ptr*/, bool* compressible, std::string* detail) {
  *compressible = false;
  *detail = "compression: not checked (HIP exposes no compressible buffers and no query)";
  return false;
}
// Errors after which the runtime is unusable in this process (gpu_runtime.h DeviceLostError).
// HIP 5.2 names fewer of them than CUDA; a GPU page fault never gets here (it aborts the process).
inline bool GpuErrorIsDeviceLost(hipError_t e) {
  return e == hipErrorIllegalAddress || e == hipErrorLaunchFailure || e == hipErrorECCNotCorrectable ||
         e == hipErrorLaunchTimeOut || e == hipErrorAssert;
}
// The device's stable id: "GPU-<uuid>" from hipDeviceGetUuid when the board reports a non-zero one;
// else the PCI id plus the ordinal ("0000:c1:00.0/3"): partitions of one MI300X (CPX/NPS modes)
// share a PCI id, so the PCI id alone would name the first partition for all of them.
inline std::string GpuStableId(int device, const hipDeviceProp_t& /*prop*/) {
  hipDevice_t handle = 0;
  hipUUID uuid = {};
  if (hipDeviceGet(&handle, device) == hipSuccess && hipDeviceGetUuid(&uuid, handle) == hipSuccess) {
    bool zero = true;
    for (unsigned char b : uuid.bytes) zero = zero && b == 0;
    if (!zero) return FormatGpuUuid(reinterpret_cast<const unsigned char*>(uuid.bytes));
  }
  (void)hipGetLastError();
  char bus[32] = {0};
  if (hipDeviceGetPCIBusId(bus, sizeof bus, device) != hipSuccess) {
    (void)hipGetLastError();
    return "hip:" + std::to_string(device);
  }
  return std::string(bus) + "/" + std::to_string(device);
}
inline std::string GpuArchName(const hipDeviceProp_t& prop) {
  std::string arch = prop.gcnArchName;
  return arch.substr(0, arch.find(':'));  // "gfx90a:sramecc+:xnack-" -> "gfx90a"
}
// A counter every compute unit reads alike (ticks of the device's constant wall clock), so the
// spans of blocks on different units compare; only ratios of its spans are reported.
// (hip-clang's host pass does not declare wall_clock64.)
__device__ inline unsigned long long DeviceWideTimer() {
#if defined(__HIP_DEVICE_COMPILE__)
  return static_cast<unsigned long long>(wall_clock64());
#else
  return 0;
#endif
}

#else  // CUDA

#include <cuda.h>  // driver API types only: its functions are fetched at run time (no libcuda link)
#include <cuda_runtime.h>

namespace wipeproof {
namespace gpu {
constexpr const char kRuntimeName[] = "cuda";
constexpr bool kRuntimeIsHip = false;
// FillKernel's second launch bound, per format (c1, 192): blocks of 256 threads per SM, so the
// register cap is 65536 / (256 * 4) = 64 (c1: 1024 threads per SM) and 85 (192: 768 per SM).
constexpr int kFillMinBlocks[2] = {4, 3};
}  // namespace gpu
}  // namespace wipeproof

template <typename Kernel>
inline cudaError_t cudaFuncSetMaxDynamicSharedMemory(Kernel* kernel, int bytes) {
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}
// Errors after which the runtime is unusable in this process (CUDA's sticky errors; gpu_runtime.h
// DeviceLostError): every later call would return them again.
inline bool GpuErrorIsDeviceLost(cudaError_t e) {
  return e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure || e == cudaErrorIllegalInstruction ||
         e == cudaErrorMisalignedAddress || e == cudaErrorHardwareStackError || e == cudaErrorECCUncorrectable ||
         e == cudaErrorLaunchTimeout || e == cudaErrorInvalidAddressSpace || e == cudaErrorInvalidPc ||
         e == cudaErrorAssert;
}
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi -L prints it.
inline std::string GpuStableId(int /*device*/, const cudaDeviceProp& prop) {
  return FormatGpuUuid(reinterpret_cast<const unsigned char*>(prop.uuid.bytes));
}
// A counter every SM reads alike (%globaltimer, nanoseconds), so the spans of blocks on different
// SMs compare (clock64 counts per SM); only ratios of its spans are reported.
__device__ inline unsigned long long DeviceWideTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
inline std::string GpuArchName(const cudaDeviceProp& prop) {
  return "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
}
// A driver function by name, without linking libcuda (the binary must start without a driver).
inline void* GpuDriverFunction(const char* name) {
  void* fn = nullptr;
#if CUDART_VERSION >= 12000
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found);
#else
  const cudaError_t e = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &found);
#endif
  const bool ok = e == cudaSuccess && found == cudaDriverEntryPointSuccess;
#elif CUDART_VERSION >= 11030
  const cudaError_t e = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault);
  const bool ok = e == cudaSuccess && fn != nullptr;
#else
  const cudaError_t e = cudaErrorNotSupported;
  const bool ok = false;
#endif
  if (!ok) {
    (void)e;
    (void)cudaGetLastError();
    return nullptr;
  }
  return fn;
}
// Generic compression is a property of a cuMemCreate allocation (CU_MEM_ALLOCATION_COMP_GENERIC);
// cudaMalloc never asks for it. The driver says which: cuMemRetainAllocationHandle succeeds only
// for cuMemCreate/cuMemMap memory, whose properties then name the compression type.
inline bool GpuCompressionOf(const void* ptr, bool* compressible, std::string* detail) {
  using Retain = CUresult (*)(CUmemGenericAllocationHandle*, void*);
  using Properties = CUresult (*)(CUmemAllocationProp*, CUmemGenericAllocationHandle);
  using Release = CUresult (*)(CUmemGenericAllocationHandle);
  auto retain = reinterpret_cast<Retain>(GpuDriverFunction("cuMemRetainAllocationHandle"));
  auto properties = reinterpret_cast<Properties>(GpuDriverFunction("cuMemGetAllocationPropertiesFromHandle"));
  auto release = reinterpret_cast<Release>(GpuDriverFunction("cuMemRelease"));
  *compressible = false;
  if (retain == nullptr || properties == nullptr || release == nullptr) {
    *detail = "compression: not checked (driver entry points not found)";
    return false;
  }
  CUmemGenericAllocationHandle handle = 0;
  const CUresult r = retain(&handle, const_cast<void*>(ptr));
  if (r != CUDA_SUCCESS) {
    *detail = "compression: none (cuMemRetainAllocationHandle error " + std::to_string(static_cast<int>(r)) +
              ": not a cuMemCreate allocation, so not compressible)";
    return true;
  }
  CUmemAllocationProp prop = {};
  const CUresult p = properties(&prop, handle);
  (void)release(handle);
  if (p != CUDA_SUCCESS) {
    *detail = "compression: not checked (cuMemGetAllocationPropertiesFromHandle error " +
              std::to_string(static_cast<int>(p)) + ")";
    return false;
  }
  *compressible = prop.allocFlags.compressionType != CU_MEM_ALLOCATION_COMP_NONE;
  *detail = std::string("compression: ") + (*compressible ? "generic (compressible)" : "none") +
            " (cuMemCreate allocation properties)";
  return true;
}

#endif
