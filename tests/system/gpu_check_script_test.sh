#!/usr/bin/env bash
# scripts/gpu-check.sh without a GPU. Its plain-nvcc source list is checked against the CMakeLists
# of the targets it replaces; then the script runs in a scratch copy of the tree against fakes:
#  1. a fake wipeproof-gpu-check: steps in their order with their caps, a step that crashes
#     without JSON, a fill killed mid-run that keeps its partial JSON, the steps the budget cannot
#     hold skipped, the model lines collected;
#  2. a binary that sees no device: the script stops after `info`;
#  3. the build, with a fake cmake that fails and a fake nvcc that refuses the host compiler unless
#     told -allow-unsupported-compiler: CUDA forced on with the nvcc found, the plain build's retry,
#     registers and spills from ptxas -v in 00-build.json, a CUDA architecture that is not digits
#     replaced by 90.
# Usage: gpu_check_script_test.sh SOURCE_ROOT          Exit status 0 when every check passes.
set -uo pipefail
root=${1:?source root}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # description, then a command that must succeed
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}

# --- the plain nvcc build compiles what CMake builds for wipeproof-gpu-check ---------------------
listed=$(sed -n '/^plain_sources=(/,/^)/p' "$root/scripts/gpu-check.sh" | tr ' ' '\n' | grep '\.cc$' | sort)
cmake_sources() {  # folder, then the target's file list as it appears in the folder's CMakeLists.txt
  local dir=$1 target=$2
  sed -n "/^add_library($target STATIC/,/)/p; /^add_executable($target /,/)/p" "$root/$dir/CMakeLists.txt" |
    tr ' ()' '\n\n\n' | grep '\.cc$' | grep -v '^simd/hash16_avx' | sed "s|^|$dir/|"
}
expected=$( { cmake_sources common wp_common; cmake_sources kernels wp_kernels; cmake_sources kernels/gpu wp_gpu_kernels
              cmake_sources prover/backends/gpu wp_gpu_region; cmake_sources prover/bench wipeproof-gpu-check; } | sort)
check "the plain nvcc build lists the CMake targets' sources" [ "$listed" == "$expected" ]
[[ "$listed" == "$expected" ]] || diff <(echo "$expected") <(echo "$listed")

# A scratch copy of what the script reads, so its build folder and outputs stay out of the tree.
tree=$tmp/tree
mkdir -p "$tree/scripts"
cp "$root/scripts/gpu-check.sh" "$tree/scripts/"
cp "$root/CMakeLists.txt" "$tree/"
step_status() { grep -o "\"step\": \"$1\", \"status\": \"[a-z_]*\"" "$2" | sed 's/.*"status": "//; s/"$//'; }

# --- 1. steps, caps and JSON against a fake binary -----------------------------------------------
cat > "$tmp/fake" <<'FAKE'
#!/usr/bin/env bash
json=
step=
for a in "$@"; do
  case $a in --json=*) json=${a#--json=} ;; --*) ;; *) [[ -z $step ]] && step=$a ;; esac
done
echo "$step $*" >> "${FAKE_CALLS:-/dev/null}"
case $step in
  info) if [[ -n ${FAKE_NO_DEVICE:-} ]]; then echo '{"step": "info", "status": "no_device"}' > "$json"
        else echo '{"step": "info", "status": "ok"}' > "$json"; fi ;;
  compress) echo "MODEL-VS-MEASURED CompressChain fake: measured 1, modelled 2" >&2
            echo '{"step": "compress", "status": "ok"}' > "$json" ;;
  parity) echo "parity crashed" >&2; exit 3 ;;
  fill) if [[ " $* " == *" --m=131072 "* && " $* " == *" --format=c1 "* ]]; then
          echo '{"step": "fill", "status": "partial", "launches": [{"launch": 0}]}' > "$json"
          exec sleep 60  # killed by the script's timeout
        fi
        echo '{"step": "fill", "status": "ok"}' > "$json" ;;
  *) echo '{"status": "ok"}' > "$json" ;;
esac
FAKE
chmod +x "$tmp/fake"
start=$(date +%s)
FAKE_CALLS="$tmp/calls" WIPEPROOF_GPU_CHECK_BIN="$tmp/fake" WIPEPROOF_GPU_CHECK_RUNTIME=cuda \
  WIPEPROOF_GPU_CHECK_TIME_SCALE=0.05 WIPEPROOF_GPU_CHECK_BUDGET_S=6 \
  "$tree/scripts/gpu-check.sh" "$tmp/out" > "$tmp/stdout" 2> "$tmp/stderr"
rc=$?
took=$(( $(date +%s) - start ))
summary=$tmp/out/summary.json
check "the script exits 0 whatever its steps did" [ $rc -eq 0 ]
check "it stays within its budget (took $took s)" [ $took -le 12 ]
order=$(grep -o '"step": "[0-9a-z-]*"' "$summary" | sed 's/"step": //; s/"//g' | tr '\n' ' ')
check "the steps run cheapest first, lookup before the second full fill ($order)" \
  [ "$order" == "build 01-info 02-compress 03-parity 04-fill-c1-m17 05-lookup 06-fill-192-m17 07-fill-c1-m14 08-parity-m17 09-fill-c1-m17-slots2 10-fill-192-m17-slots2 " ]
check "info ok" [ "$(step_status 01-info "$summary")" == ok ]
check "compress ok" [ "$(step_status 02-compress "$summary")" == ok ]
check "a step that crashes without JSON is an error" [ "$(step_status 03-parity "$summary")" == error ]
check "and gets a JSON with the stderr tail" grep -q 'parity crashed' "$tmp/out/03-parity.json"
check "a fill killed mid-run is timeout_partial" [ "$(step_status 04-fill-c1-m17 "$summary")" == timeout_partial ]
check "the killed fill's partial JSON is kept" grep -q '"launches"' "$tmp/out/04-fill-c1-m17.json"
for s in 05-lookup 06-fill-192-m17 07-fill-c1-m14 08-parity-m17 09-fill-c1-m17-slots2 10-fill-192-m17-slots2; do
  check "$s, which the spent budget cannot hold, is skipped" [ "$(step_status $s "$summary")" == skipped ]
done
check "each step runs under its cap (info 30 s, compress 40 s, parity 90 s, scaled by 0.05)" \
  grep -q '01-info: info (timeout 1s)' "$tmp/stderr"
check "  compress's cap" grep -q '02-compress: compress .* (timeout 2s)' "$tmp/stderr"
check "  parity's cap" grep -q '03-parity: parity .* (timeout 4s)' "$tmp/stderr"
check "a fill plans launches of about 20 s and cancels itself before its cap" \
  grep -q '^fill .*--time-limit=[0-9]* --launch-seconds=20 --m=131072 --format=c1' "$tmp/calls"
check "model-vs-measured collects the binary's lines" grep -q 'CompressChain fake: measured 1, modelled 2' \
  "$tmp/out/model-vs-measured.txt"
check "the summary is printed on stdout" grep -q '"steps"' "$tmp/stdout"
check "CUDA numbers devices as nvidia-smi does" grep -q '^export CUDA_DEVICE_ORDER=PCI_BUS_ID' "$tree/scripts/gpu-check.sh"

# --- 2. no device: nothing after info -------------------------------------------------------------
FAKE_NO_DEVICE=1 FAKE_CALLS="$tmp/calls2" WIPEPROOF_GPU_CHECK_BIN="$tmp/fake" WIPEPROOF_GPU_CHECK_TIME_SCALE=0.05 \
  "$tree/scripts/gpu-check.sh" "$tmp/out2" > /dev/null 2> "$tmp/stderr2"
rc=$?
check "no device: exit 0" [ $rc -eq 0 ]
check "no device: info recorded as no_device" [ "$(step_status 01-info "$tmp/out2/summary.json")" == no_device ]
check "no device: no step after info runs" [ "$(cut -d' ' -f1 "$tmp/calls2" | tr '\n' ' ')" == "info " ]
check "no device: the log says why it stopped" grep -q 'no device: nothing else to run' "$tmp/stderr2"

# --- 3. the build: forced CUDA, the retry with -allow-unsupported-compiler, registers ------------
fakes=$tmp/fakebin
mkdir -p "$fakes"
cat > "$fakes/cmake" <<'CMAKE'
#!/usr/bin/env bash
if [[ ${1:-} == --version ]]; then echo "cmake version 3.25.1"; exit 0; fi
echo "$*" >> "$FAKE_CMAKE_ARGS"
echo "CMake Error: nvcc fatal : Host compiler targets unsupported OS." >&2
exit 1
CMAKE
cat > "$fakes/nvcc" <<'NVCC'
#!/usr/bin/env bash
echo "nvcc $*" >> "$FAKE_NVCC_CALLS"
if [[ ${1:-} == --version ]]; then echo "Cuda compilation tools, release 12.9, V12.9.41"; exit 0; fi
if [[ " $* " != *" -allow-unsupported-compiler "* ]]; then
  echo "error -- unsupported GNU version! gcc versions later than 13 are not supported!" >&2
  exit 1
fi
out=
while (( $# )); do [[ $1 == -o ]] && out=$2; shift; done
if [[ $out == *.o ]]; then
  cat >&2 <<'PTXAS'
ptxas info    : Compiling entry function '_ZN9wipeproof3gpu10FillKernelILi0EEEvNS0_12FillWaveArgsE' for 'sm_90'
ptxas info    : Function properties for _ZN9wipeproof3gpu10FillKernelILi0EEEvNS0_12FillWaveArgsE
    8 bytes stack frame, 4 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 64 registers, used 1 barriers
ptxas info    : Compiling entry function '_ZN9wipeproof3gpu10FillKernelILi1EEEvNS0_12FillWaveArgsE' for 'sm_90'
ptxas info    : Function properties for _ZN9wipeproof3gpu10FillKernelILi1EEEvNS0_12FillWaveArgsE
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 80 registers, used 1 barriers
PTXAS
  : > "$out"
else
  cp "$FAKE_GPU_CHECK" "$out" && chmod +x "$out"
fi
NVCC
cat > "$fakes/c++" <<'CXX'
#!/usr/bin/env bash
while (( $# )); do [[ $1 == -o ]] && : > "$2"; shift; done
CXX
chmod +x "$fakes"/*
FAKE_CMAKE_ARGS="$tmp/cmake_args" FAKE_NVCC_CALLS="$tmp/nvcc_calls" FAKE_GPU_CHECK="$tmp/fake" \
  PATH="$fakes:$PATH" CXX="$fakes/c++" WIPEPROOF_CUDA_ARCH='9.0; rm -rf /' WIPEPROOF_GPU_CHECK_STEPS=01-info \
  WIPEPROOF_GPU_CHECK_TIME_SCALE=0.5 "$tree/scripts/gpu-check.sh" "$tmp/out3" > /dev/null 2> "$tmp/stderr3"
rc=$?
build_json=$(cat "$tmp/out3/00-build.json" 2> /dev/null)
check "the build falls back and succeeds (rc $rc)" [ $rc -eq 0 ]
check "CMake is asked for CUDA with the nvcc found" \
  grep -q -- "-DWIPEPROOF_CUDA=ON -DCMAKE_CUDA_COMPILER=$fakes/nvcc" "$tmp/cmake_args"
check "meta.json names the nvcc found" grep -q "\"nvcc_path\": \"$fakes/nvcc\"" "$tmp/out3/meta.json"
check "after CMake failed, the plain build retries with -allow-unsupported-compiler" \
  grep -q '"mode": "nvcc-allow-unsupported-compiler"' <<< "$build_json"
check "both attempts are recorded" \
  grep -q '"attempts": \[{"mode": "cmake", "exit_code": 1, .*}, {"mode": "nvcc-allow-unsupported-compiler", "exit_code": 0' <<< "$build_json"
check "the kernel compile asks ptxas for its resource use" \
  grep -q -- '-allow-unsupported-compiler -Xptxas -v .*code=\[compute_90,sm_90\]' "$tmp/nvcc_calls"
check "registers per kernel are in 00-build.json" \
  grep -q '{"kernel": "FillKernel<192>", "arch": "sm_90", "registers": 80, "spill_store_bytes": 0' <<< "$build_json"
check "a spill is flagged" grep -q '"spills": true' <<< "$build_json"
check "and logged" grep -q 'WARNING: a kernel spills registers' "$tmp/stderr3"
check "a CUDA architecture that is not digits is replaced by 90" grep -q '"arch": "90"' <<< "$build_json"
check "and said so" grep -q "ignoring CUDA architecture '9.0; rm -rf /'" "$tmp/stderr3"
check "the built binary runs the steps" [ "$(step_status 01-info "$tmp/out3/summary.json")" == ok ]
exit $fail
