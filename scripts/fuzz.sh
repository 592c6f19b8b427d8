#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/, docs/fuzzing.md) with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer in their own build folder, replays each target's committed corpus once,
# then fuzzes each target for N seconds. Exits non-zero when any target crashes, leaks, times out
# or runs out of memory, printing the reproducer's path; the committed corpus is never written (each
# run mutates a temporary copy).
#
# Usage: scripts/fuzz.sh [--seconds=N] [--target=NAME]... [--jobs=N] [--build-dir=DIR]
#                        [--max-len=BYTES] [--opt-level=N] [--no-build] [--regression-only]
#                        [--regenerate-corpus]
#   --seconds=N          fuzzing time per target (default 10; CI uses the default)
#   --target=NAME        only this target (repeatable; default: every folder in tests/fuzz/corpus)
#   --jobs=N             targets fuzzed at the same time (default 1)
#   --build-dir=DIR      build folder (default build-fuzz, or $WIPEPROOF_FUZZ_BUILD_DIR)
#   --max-len=BYTES      largest input tried (default: 8192, or the largest seed if bigger)
#   --opt-level=N        -O level of the build (default 1; CI uses 0: a third less compile time, and
#                        the inputs run slower; the label engine is -O2 either way)
#   --no-build           use the binaries already in the build folder
#   --regression-only    only replay the committed corpus (-runs=0)
#   --regenerate-corpus  rewrite the generated seeds (make_fuzz_corpus) before anything else
# Environment: WIPEPROOF_FUZZ_CC / WIPEPROOF_FUZZ_CXX (default clang-15 / clang++-15, else clang).
# Reproduce a crash: <build-dir>/tests/fuzz/<target> <reproducer file>
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=10
jobs=1
build=${WIPEPROOF_FUZZ_BUILD_DIR:-build-fuzz}
max_len=""
opt_level=1
do_build=1
regression_only=0
regenerate=0
targets=()
for arg in "$@"; do
  case "$arg" in
    --seconds=*) seconds=${arg#*=} ;;
    --target=*) targets+=("${arg#*=}") ;;
    --jobs=*) jobs=${arg#*=} ;;
    --build-dir=*) build=${arg#*=} ;;
    --max-len=*) max_len=${arg#*=} ;;
    --opt-level=*) opt_level=${arg#*=} ;;
    --no-build) do_build=0 ;;
    --regression-only) regression_only=1 ;;
    --regenerate-corpus) regenerate=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$seconds" =~ ^[0-9]+$ && "$jobs" =~ ^[1-9][0-9]*$ && "$opt_level" =~ ^[0-3]$ ]] ||
  { echo "fuzz.sh: --seconds and --jobs take numbers, --opt-level 0 to 3" >&2; exit 2; }
[[ -z "${max_len:-}" || "$max_len" =~ ^[1-9][0-9]{0,8}$ ]] ||
  { echo "fuzz.sh: --max-len takes a number of bytes (1 to 999999999)" >&2; exit 2; }

corpus_root=tests/fuzz/corpus
if [[ ${#targets[@]} -eq 0 ]]; then
  for d in "$corpus_root"/*/; do targets+=("$(basename "$d")"); done
fi
for t in "${targets[@]}"; do
  [[ -d "$corpus_root/$t" ]] || { echo "fuzz.sh: no target '$t' (no folder $corpus_root/$t)" >&2; exit 2; }
done

if [[ $do_build -eq 1 ]]; then
  cc=${WIPEPROOF_FUZZ_CC:-$(command -v clang-15 || command -v clang || true)}
  cxx=${WIPEPROOF_FUZZ_CXX:-$(command -v clang++-15 || command -v clang++ || true)}
  [[ -n "$cc" && -n "$cxx" ]] || { echo "fuzz.sh: clang not found (scripts/setup-deps.sh installs clang-15)" >&2; exit 1; }
  launcher=()
  if command -v ccache > /dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  # -O1 and line tables: fast enough to fuzz, quick to build, readable stack traces. Debug keeps
  # assert() on (RelWithDebInfo would define NDEBUG).
  flags="-O$opt_level -gline-tables-only"
  mkdir -p "$build"
  cmake -S . -B "$build" -G Ninja -DWIPEPROOF_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    "-DCMAKE_C_FLAGS_DEBUG=$flags" "-DCMAKE_CXX_FLAGS_DEBUG=$flags" \
    -DWIPEPROOF_CUDA=OFF -DWIPEPROOF_HIP=OFF "${launcher[@]}" > "$build/fuzz-configure.log" 2>&1 ||
    { cat "$build/fuzz-configure.log" >&2; exit 1; }
  build_targets=("${targets[@]}")
  [[ $regenerate -eq 1 ]] && build_targets+=(make_fuzz_corpus)
  cmake --build "$build" -j "$(nproc)" --target "${build_targets[@]}"
fi
if [[ $regenerate -eq 1 ]]; then
  "$build/tests/fuzz/make_fuzz_corpus" "$corpus_root"
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
common=(-rss_limit_mb=2048 -timeout=10 -print_final_stats=0)

for t in "${targets[@]}"; do
  [[ -x "$build/tests/fuzz/$t" ]] ||
    { echo "fuzz.sh: no binary $build/tests/fuzz/$t (build it: drop --no-build, or check --build-dir)" >&2; exit 2; }
done

# 1. Every committed input once: crashes found earlier and added to the corpus stay fixed.
failed=()
for t in "${targets[@]}"; do
  if ! "$build/tests/fuzz/$t" -runs=0 "${common[@]}" "$corpus_root/$t" > "$build/fuzz-$t.regression.log" 2>&1; then
    echo "fuzz.sh: $t: its committed corpus crashes it:" >&2
    tail -n 40 "$build/fuzz-$t.regression.log" >&2
    failed+=("$t")
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: FAILED (corpus replay): ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: corpus replay passed for ${#targets[@]} targets"
[[ $regression_only -eq 1 || $seconds -eq 0 ]] && exit 0

# 2. Fuzz each target for $seconds on a temporary copy of its corpus; reproducers go to
# $build/fuzz-artifacts/<target>/.
work=$(mktemp -d "${TMPDIR:-/tmp}/wipeproof-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
run_one() {
  local t=$1 len=$max_len
  local corpus="$work/$t" artifacts="$build/fuzz-artifacts/$t/" log="$build/fuzz-$t.log"
  mkdir -p "$corpus" "$artifacts"
  cp "$corpus_root/$t"/* "$corpus/"
  if [[ -z "$len" ]]; then
    len=$(find "$corpus_root/$t" -type f -printf '%s\n' | sort -n | tail -n 1)
    (( len < 8192 )) && len=8192
  fi
  if "$build/tests/fuzz/$t" -max_total_time="$seconds" -max_len="$len" "${common[@]}" \
       -artifact_prefix="$artifacts" "$corpus" > "$log" 2>&1; then
    echo "fuzz.sh: $t: ok ($(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$log" | tail -n 1 || true))"
    return 0
  fi
  echo "fuzz.sh: $t: FAILED; last lines of $log:" >&2
  tail -n 60 "$log" >&2
  local reproducer
  reproducer=$(grep -Eo '(Test unit|artifact) written to [^ ]+' "$log" | tail -n 1 | awk '{print $NF}' || true)
  echo "fuzz.sh: $t: reproducer: ${reproducer:-none written (see the log)}; run: $build/tests/fuzz/$t ${reproducer:-FILE}" >&2
  return 1
}
for t in "${targets[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n || true; done
  ( if run_one "$t"; then echo ok > "$work/$t.status"; fi ) &
done
wait
failed=()
for t in "${targets[@]}"; do
  [[ -f "$work/$t.status" ]] || failed+=("$t")
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets fuzzed for ${seconds} s each, no crash"
