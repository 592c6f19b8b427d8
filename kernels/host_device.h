// WP_HOST_DEVICE marks functions that compile unchanged for the host (g++), CUDA (nvcc) and HIP
// (clang). The label engine's arithmetic lives in such header-only functions so the CPU reference
// and the GPU kernels share every byte of it.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define WP_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define WP_HOST_DEVICE inline
#endif

// Address spaces for HIP device code. On AMD GPUs a plain pointer compiles to *flat* accesses (a
// 64-bit address per lane, and a wait on both the LDS and the memory counters); a pointer the
// kernel knows to be device memory (global: labels, tables, mapped host memory) or the block's
// shared memory (LDS) says so with these, and gets global_* or ds_* instructions. Empty for the
// host and for CUDA (whose compiler infers the space itself).
#if defined(__HIP_DEVICE_COMPILE__)
#define WP_GLOBAL_SPACE __attribute__((address_space(1)))
#define WP_SHARED_SPACE __attribute__((address_space(3)))
#else
#define WP_GLOBAL_SPACE
#define WP_SHARED_SPACE
#endif
