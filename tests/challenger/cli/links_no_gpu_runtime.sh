#!/usr/bin/env bash
# The challenger runs on authority machines without GPUs, so it must link no GPU runtime in any
# build, including WIPEPROOF_CUDA/HIP=ON ones (where the prover does). ldd alone misses the static
# CUDA runtime the kernels link, so the binary's own symbols are checked as well: nothing of the
# CUDA or HIP runtimes and nothing of wipeproof's GPU code (namespace wipeproof::gpu).
# Usage: links_no_gpu_runtime.sh CHALLENGER_BINARY
set -euo pipefail
bin=$1
if ldd "$bin" | grep -E 'lib(cuda|cudart|nvrtc|nvidia-ml|amdhip64|hsa-runtime64|hiprtc)'; then
  echo "FAIL: $bin is dynamically linked to a GPU runtime" >&2
  exit 1
fi
syms=$(nm --demangle "$bin" | grep -E ' (cuda[A-Z]|__cuda|hip[A-Z]|__hip)|wipeproof::gpu::' | head -5 || true)
if [[ -n $syms ]]; then
  echo "FAIL: $bin holds GPU runtime or kernel symbols:" >&2
  echo "$syms" >&2
  exit 1
fi
echo "ok: $bin links no GPU runtime and no GPU code"
