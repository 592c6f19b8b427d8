#!/usr/bin/env bash
# Installs dependencies, configures, builds and runs every test. Exits non-zero on any failure.
# Usage: scripts/test.sh            (build folder: build/, or $WIPEPROOF_BUILD_DIR)
# The CUDA and HIP kernels are compiled whenever nvcc / Debian's HIP are present (set
# WIPEPROOF_WITH_HIP=1 to install HIP); GPU tests skip without a device.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${WIPEPROOF_BUILD_DIR:-build}
jobs=${WIPEPROOF_JOBS:-$(nproc)}

scripts/setup-deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "$jobs"
ctest --test-dir "$build" -j "$jobs" --output-on-failure --timeout 900
# Fuzzing (docs/fuzzing.md): a clang + sanitizer build of tests/fuzz (folder build-fuzz), each
# target's committed corpus replayed, then each target fuzzed for WIPEPROOF_FUZZ_SECONDS (10).
scripts/fuzz.sh --seconds="${WIPEPROOF_FUZZ_SECONDS:-10}" --jobs="$jobs" --opt-level=0
