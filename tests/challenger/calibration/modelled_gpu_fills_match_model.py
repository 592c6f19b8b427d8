#!/usr/bin/env python3
"""The challenger's copy of the device model's fills (challenger/calibration/modelled_gpu_fills.cc,
printed by `plan --economics_p999_us=... --json` as economics.fill_model.figures) still matches the
model: `wipeproof-gpu-check model --gpu=all` is run and every figure the challenger carries must
name a case of it with the same memory and labels and a fill time within 3% of the model's device
part (its host setup, the program build timed on this machine, is left out: it grows with the
machine's load). When it fails, the kernels or
the model changed: rerun the command and copy its figures into modelled_gpu_fills.cc.

Usage: modelled_gpu_fills_match_model.py GPU_CHECK_BINARY CHALLENGER_BINARY
Exit status: 0 when every figure matches.
"""
import json
import subprocess
import sys

TOLERANCE = 0.03


def main():
    gpu_check, challenger = sys.argv[1], sys.argv[2]
    model = json.loads(subprocess.run([gpu_check, "model", "--gpu=all"], check=True, capture_output=True,
                                      text=True).stdout)
    cases = {}
    for case in model["cases"]:
        fmt, m = case["case"].split(" m=2^")
        cases[(case["gpu"], fmt, 1 << int(m))] = case
    plan = json.loads(subprocess.run([challenger, "plan", "--gpus=1", "--verify_rate=8e7", "--economics_p999_us=100",
                                      "--json"], check=True, capture_output=True, text=True).stdout)
    figures = plan["economics"]["fill_model"]["figures"]
    if not figures:
        print("FAIL: the challenger carries no modelled figure")
        return 1
    bad = 0
    for f in figures:
        fmt = {"posedb-blake3-c1": "c1", "posedb-blake3-192": "192"}[f["format"]]
        key = (f["shape"], fmt, f["chunk_labels"])
        case = cases.get(key)
        if case is None:
            print(f"FAIL: {key}: the model has no such case")
            bad += 1
            continue
        # The device's part: the model's host setup is timed on this machine (tenths of a second idle,
        # a second or more on a loaded CI core), which is no change of the model.
        want_s = case["model"]["predicted_total_s"] - case["model"].get("host_setup_s", 0)
        memory = case["model"]["assumptions"]["gpu"]["memory_bytes"]
        problems = []
        if f["memory_bytes"] != memory:
            problems.append(f"memory_bytes {f['memory_bytes']} != the model's {memory}")
        if f["labels"] != case["labels"]:
            problems.append(f"labels {f['labels']} != the model's {case['labels']}")
        if abs(f["fill_s"] / want_s - 1) > TOLERANCE:
            problems.append(f"fill_s {f['fill_s']} is more than {TOLERANCE:.0%} off the model's {want_s}")
        for p in problems:
            print(f"FAIL: {key}: {p}")
        bad += len(problems)
        if not problems:
            print(f"ok: {key}: {f['fill_s']} s, the model {want_s} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
