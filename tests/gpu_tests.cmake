# GPU tests. The kernel logic, acquisition, fill passes and the backend run on the CPU through the
# emulated runtime (no GPU needed); gpu_cuda_device_test / gpu_hip_device_test run the real
# kernels and GTEST_SKIP when no device is present.
wp_add_test(gpu_kernel_logic_test SOURCES gpu_kernel_logic_test.cc LIBS wp_gpu_driver)
wp_add_test(gpu_memory_test SOURCES gpu_memory_test.cc LIBS wp_gpu_driver)
wp_add_test(gpu_region_test SOURCES gpu_region_test.cc LIBS wp_gpu_driver)
wp_add_test(gpu_backend_test SOURCES gpu_backend_test.cc LIBS wp_backends wp_gpu_driver)
if(TARGET wp_gpu_cuda)
  wp_add_test(gpu_cuda_device_test SOURCES gpu_device_test.cc LIBS wp_gpu_cuda)
endif()
if(TARGET wp_gpu_hip)
  wp_add_test(gpu_hip_device_test SOURCES gpu_device_test.cc LIBS wp_gpu_hip)
  target_compile_definitions(gpu_hip_device_test PRIVATE WP_TEST_HIP=1)
endif()
