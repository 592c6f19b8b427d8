# GPU languages. WIPEPROOF_CUDA and WIPEPROOF_HIP default to ON when their compiler is found; the
# kernels then compile in CI without a GPU, and GPU tests skip at run time when no device is present.
# Architecture lists are cache variables: e.g. -DCMAKE_HIP_ARCHITECTURES=gfx942 with an official ROCm.

include(CheckLanguage)
if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)   # bare PATHs miss it
endif()
check_language(CUDA)
set(_wp_cuda_default OFF)
if(CMAKE_CUDA_COMPILER)
  set(_wp_cuda_default ON)
endif()
option(WIPEPROOF_CUDA "Build the CUDA kernels and backend" ${_wp_cuda_default})

find_program(WIPEPROOF_CLANG15 NAMES clang++-15)
set(_wp_hip_lang_dir /usr/lib/x86_64-linux-gnu/cmake/hip-lang)
set(_wp_hip_default OFF)
if(CMAKE_HIP_COMPILER OR (WIPEPROOF_CLANG15 AND EXISTS ${_wp_hip_lang_dir}/hip-lang-config.cmake))
  set(_wp_hip_default ON)
endif()
option(WIPEPROOF_HIP "Build the HIP (AMD) kernels and backend" ${_wp_hip_default})

if(WIPEPROOF_CUDA)
  set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures (A100, H100/H200; PTX kept)")
  set(CMAKE_CUDA_STANDARD 17)
  enable_language(CUDA)
endif()

if(WIPEPROOF_HIP)
  # Debian's HIP 5.2 needs four settings (see docs/building.md): clang 15 as the compiler, a ROCm
  # root shim holding lib/cmake/hip-lang, the device library path, and amd_comgr_DIR in try_compile.
  if(NOT CMAKE_HIP_COMPILER)
    set(CMAKE_HIP_COMPILER "${WIPEPROOF_CLANG15}")
  endif()
  if(NOT CMAKE_HIP_COMPILER_ROCM_ROOT AND EXISTS ${_wp_hip_lang_dir})
    set(_shim "${CMAKE_BINARY_DIR}/rocm-shim")
    file(MAKE_DIRECTORY "${_shim}/lib/cmake")
    if(NOT EXISTS "${_shim}/lib/cmake/hip-lang")
      file(CREATE_LINK ${_wp_hip_lang_dir} "${_shim}/lib/cmake/hip-lang" SYMBOLIC)
    endif()
    set(CMAKE_HIP_COMPILER_ROCM_ROOT "${_shim}")
    set(CMAKE_HIP_FLAGS "--rocm-path=/usr --rocm-device-lib-path=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode ${CMAKE_HIP_FLAGS}")
    set(amd_comgr_DIR /usr/lib/x86_64-linux-gnu/cmake/amd_comgr)
    list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES amd_comgr_DIR)
  endif()
  set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx940" CACHE STRING "HIP architectures (MI200, MI300 family as LLVM 15 knows it)")
  set(CMAKE_HIP_STANDARD 17)
  enable_language(HIP)
endif()
message(STATUS "wipeproof GPU backends: CUDA=${WIPEPROOF_CUDA} HIP=${WIPEPROOF_HIP}")
