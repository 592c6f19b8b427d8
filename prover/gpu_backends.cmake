# GPU backends for wp_backends. Until the CUDA/HIP backends exist, the stub reports them disabled.
target_sources(wp_backends PRIVATE gpu_backends_stub.cc)
