#!/usr/bin/env bash
# scripts/gpu-check.sh without a GPU: its step, timeout and JSON logic run against a fake
# wipeproof-gpu-check (one step passes, one fails, one crashes without JSON, one hangs after a
# partial JSON and is killed, later ones find the budget spent), and its plain-nvcc source list is
# checked against the CMakeLists of the targets it replaces.
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

# --- steps, timeouts and JSON against a fake binary ----------------------------------------------
cat > "$tmp/fake" <<'FAKE'
#!/usr/bin/env bash
json=
step=
for a in "$@"; do
  case $a in --json=*) json=${a#--json=} ;; --*) ;; *) [[ -z $step ]] && step=$a ;; esac
done
case $step in
  info) echo '{"step": "info", "status": "ok"}' > "$json" ;;
  compress) echo "MODEL-VS-MEASURED CompressChain fake: measured 1, modelled 2" >&2
            echo '{"step": "compress", "status": "ok"}' > "$json" ;;
  parity) echo '{"step": "parity", "status": "fail"}' > "$json"; exit 1 ;;
  fill) if [[ " $* " == *" --m=131072 "* && " $* " == *" --format=c1 "* ]]; then
          echo '{"step": "fill", "status": "partial", "launches": [{"launch": 0}]}' > "$json"
          exec sleep 60  # killed by the script's timeout
        fi
        echo '{"step": "fill", "status": "ok"}' > "$json" ;;
  lookup) echo "lookup crashed" >&2; exit 3 ;;
  *) exit 2 ;;
esac
FAKE
chmod +x "$tmp/fake"
start=$(date +%s)
WIPEPROOF_GPU_CHECK_BIN="$tmp/fake" WIPEPROOF_GPU_CHECK_RUNTIME=cuda WIPEPROOF_GPU_CHECK_TIME_SCALE=0.05 \
  WIPEPROOF_GPU_CHECK_BUDGET_S=10 "$root/scripts/gpu-check.sh" "$tmp/out" > "$tmp/stdout" 2> "$tmp/stderr"
rc=$?
took=$(( $(date +%s) - start ))
check "the script exits 0 whatever its steps did" [ $rc -eq 0 ]
check "it stays within its budget (took $took s)" [ $took -le 16 ]
summary=$(cat "$tmp/out/summary.json" 2> /dev/null)
status_of() { echo "$summary" | grep -o "\"step\": \"$1\", \"status\": \"[a-z_]*\"" | sed 's/.*"status": "//; s/"$//'; }
check "info ok" [ "$(status_of 01-info)" == ok ]
check "compress ok" [ "$(status_of 02-compress)" == ok ]
check "a failing parity is recorded as fail" [ "$(status_of 03-parity)" == fail ]
check "a fill killed mid-run is timeout_partial" [ "$(status_of 04-fill-c1-m17)" == timeout_partial ]
check "the killed fill's partial JSON is kept" grep -q '"launches"' "$tmp/out/04-fill-c1-m17.json"
check "a step the budget cannot hold is skipped" grep -q '"status": "skipped"' "$tmp/out/summary.json"
for f in "$tmp"/out/0[5-8]-*.json; do
  if grep -q '"status": "error"' "$f"; then
    check "a crash without JSON gets one with the stderr tail" grep -q 'lookup crashed' "$f"
  fi
done
check "model-vs-measured collects the binary's lines" grep -q 'CompressChain fake: measured 1, modelled 2' \
  "$tmp/out/model-vs-measured.txt"
check "the summary is printed on stdout" grep -q '"steps"' "$tmp/stdout"
exit $fail
