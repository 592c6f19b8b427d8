// WP_HOST_DEVICE marks functions that compile unchanged for the host (g++), CUDA (nvcc) and HIP
// (clang). The label engine's arithmetic lives in such header-only functions so the CPU reference
// and the GPU kernels share every byte of it.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define WP_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define WP_HOST_DEVICE inline
#endif
