// The HIP build of the one kernel source: CMake picks the language from the extension, so this
// file only includes label_kernels.cu; gpu_compat.h maps the CUDA names onto HIP.
#include "label_kernels.cu"
