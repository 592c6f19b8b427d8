#!/usr/bin/env bash
# The one script a GPU machine runs first (docs/building.md, docs/benchmarks.md). It builds
# wipeproof-gpu-check with nothing but CMake and the GPU compiler (WIPEPROOF_GPU_MINIMAL), or with
# plain nvcc when CMake is older than the project needs or its build fails (then once more with
# -allow-unsupported-compiler: the likeliest failure on a fresh machine is nvcc refusing the host
# compiler), records every kernel's registers and spills (ptxas -v, HIP resource remarks), then
# runs its steps under `timeout`, cheapest and most telling first, within one budget (default
# 450 s, build included: one 10-minute call with room left for a rerun). It stops after `info`
# when that sees no device. Every fill plans launches of about 20 s (--launch-seconds), so a step
# cut by its cap still records launches. Each step writes its JSON to the output folder as it
# goes (the binary rewrites it after the raw-rate run, after memory acquisition and after every
# fill launch); the script records a failed, crashed, timed-out or skipped step and carries on,
# rewrites summary.json after every step, samples the SM clock (nvidia-smi) during the whole run,
# and ends by printing the model's predictions beside the measurements.
#
# Usage: scripts/gpu-check.sh [OUT_DIR]        (default: $OUT, else ./gpu-check-out)
# Env:   WIPEPROOF_GPU_CHECK_BUDGET_S=450      total seconds, build included
#        WIPEPROOF_GPU_CHECK_RUNTIME=cuda      or hip (ROCm in /opt/rocm); emulated or dry-run run on
#                                              the CPU (to try the script without a GPU)
#        WIPEPROOF_GPU_CHECK_BUILD=auto        cmake | nvcc (plain nvcc, no CMake) | auto (cmake when
#                                              it is new enough, else nvcc)
#        WIPEPROOF_GPU_CHECK_BIN=PATH          use this binary, build nothing
#        WIPEPROOF_GPU_CHECK_STEPS="..."       run only these steps (names below, space-separated)
#        WIPEPROOF_GPU_CHECK_TIME_SCALE=1      multiplies every step's time caps (tests use < 1)
#        WIPEPROOF_CUDA_ARCH=90                digits only; default: from nvidia-smi, else 90
#        WIPEPROOF_HIP_ARCH=gfx942             default: from rocminfo
#        WIPEPROOF_NVCC=PATH                   default: nvcc on PATH, then /usr/local/cuda,
#                                              /usr/local/cuda-*, the NVIDIA HPC SDK, /usr/bin
# Steps (NN-name.json, in this order, each with its cap in seconds): 00-build, 01-info (30),
# 02-compress (40: CompressChain at 1/2/4/8 warps per SM sub-partition and full), 03-parity (90:
# m <= 2^14, both formats), 04-fill-c1-m17 (150: all memory), 05-lookup (45), 06-fill-192-m17
# (90: all memory, the launches that fit), 07-fill-c1-m14 (90: all memory), 08-parity-m17 (90),
# 09-fill-c1-m17-slots2 (150) and 10-fill-192-m17-slots2 (90): 04 and 06 with launches of twice the
# teams that fit (--teams-per-slot=2); then summary.json and model-vs-measured.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-gpu-check-out}}
mkdir -p "$out"
start=$(date +%s)
budget=${WIPEPROOF_GPU_CHECK_BUDGET_S:-450}
runtime=${WIPEPROOF_GPU_CHECK_RUNTIME:-cuda}
build_mode=${WIPEPROOF_GPU_CHECK_BUILD:-auto}
scale=${WIPEPROOF_GPU_CHECK_TIME_SCALE:-1}
only=${WIPEPROOF_GPU_CHECK_STEPS:-}
launch_seconds=20
build=build-gpucheck
bin=${WIPEPROOF_GPU_CHECK_BIN:-$build/prover/bench/wipeproof-gpu-check}
summary=()
clock_pid=
# CUDA numbers devices fastest first by default; nvidia-smi numbers them by PCI bus id. The same
# order makes the clock sampler's device 0 the one the steps run on.
export CUDA_DEVICE_ORDER=PCI_BUS_ID

elapsed() { echo $(( $(date +%s) - start )); }
left() { echo $(( budget - $(elapsed) )); }
scaled() { awk -v s="$1" -v k="$scale" 'BEGIN { v = int(s * k); print (v < 1 ? 1 : v) }'; }
log() { echo "[gpu-check +$(elapsed)s] $*" | tee -a "$out/gpu-check.log" >&2; }
json_escape() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\t'/ }; printf '%s' "${s//$'\n'/\\n}"; }
write_summary() {
  printf '{"budget_s": %s, "elapsed_s": %s, "runtime": "%s", "steps": [%s]}\n' "$budget" "$(elapsed)" "$runtime" \
    "$(IFS=,; echo "${summary[*]}")" > "$out/summary.json.tmp" && mv "$out/summary.json.tmp" "$out/summary.json"
}
record() {  # name status rc seconds
  summary+=("{\"step\": \"$1\", \"status\": \"$2\", \"exit_code\": $3, \"seconds\": $4}")
  write_summary
}
wanted() { [[ -z $only || " $only " == *" $1 "* ]]; }
finish() {
  [[ -n $clock_pid ]] && kill "$clock_pid" 2> /dev/null
  write_summary
  # The binary prints one MODEL-VS-MEASURED line per comparison on stderr.
  {
    echo "model vs measured (modelled figures from prover/backends/gpu/fill_model.h; see docs/benchmarks.md)"
    grep -h '^MODEL-VS-MEASURED' "$out"/*.stderr 2> /dev/null | sed 's/^MODEL-VS-MEASURED //' || true
  } > "$out/model-vs-measured.txt"
  log "done in $(elapsed) s"
  cat "$out/model-vs-measured.txt" >&2
  cat "$out/summary.json"
}
trap 'finish; exit 130' INT TERM

# The nvcc to build with: $WIPEPROOF_NVCC, PATH, then where toolkits install themselves (newest
# versioned toolkit first). CMake alone looks only on PATH and in /usr/local/cuda.
find_nvcc() {
  local c
  for c in "${WIPEPROOF_NVCC:-}" "$(command -v nvcc 2> /dev/null)" /usr/local/cuda/bin/nvcc \
           $(ls -d /usr/local/cuda-*/bin/nvcc 2> /dev/null | sort -rV) \
           $(ls -d /opt/nvidia/hpc_sdk/Linux_*/*/cuda/bin/nvcc /opt/nvidia/hpc_sdk/Linux_*/*/cuda/*/bin/nvcc \
                   /opt/nvidia/hpc_sdk/Linux_*/*/compilers/bin/nvcc 2> /dev/null | sort -rV) /usr/bin/nvcc; do
    [[ -n $c && -x $c ]] && { echo "$c"; return 0; }
  done
  return 1
}
nvcc_bin=
[[ $runtime != hip ]] && nvcc_bin=$(find_nvcc)

# Registers and spills per kernel, as JSON objects, from a build log holding ptxas -v lines (CUDA)
# or clang's kernel-resource-usage remarks (HIP). Prints "[...], SPILLS" (SPILLS: true or false).
kernel_resources() {
  awk '
    function short(n) {
      if (n ~ /FillKernelILi0E/) return "FillKernel<c1>"
      if (n ~ /FillKernelILi1E/) return "FillKernel<192>"
      if (match(n, /(CompressChain|Lookup|BuildCv0)Kernel/)) return substr(n, RSTART, RLENGTH)
      return n
    }
    function emit() {
      if (name == "") return
      printf "%s{\"kernel\": \"%s\", \"arch\": \"%s\", \"registers\": %d, \"spill_store_bytes\": %d, \"spill_load_bytes\": %d, \"scratch_bytes_per_lane\": %d}", (n++ ? ", " : ""), short(name), arch, regs, st, ld, scratch
      if (st > 0 || ld > 0 || scratch > 0) spills = 1
      name = ""
    }
    /Compiling entry function/ { emit(); name = $0; sub(/.*function \047/, "", name); sub(/\047.*/, "", name)
                                 arch = $0; sub(/.* for \047/, "", arch); sub(/\047.*/, "", arch); regs = st = ld = scratch = 0 }
    /bytes spill stores/ { for (i = 1; i <= NF; ++i) { if ($(i+1) == "bytes" && $(i+2) == "spill" && $(i+3) == "stores,") st = $i
                                                       if ($(i+1) == "bytes" && $(i+2) == "spill" && $(i+3) == "loads") ld = $i } }
    /ptxas info.*Used [0-9]+ registers/ { for (i = 1; i <= NF; ++i) if ($i == "Used") regs = $(i+1); emit() }
    /remark: Function Name:/ { emit(); name = $0; sub(/.*Function Name: /, "", name); sub(/ \[.*/, "", name); arch = "hip"
                               regs = st = ld = scratch = 0 }
    /remark: +VGPRs: / { v = $0; sub(/.*VGPRs: /, "", v); regs = v + 0 }
    /remark: +ScratchSize \[bytes\/lane\]: / { v = $0; sub(/.*lane\]: /, "", v); scratch = v + 0 }
    /remark: +VGPRs Spill: / { v = $0; sub(/.*Spill: /, "", v); st += v + 0 }
    /remark: +SGPRs Spill: / { v = $0; sub(/.*Spill: /, "", v); st += v + 0 }
    /remark: +LDS Size/ { emit() }
    END { emit(); printf "], %s", (spills ? "true" : "false") }
    BEGIN { printf "[" }
  ' "$1"
}

# --- what ran where ----------------------------------------------------------------------------
{
  echo "{\"commit\": \"$(git rev-parse HEAD 2> /dev/null || echo unknown)\","
  echo " \"dirty\": $( [[ -n $(git status --porcelain 2> /dev/null | grep -v '^??') ]] && echo true || echo false ),"
  echo " \"date_utc\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
  echo " \"host\": \"$(json_escape "$(hostname)")\","
  echo " \"nproc\": $(nproc),"
  echo " \"runtime\": \"$runtime\","
  echo " \"cmake\": \"$(json_escape "$(cmake --version 2> /dev/null | head -1)")\","
  echo " \"nvcc_path\": \"$(json_escape "$nvcc_bin")\","
  echo " \"nvcc\": \"$(json_escape "$( [[ -n $nvcc_bin ]] && "$nvcc_bin" --version 2> /dev/null | tail -1)")\","
  echo " \"gpus\": \"$(json_escape "$(nvidia-smi --query-gpu=name,pci.bus_id,memory.total,memory.used,driver_version,compute_cap,clocks.max.sm --format=csv,noheader 2> /dev/null)")\"}"
} > "$out/meta.json"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true

# --- build -------------------------------------------------------------------------------------
# Sources of wipeproof-gpu-check for the plain nvcc build (the CMake targets wp_common, wp_kernels,
# wp_gpu_kernels, wp_gpu_cuda, wp_gpu_region and wipeproof-gpu-check; tests/system/
# gpu_check_script_test.sh checks this list against the CMakeLists).
plain_sources=(
  common/status.cc common/hex.cc common/clock.cc common/file_write.cc common/json_nesting.cc common/numbers.cc
  common/peer_text.cc common/progress_line.cc common/terminal_text.cc
  kernels/graph_schedule.cc kernels/exclusive_chains.cc kernels/graph_metrics.cc kernels/label_spec.cc kernels/chunk_batch_labeler.cc
  kernels/chunk_labeler.cc kernels/chunk_verifier.cc kernels/cv0_cache.cc kernels/region_labeler.cc
  kernels/simd/hash16.cc
  kernels/gpu/device_program.cc kernels/gpu/lane_replay.cc kernels/gpu/gpu_shapes.cc kernels/gpu/session_constants.cc
  kernels/gpu/emulated_runtime.cc
  prover/backends/gpu/memory_acquisition.cc prover/backends/gpu/fill_passes.cc prover/backends/gpu/fill_plan.cc
  prover/backends/gpu/label_layout.cc
  prover/backends/gpu/device_region.cc prover/backends/gpu/fill_model.cc prover/backends/gpu/lookup_model.cc
  prover/bench/gpu_check_main.cc prover/bench/gpu_check_model.cc
)
plain_nvcc_build() {  # arch nvcc [extra nvcc flags...]
  local arch=$1 nvcc=$2 obj=$build/plain jobs; shift 2
  jobs=$(nproc)
  mkdir -p "$obj"
  local cxx=${CXX:-c++} common_flags=(-std=c++17 -O2 -DNDEBUG -I. -DWIPEPROOF_HAVE_CUDA=1)
  local simd=0
  [[ $(uname -m) == x86_64 ]] && simd=1
  {
    for f in "${plain_sources[@]}"; do
      local extra=""
      [[ $f == kernels/* && $f != kernels/gpu/* && $simd == 1 ]] && extra="-DWIPEPROOF_HAVE_X86_SIMD=1"
      echo "$cxx ${common_flags[*]} -fPIC -pthread $extra -c $f -o $obj/$(echo "$f" | tr / _).o"
    done
    if [[ $simd == 1 ]]; then
      echo "$cxx ${common_flags[*]} -fPIC -DWIPEPROOF_HAVE_X86_SIMD=1 -mavx2 -O3 -Wno-psabi -c kernels/simd/hash16_avx2.cc -o $obj/avx2.o"
      echo "$cxx ${common_flags[*]} -fPIC -DWIPEPROOF_HAVE_X86_SIMD=1 -mavx512f -O3 -c kernels/simd/hash16_avx512.cc -o $obj/avx512.o"
    fi
    echo "$nvcc ${common_flags[*]} $* -Xptxas -v -lineinfo '--generate-code=arch=compute_$arch,code=[compute_$arch,sm_$arch]' -Xcompiler=-fPIC -x cu -c kernels/gpu/label_kernels.cu -o $obj/label_kernels.o"
  } > "$obj/commands.txt"
  # Each line runs on its own; any failure fails the build.
  xargs -P "$jobs" -I{} sh -c '{}' < "$obj/commands.txt" &&
    mkdir -p "$(dirname "$bin")" &&
    "$nvcc" "$@" -o "$bin" "$obj"/*.o -cudart static -lpthread
}

arch=${WIPEPROOF_CUDA_ARCH:-}
if [[ -z $arch ]] && command -v nvidia-smi > /dev/null; then
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | head -1 | tr -d ' .')
fi
if [[ -n $arch && ! $arch =~ ^[0-9]{2,3}$ ]]; then
  log "ignoring CUDA architecture '$(json_escape "$arch")': not 2-3 digits; building for 90"
  arch=
fi
arch=${arch:-90}
attempts=()
join_comma() { (( $# )) || return 0; local first=$1; shift; printf '%s' "$first" "${@/#/, }"; }
attempt() {  # mode exit_code seconds
  attempts+=("{\"mode\": \"$1\", \"exit_code\": $2, \"seconds\": $3}")
}
if [[ -n ${WIPEPROOF_GPU_CHECK_BIN:-} ]]; then
  log "using $bin (no build)"
  echo "{\"step\": \"build\", \"status\": \"skipped\", \"binary\": \"$(json_escape "$bin")\"}" > "$out/00-build.json"
  record build skipped 0 0
else
  t0=$(date +%s)
  build_rc=0
  cmake_version=$(cmake --version 2> /dev/null | head -1 | grep -o '[0-9]\+\.[0-9]\+' | head -1)
  need=$(grep -o 'cmake_minimum_required(VERSION [0-9.]*' CMakeLists.txt | grep -o '[0-9][0-9.]*')
  if [[ $build_mode == auto ]]; then
    build_mode=nvcc
    if [[ -n $cmake_version ]] && [[ $(printf '%s\n%s\n' "$need" "$cmake_version" | sort -V | head -1) == "$need" ]]; then
      build_mode=cmake
    fi
    [[ $runtime == hip ]] && build_mode=cmake  # the plain build is CUDA only
  fi
  : > "$out/build.log"
  if [[ $runtime == cuda && -z $nvcc_bin ]]; then
    log "no nvcc found (WIPEPROOF_NVCC, PATH, /usr/local/cuda*, /opt/nvidia/hpc_sdk, /usr/bin)"
    build_rc=127
  elif [[ $build_mode == cmake ]]; then
    log "building with cmake (cmake $cmake_version, project needs $need; ${nvcc_bin:-no nvcc}; arch $arch)"
    gen=()
    command -v ninja > /dev/null && gen=(-G Ninja)
    if [[ $runtime == hip ]]; then
      # An official ROCm (docs/building.md): its clang, and the device's gfx target from rocminfo.
      backend_flags=(-DWIPEPROOF_CUDA=OFF -DWIPEPROOF_HIP=ON "-DCMAKE_HIP_FLAGS=-Rpass-analysis=kernel-resource-usage")
      if [[ -z ${HIPCXX:-} && -x /opt/rocm/llvm/bin/clang++ ]]; then
        backend_flags+=(-DCMAKE_HIP_COMPILER=/opt/rocm/llvm/bin/clang++ -DCMAKE_HIP_COMPILER_ROCM_ROOT=/opt/rocm
                        -DCMAKE_PREFIX_PATH=/opt/rocm)
      fi
      hip_arch=${WIPEPROOF_HIP_ARCH:-$(rocminfo 2> /dev/null | grep -om1 'gfx[0-9a-f]\+')}
      [[ -n $hip_arch ]] && backend_flags+=(-DCMAKE_HIP_ARCHITECTURES="$hip_arch")
      arch=${hip_arch:-default}
    elif [[ $runtime == cuda ]]; then
      # CUDA forced on with the nvcc found: without it CMake drops CUDA when nvcc is not on PATH
      # and every step would report no_device.
      backend_flags=(-DWIPEPROOF_HIP=OFF -DWIPEPROOF_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc_bin"
                     -DCMAKE_CUDA_ARCHITECTURES="$arch" "-DCMAKE_CUDA_FLAGS=-Xptxas=-v")
    else
      backend_flags=(-DWIPEPROOF_HIP=OFF)
    fi
    s0=$(date +%s)
    rc=0
    timeout "$(scaled 120)" cmake -S . -B "$build" "${gen[@]}" -DWIPEPROOF_GPU_MINIMAL=ON -DCMAKE_BUILD_TYPE=Release \
      "${backend_flags[@]}" >> "$out/build.log" 2>&1 &&
      timeout "$(scaled 200)" cmake --build "$build" -j "$(nproc)" --target wipeproof-gpu-check >> "$out/build.log" 2>&1 ||
      rc=$?
    attempt cmake "$rc" $(( $(date +%s) - s0 ))
    build_rc=$rc
  fi
  if [[ $runtime != hip && -n $nvcc_bin ]] && { [[ $build_mode == nvcc ]] || (( build_rc != 0 )); }; then
    # The plain build; after a failed one (CMake's or its own), once more accepting any host
    # compiler (nvcc refuses host compilers newer than it knows).
    modes=(nvcc nvcc-allow-unsupported-compiler)
    (( build_rc != 0 )) && modes=(nvcc-allow-unsupported-compiler)
    for mode in "${modes[@]}"; do
      extra=()
      [[ $mode == nvcc-allow-unsupported-compiler ]] && extra=(-allow-unsupported-compiler)
      log "building with $mode ($nvcc_bin; arch $arch)"
      s0=$(date +%s)
      rc=0
      timeout "$(scaled 240)" bash -c "$(declare -f plain_nvcc_build); $(declare -p plain_sources build bin); plain_nvcc_build $arch $nvcc_bin ${extra[*]}" \
        >> "$out/build.log" 2>&1 || rc=$?
      attempt "$mode" "$rc" $(( $(date +%s) - s0 ))
      build_rc=$rc
      build_mode=$mode
      (( rc == 0 )) && break
    done
  fi
  t1=$(date +%s)
  status=ok
  [[ $build_rc -ne 0 || ! -x $bin ]] && status=fail
  resources=$(kernel_resources "$out/build.log")
  kernels=${resources%, *}
  spills=${resources##*, }
  echo "{\"step\": \"build\", \"status\": \"$status\", \"mode\": \"$build_mode\", \"exit_code\": $build_rc, \"seconds\": $((t1 - t0)), \"arch\": \"$(json_escape "$arch")\", \"nvcc\": \"$(json_escape "$nvcc_bin")\", \"attempts\": [$(join_comma "${attempts[@]}")], \"kernels\": $kernels, \"spills\": $spills}" > "$out/00-build.json"
  record build "$status" "$build_rc" $((t1 - t0))
  [[ $spills == true ]] && log "WARNING: a kernel spills registers (00-build.json \"kernels\")"
  if [[ $status != ok ]]; then
    log "build failed (rc $build_rc); see build.log"
    tail -30 "$out/build.log" >&2
    finish
    exit 1
  fi
fi

# --- the SM clock during the run ---------------------------------------------------------------
if command -v nvidia-smi > /dev/null && [[ $runtime == cuda ]]; then
  fields=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,memory.used,clocks_event_reasons.active
  nvidia-smi --query-gpu=$fields --format=csv -i 0 > /dev/null 2>&1 ||
    fields=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,memory.used
  nvidia-smi --query-gpu=$fields --format=csv -lms 500 -i 0 > "$out/clocks.csv" 2>&1 &
  clock_pid=$!
fi

# --- steps -------------------------------------------------------------------------------------
# step NAME CAP_S MIN_S -- ARGS...: runs the binary under `timeout` (CAP_S scaled, or what the budget
# leaves), skipping the step when less than MIN_S (scaled) is left. @LIMIT@ in ARGS becomes the
# seconds a fill may run before it cancels itself between launches (the cap less a margin).
last_status=
step() {
  local name=$1 cap min
  cap=$(scaled "$2")
  min=$(scaled "$3")
  shift 4
  last_status=
  wanted "$name" || return 0
  local remaining; remaining=$(left)
  if (( remaining < min )); then
    log "$name: skipped ($remaining s of budget left, needs $min)"
    echo "{\"step\": \"$name\", \"status\": \"skipped\", \"reason\": \"budget\", \"budget_left_s\": $remaining}" > "$out/$name.json"
    record "$name" skipped 0 0
    return 0
  fi
  local limit=$(( cap < remaining ? cap : remaining ))
  local args=("$@") margin=$(( limit / 5 ))
  (( margin > 20 )) && margin=20
  local inner=$(( limit - margin ))
  (( inner < 1 )) && inner=1
  for i in "${!args[@]}"; do args[$i]=${args[$i]//@LIMIT@/$inner}; done
  log "$name: ${args[*]} (timeout ${limit}s)"
  rm -f "$out/$name.json"
  local s0; s0=$(date +%s)
  timeout --kill-after=5 "$limit" "$bin" --runtime="$runtime" --json="$out/$name.json" "${args[@]}" \
    > "$out/$name.stdout" 2> "$out/$name.stderr"
  local rc=$? s1; s1=$(date +%s)
  local st
  case $rc in
    0) st=ok ;; 1) st=fail ;; 124|137) st=timeout ;; *) st=error ;;
  esac
  if [[ ! -s $out/$name.json ]]; then
    [[ $st == ok ]] && st=error
    echo "{\"step\": \"$name\", \"status\": \"$st\", \"exit_code\": $rc, \"seconds\": $((s1 - s0)), \"stderr_tail\": \"$(json_escape "$(tail -c 2000 "$out/$name.stderr")")\"}" > "$out/$name.json"
  elif grep -q '"status": "no_device"' "$out/$name.json"; then
    st=no_device
  elif [[ $st == timeout ]] && grep -q '"status": "partial"' "$out/$name.json"; then
    st=timeout_partial  # killed, but the figures up to its last checkpoint are in the JSON
  fi
  record "$name" "$st" "$rc" $((s1 - s0))
  log "$name: $st (rc $rc, $((s1 - s0)) s)"
  last_status=$st
}

cpu_runtime=0
[[ $runtime == emulated || $runtime == dry-run ]] && cpu_runtime=1
step 01-info 30 5 -- info
if [[ $last_status == no_device ]]; then
  log "no device: nothing else to run (see 01-info.json \"runtimes_tried\")"
  finish
  exit 0
fi
fill=(fill --gib=0 --time-limit=@LIMIT@ --launch-seconds=$launch_seconds)
[[ $runtime != dry-run ]] && step 02-compress 40 15 -- compress --seconds=0.5 --warps-per-subpartition=1,2,4,8,0
if [[ $runtime != dry-run ]]; then
  max_m=16384
  [[ $cpu_runtime == 1 ]] && max_m=1000
  step 03-parity 90 30 -- parity --max-m=$max_m
fi
if [[ $runtime != emulated ]]; then  # (emulated: 1 GiB on the CPU, far too slow for these)
  step 04-fill-c1-m17 150 60 -- "${fill[@]}" --m=131072 --format=c1 --samples=8
fi
lookup_gib=4
[[ $cpu_runtime == 1 ]] && lookup_gib=0.01  # (the emulated device has 1 GiB, labelled on one core)
[[ $runtime != dry-run ]] && step 05-lookup 45 20 -- lookup --gib=$lookup_gib --m=16384 --iterations=1000
if [[ $runtime != emulated ]]; then
  step 06-fill-192-m17 90 45 -- "${fill[@]}" --m=131072 --format=192 --samples=4
  step 07-fill-c1-m14 90 40 -- "${fill[@]}" --m=16384 --format=c1 --samples=24
fi
[[ $cpu_runtime == 0 ]] && step 08-parity-m17 90 45 -- parity --min-m=131072
if [[ $runtime != emulated ]]; then  # launches of twice the teams that fit (docs/benchmarks.md "Lookup placement")
  step 09-fill-c1-m17-slots2 150 60 -- "${fill[@]}" --m=131072 --format=c1 --samples=8 --teams-per-slot=2
  step 10-fill-192-m17-slots2 90 45 -- "${fill[@]}" --m=131072 --format=192 --samples=4 --teams-per-slot=2
fi
finish
