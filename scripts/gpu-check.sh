#!/usr/bin/env bash
# The one prepared GPU device check. Builds wipeproof-gpu-check with nothing but CMake and CUDA
# (WIPEPROOF_GPU_MINIMAL), then runs its steps cheapest first, each under `timeout`, writing one
# JSON file per step to the output folder as soon as the step ends; a failed, crashed or timed-out
# step is recorded and the script carries on. Whole run: under WIPEPROOF_GPU_CHECK_BUDGET_S
# (default 450 s, inside the 8-minute allowance), build included.
#
# Usage: scripts/gpu-check.sh [OUT_DIR]        (default: $OUT, else ./gpu-check-out)
# Env:   WIPEPROOF_CUDA_ARCH=90                 (default: from nvidia-smi, else 90)
#        WIPEPROOF_GPU_CHECK_BUDGET_S=450
#        WIPEPROOF_GPU_CHECK_SWEEP=1            (team-shape sweep if time is left; default 1)
#        WIPEPROOF_GPU_CHECK_RUNTIME=cuda       (or hip on an AMD machine with ROCm in /opt/rocm;
#                                               WIPEPROOF_HIP_ARCH=gfx942, default from rocminfo)
# Steps and files (NN-step.json): 00-build, 01-info, 02-parity, 03-fill-m14-16g, 04-lookup,
# 05-fill-m14-all, 06-fill-m17-c1-16g, 07-fill-m17-192-16g, 08-sweep-m14-r*, then summary.json.
# The 16 GiB fills also take 16 GiB beyond the plan (--extra-gib) so the main pass keeps its
# full-memory scratch there: their rate is the full fill's main-phase rate; 05 is end to end.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-gpu-check-out}}
mkdir -p "$out"
start=$(date +%s)
budget=${WIPEPROOF_GPU_CHECK_BUDGET_S:-450}
runtime=${WIPEPROOF_GPU_CHECK_RUNTIME:-cuda}
build=build-gpucheck
bin=$build/prover/bench/wipeproof-gpu-check
summary=()

elapsed() { echo $(( $(date +%s) - start )); }
left() { echo $(( budget - $(elapsed) )); }
log() { echo "[gpu-check +$(elapsed)s] $*" | tee -a "$out/gpu-check.log" >&2; }
json_escape() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '%s' "${s//$'\n'/\\n}"; }
record() {  # name status rc seconds
  summary+=("{\"step\": \"$1\", \"status\": \"$2\", \"exit_code\": $3, \"seconds\": $4}")
}

# --- what ran where ----------------------------------------------------------------------------
{
  echo "{\"commit\": \"$(git rev-parse HEAD 2>/dev/null || echo unknown)\","
  echo " \"dirty\": $( [[ -n $(git status --porcelain 2>/dev/null | grep -v '^??') ]] && echo true || echo false ),"
  echo " \"date_utc\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
  echo " \"host\": \"$(json_escape "$(hostname)")\","
  echo " \"nproc\": $(nproc),"
  echo " \"cmake\": \"$(json_escape "$(cmake --version 2>/dev/null | head -1)")\","
  echo " \"nvcc\": \"$(json_escape "$(nvcc --version 2>/dev/null | tail -1)")\","
  echo " \"gpus\": \"$(json_escape "$(nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version,compute_cap,clocks.max.sm --format=csv,noheader 2>/dev/null)")\"}"
} > "$out/meta.json"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || true

# --- minimal build -----------------------------------------------------------------------------
arch=${WIPEPROOF_CUDA_ARCH:-}
if [[ -z $arch ]] && command -v nvidia-smi > /dev/null; then
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
fi
arch=${arch:-90}
gen=()
command -v ninja > /dev/null && gen=(-G Ninja)
cuda_flags=()
[[ -x /usr/local/cuda/bin/nvcc ]] && ! command -v nvcc > /dev/null && cuda_flags=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
log "building (CUDA arch $arch)"
t0=$(date +%s)
build_rc=0
if [[ $runtime == hip ]]; then
  # An official ROCm (docs/building.md): its clang, and the device's gfx target from rocminfo.
  backend_flags=(-DWIPEPROOF_CUDA=OFF -DWIPEPROOF_HIP=ON)
  if [[ -z ${HIPCXX:-} && -x /opt/rocm/llvm/bin/clang++ ]]; then
    backend_flags+=(-DCMAKE_HIP_COMPILER=/opt/rocm/llvm/bin/clang++ -DCMAKE_HIP_COMPILER_ROCM_ROOT=/opt/rocm
                    -DCMAKE_PREFIX_PATH=/opt/rocm)
  fi
  hip_arch=${WIPEPROOF_HIP_ARCH:-$(rocminfo 2>/dev/null | grep -om1 'gfx[0-9a-f]\+')}
  [[ -n $hip_arch ]] && backend_flags+=(-DCMAKE_HIP_ARCHITECTURES="$hip_arch")
  arch=${hip_arch:-default}
else
  backend_flags=(-DWIPEPROOF_HIP=OFF -DCMAKE_CUDA_ARCHITECTURES="$arch")
fi
timeout 200 cmake -S . -B "$build" "${gen[@]}" -DWIPEPROOF_GPU_MINIMAL=ON -DCMAKE_BUILD_TYPE=Release \
  "${backend_flags[@]}" "${cuda_flags[@]}" > "$out/build.log" 2>&1 &&
  timeout 240 cmake --build "$build" -j "$(nproc)" --target wipeproof-gpu-check >> "$out/build.log" 2>&1 ||
  build_rc=$?
t1=$(date +%s)
status=ok
[[ $build_rc -ne 0 || ! -x $bin ]] && status=fail
echo "{\"step\": \"build\", \"status\": \"$status\", \"exit_code\": $build_rc, \"seconds\": $((t1 - t0)), \"cuda_arch\": \"$arch\"}" > "$out/00-build.json"
record build "$status" "$build_rc" $((t1 - t0))
if [[ $status != ok ]]; then
  log "build failed (rc $build_rc); see build.log"
  tail -30 "$out/build.log" >&2
  printf '{"steps": [%s]}\n' "$(IFS=,; echo "${summary[*]}")" > "$out/summary.json"
  exit 1
fi

# --- steps -------------------------------------------------------------------------------------
# step FILE CAP_S MIN_S -- ARGS...: runs the binary under `timeout` (CAP_S, or what the budget
# leaves), skipping the step when less than MIN_S is left. Fill steps also get --time-limit so
# they stop by themselves and still report a (partial) rate.
step() {
  local name=$1 cap=$2 min=$3
  shift 4
  local remaining; remaining=$(left)
  if (( remaining < min )); then
    log "$name: skipped ($remaining s of budget left, needs $min)"
    echo "{\"step\": \"$name\", \"status\": \"skipped\", \"reason\": \"budget\", \"budget_left_s\": $remaining}" > "$out/$name.json"
    record "$name" skipped 0 0
    return
  fi
  local limit=$(( cap < remaining ? cap : remaining ))
  local args=("$@")
  local inner=$(( limit - 15 ))
  (( inner < 5 )) && inner=5
  for i in "${!args[@]}"; do args[$i]=${args[$i]//@LIMIT@/$inner}; done
  log "$name: ${args[*]} (timeout ${limit}s)"
  local s0; s0=$(date +%s)
  timeout --kill-after=10 "$limit" "$bin" --runtime="$runtime" --json="$out/$name.json" "${args[@]}" \
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
  fi
  record "$name" "$st" "$rc" $((s1 - s0))
  log "$name: $st (rc $rc, $((s1 - s0)) s)"
}

step 01-info 30 10 -- info
step 02-parity 150 40 -- parity
step 03-fill-m14-16g 75 30 -- fill --gib=16 --extra-gib=16 --m=16384 --format=c1 --time-limit=@LIMIT@ --samples=24
step 04-lookup 60 25 -- lookup --gib=4 --m=16384 --iterations=1000
step 05-fill-m14-all 130 45 -- fill --gib=0 --m=16384 --format=c1 --time-limit=@LIMIT@ --samples=32
step 06-fill-m17-c1-16g 60 25 -- fill --gib=16 --extra-gib=16 --m=131072 --format=c1 --time-limit=@LIMIT@ --samples=8
step 07-fill-m17-192-16g 75 25 -- fill --gib=16 --extra-gib=16 --m=131072 --format=192 --time-limit=@LIMIT@ --samples=8
if [[ ${WIPEPROOF_GPU_CHECK_SWEEP:-1} == 1 ]]; then
  # Threads per chunk (docs/kernels.md): the planner's choice against fixed alternatives.
  for r in 4 16 64; do
    step "08-sweep-m14-r$r" 30 25 -- fill --gib=4 --extra-gib=8 --m=16384 --format=c1 --threads-per-chunk=$r --time-limit=@LIMIT@ --samples=2
  done
fi

printf '{"budget_s": %s, "elapsed_s": %s, "steps": [%s]}\n' "$budget" "$(elapsed)" "$(IFS=,; echo "${summary[*]}")" > "$out/summary.json"
log "done in $(elapsed) s"
cat "$out/summary.json"
