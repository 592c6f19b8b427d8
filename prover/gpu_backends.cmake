# GPU backends for wp_backends. The runtime-neutral parts are plain C++ over kernels/gpu's
# wp_gpu_driver and always built (tests run them on the CPU-emulated runtime): the GPU backend
# (gpu_backend.cc) and GPU-filled host memory (gpu_host_fill.cc). Each runtime adds its file
# (cuda_backend.cc, hip_backend.cc) and library; gpu_backends.cc then implements the factory's
# constructors, and without any GPU compiler the stub reports both as "disabled: built without ...".
target_sources(wp_backends PRIVATE gpu_backend.cc gpu_host_fill.cc)
target_link_libraries(wp_backends PUBLIC wp_gpu_driver)
if(TARGET wp_gpu_cuda OR TARGET wp_gpu_hip)
  target_sources(wp_backends PRIVATE gpu_backends.cc)
  if(TARGET wp_gpu_cuda)
    target_sources(wp_backends PRIVATE cuda_backend.cc)
    target_link_libraries(wp_backends PUBLIC wp_gpu_cuda)   # carries WIPEPROOF_HAVE_CUDA
  endif()
  if(TARGET wp_gpu_hip)
    target_sources(wp_backends PRIVATE hip_backend.cc)
    target_link_libraries(wp_backends PUBLIC wp_gpu_hip)    # carries WIPEPROOF_HAVE_HIP
  endif()
else()
  target_sources(wp_backends PRIVATE gpu_backends_stub.cc)
endif()
