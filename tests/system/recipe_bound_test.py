#!/usr/bin/env python3
"""The recipe's port of the bound against the verdict's own code: docs/audit_recipe.py's joint_bound,
device_diagnostics and deadline_rule (with the honest round margin) against challenger/session/bound.cc
and challenger/parameters/deadline_rule.cc, as bound_cases prints them, on the edges (one device, a
device never checked, nothing planned, equal ratios P/N, 64-bit saturation, confidences near 0 and 1,
a deadline exactly at its floor) and on seeded random cases (400 bounds, 40 more with equal ratios,
300 rules; seed 22); its port of the occupancy statement (d(b), T* + U) against occupancy_bound.cc
on 5 edges and 300 seeded cases; its exclusive chains (every prefix sum, m from 1 to 4096) against
kernels/exclusive_chains.cc; and its compute statement (figures and words) against
compute_statement.cc on 3 edges and 120 seeded cases.

A stated bound passes the recipe when it is within bound_slack of the port's (bound.cc's padding and one
byte of ceiling), so that is what each case must meet; the totals, reserves and planned sums must be
equal, the per-device diagnostics within one byte, the rule's two answers equal. Also printed: how
many bounds matched to the byte.

Usage: recipe_bound_test.py BOUND_CASES_BIN SOURCE_ROOT [--cases=N] [--seed=S]
Exit status: 0 every case agrees; 1 one does not (named); 2 bad usage.
"""
import importlib.util
import os
import random
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
# The recipe imports PyNaCl (Debian's python3-nacl): another python3 first on PATH hands over to Debian's.
if importlib.util.find_spec("nacl") is None and os.path.exists("/usr/bin/python3") and \
        os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
    os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)

GIB = 1 << 30
U64 = (1 << 64) - 1


def load_recipe(root):
    sys.path.insert(0, os.path.join(root, "docs"))
    import audit_recipe  # pylint: disable=import-outside-toplevel
    return audit_recipe


def chunk_planned(rng, capacity):
    """Planned bytes as a plan makes them: whole chunks (32 * m bytes, m a power of two) below the capacity less a
    reserve; sometimes nothing, sometimes all of it."""
    pick = rng.random()
    if pick < 0.05:
        return 0
    if pick < 0.10:
        return capacity
    chunk = 32 << rng.randrange(0, 21)
    usable = capacity - rng.randrange(0, max(1, capacity // 20))
    return usable // chunk * chunk


def random_device(rng):
    kind = rng.random()
    if kind < 0.4:  # a GPU: 16-192 GiB
        capacity = rng.randrange(16 * GIB, 192 * GIB)
    elif kind < 0.6:  # host memory: 1 GiB - 4 TiB
        capacity = rng.randrange(GIB, 4096 * GIB)
    elif kind < 0.8:  # small: up to 1 MiB
        capacity = rng.randrange(1, 1 << 20)
    else:  # anywhere up to 2^62 (the diagnostics' ceil must fit 64 bits)
        capacity = rng.randrange(1, 1 << 62)
    planned = chunk_planned(rng, capacity)
    checked = 0 if rng.random() < 0.1 else int(10 ** rng.uniform(0, 5.5))
    return capacity, planned, checked


def random_confidence(rng):
    return rng.choice([0.9, 0.99, 0.999, 0.999999, 1 - 1e-12, 1e-9, 0.5, rng.random() or 0.5, rng.uniform(0.9, 1)
                       or 0.99])


def edge_bounds():
    """(confidence, [(capacity, planned, checked)]) at the edges of the closed form."""
    gpu = 80 * GIB
    return [
        (0.99, [(gpu, gpu - (512 << 20), 2048)]),                     # one device: M = P (1 - (1 - c)^(1/N))
        (0.99, [(gpu, gpu, 1)]),                                      # one chunk checked
        (0.99, [(gpu, gpu, 0)]),                                      # never checked: all of it
        (0.99, [(gpu, 0, 0)]),                                        # nothing planned
        (0.99, [(gpu, gpu, 1000), (gpu, gpu, 1000), (gpu, gpu, 1000)]),  # equal ratios: one pool
        (0.99, [(gpu, gpu, 1000), (2 * gpu, 2 * gpu, 2000)]),          # equal ratios, unequal sizes
        (0.99, [(gpu, gpu, 4000), (2 * GIB, 2 * GIB, 10), (gpu, gpu, 0)]),  # one unchecked among checked
        (0.999999, [(gpu, gpu, 500)] * 8),                            # eight like GPUs
        (1e-9, [(gpu, gpu, 500), (4096 * GIB, 4096 * GIB, 50)]),     # confidence near 0
        (1 - 1e-15, [(gpu, gpu, 500), (4096 * GIB, 4096 * GIB, 50)]),  # confidence near 1
        (0.99, [(U64, 0, 0), (U64, 1 << 40, 7)]),                     # reserves saturate 64 bits
        (0.99, [(U64, U64, 0), (U64, 1 << 61, 9)]),                    # planned sum and total saturate
    ]


def bound_line(confidence, devices):
    return f"bound {confidence.hex()} {len(devices)} " + " ".join(f"{c} {p} {n}" for c, p, n in devices)


def rule_cases(rng, count):
    """(m, format, t_min_ps, safety, round deadline us, honest p99.9 us): deadlines near the floor, some exactly
    on it."""
    cases = [(64, "c1", 4294967295, 1.5, 274877, 1000), (64, "c1", 1000000, 1.5, 64, 53),  # floor 64 us exactly
             (1024, "192", 40000, 2.0, 61, 51), (4096, "c1", 25000, 2.0, 77, 64), (1, "c1", 1, 1.0, 0, 0)]
    for _ in range(count):
        m = 1 << rng.randrange(0, 21)
        label_format = rng.choice(["c1", "192"])
        t_min = rng.randrange(1, 1 << 32)
        safety = rng.choice([1.0, 1.5, 2.0, rng.uniform(1, 4)])
        floor_us = 1.5 * m * (1 if label_format == "c1" else 2) * t_min / safety / 1e6
        if rng.random() < 0.5:
            deadline = max(0, int(floor_us) + rng.randrange(-2, 3))
        else:
            deadline = int(floor_us * rng.uniform(0.5, 1.5))
        honest = rng.choice([0, max(0, int(deadline / 1.2) + rng.randrange(-2, 3)), rng.randrange(0, 2 * deadline + 2)])
        cases.append((m, label_format, t_min, safety, deadline, honest))
    return cases


# m for the exclusive chains' port (the full prefix sums), and for the compute statements.
CHAIN_MS = [1, 2, 3, 5, 16, 17, 64, 100, 256, 1000, 4096]


def compute_line(m, label_format, confidence, bound_total, rate, isolated, ingress, interval, devices):
    return (f"compute {m} {label_format} {confidence.hex()} {bound_total} {rate.hex()} {isolated} {ingress} {interval} "
            f"{len(devices)} " + " ".join(f"{capacity} {count}" for capacity, count in devices))


def compute_cases(rng, count):
    """Compute statements: every way it states nothing (nothing held, ingress that brings everything, no
    interval) and seeded random plans, isolated or with an ingress, c1 and 192."""
    cases = [(64, "c1", 0.99, 1 << 40, 1e6, 1, 0, 2_000_000, [(41060, 640)]),
             (64, "c1", 0.99, 0, 1e6, 0, 1 << 40, 2_000_000, [(40960, 640)]),
             (64, "192", 0.99, 100, 1e6, 1, 0, 0, [(40960, 640)])]
    for _ in range(count):
        m = rng.choice([16, 17, 64, 100, 256])
        devices = []
        for _ in range(rng.randrange(1, 4)):
            labels = rng.randrange(1, 200) * m + rng.choice([0, 0, rng.randrange(0, m)])
            devices.append((32 * labels + rng.randrange(0, 5000), labels))
        reserves = sum(capacity - 32 * labels for capacity, labels in devices)
        bound_total = reserves + rng.choice([0, rng.randrange(0, 32 * sum(n for _, n in devices) + 1)])
        isolated = rng.randrange(2)
        ingress = 0 if isolated else rng.choice([1, 1000, rng.randrange(1, 1 << 30)])
        cases.append((m, rng.choice(["c1", "192"]), random_confidence(rng), bound_total,
                      rng.uniform(1e3, 1e12), isolated, ingress, rng.randrange(1, 10 ** 10), devices))
    return cases


def occupancy_line(confidence, gap, unprotected, shortfall, devices):
    return (f"occupancy {confidence.hex()} {gap} {unprotected} {shortfall} {len(devices)} "
            + " ".join(f"{p} {o}" for p, o in devices))


def occupancy_cases(rng, count):
    """(confidence, mean gap us, U us, b, [(planned bytes, labels per round)]): one device, unasked devices, equal
    ratios, b near nothing and near everything."""
    cases = [(0.99, 1_000_000, 0, 1 << 26, [(1 << 30, 8)]),
             (0.99, 1_000_000, 5, (1 << 20) - 1, [(1 << 20, 4), (1 << 20, 0)]),
             (0.99, 1_000_000, 5, (1 << 20) + 7, [(1 << 20, 4), (1 << 20, 0)]),
             (0.5, 1, 0, 0, [(1 << 40, 1)]),
             (0.999999, 3_600_000_000, 1 << 40, (1 << 40) - 1, [(1 << 40, 64), (1 << 36, 3)])]
    for _ in range(count):
        devices = [(rng.randrange(1, 1 << 40) * 32, rng.choice([0, 1, 2, 3, 8, 64, 1000]))
                   for _ in range(rng.randrange(1, 9))]
        planned = sum(p for p, _ in devices)
        shortfall = min(planned - 1, int(planned * rng.choice([1e-6, 1e-3, 0.01, 0.1, 0.5, 0.99])))
        cases.append((random_confidence(rng), rng.randrange(1, 10**10), rng.randrange(0, 10**9), shortfall, devices))
    return cases


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    options = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    if len(args) != 2:
        print(__doc__)
        return 2
    binary, root = args
    recipe = load_recipe(root)
    rng = random.Random(int(options.get("seed", 22)))
    count = int(options.get("cases", 400))
    bounds = edge_bounds() + [(random_confidence(rng), [random_device(rng) for _ in range(rng.randrange(1, 9))])
                              for _ in range(count)]
    # A few with equal ratios P/N across devices (checks spread in proportion to the bytes).
    for _ in range(count // 10):
        ratio = rng.randrange(1 << 20, 1 << 30)
        bounds.append((random_confidence(rng), [(ratio * n + rng.randrange(0, GIB), ratio * n, n)
                                                for n in (rng.randrange(1, 5000) for _ in range(rng.randrange(2, 6)))]))
    rules = rule_cases(rng, 300)
    occupancies = occupancy_cases(rng, 300)
    chain_ms = CHAIN_MS
    computes = compute_cases(rng, 120)
    lines = [bound_line(c, d) for c, d in bounds] + [
        f"rule {m} {f} {t} {s.hex()} {dl} {h}" for m, f, t, s, dl, h in rules] + [
        occupancy_line(*case) for case in occupancies] + [f"chains {m}" for m in chain_ms] + [
        compute_line(*case) for case in computes]
    run = subprocess.run([binary], input="\n".join(lines) + "\n", capture_output=True, text=True, check=False)
    if run.returncode != 0:
        print(f"FAIL: bound_cases exited {run.returncode}: {run.stderr}")
        return 1
    answers = run.stdout.splitlines()
    if len(answers) != len(lines):
        print(f"FAIL: bound_cases answered {len(answers)} of {len(lines)} lines")
        return 1
    failures = exact = 0
    for (confidence, devices), answer in zip(bounds, answers):
        got = [int(x) for x in answer.split()[1:]]
        outside, planned, missing, total, diagnostics = got[0], got[1], got[2], got[3], got[4:]
        port = recipe.joint_bound(devices, confidence)
        slack = recipe.bound_slack(port)
        want_diagnostics = recipe.device_diagnostics(devices, confidence)
        problems = []
        if (outside, planned) != (port["outside"], port["planned"]):
            problems.append(f"reserves/planned {outside}/{planned}, the port {port['outside']}/{port['planned']}")
        if abs(missing - port["missing"]) > slack or abs(total - port["total"]) > slack:
            problems.append(f"missing {missing} total {total}, the port {port['missing']} {port['total']} "
                            f"(allowed difference {slack})")
        if len(diagnostics) != len(want_diagnostics) or \
                any(abs(a - b) > 1 for a, b in zip(diagnostics, want_diagnostics)):
            problems.append(f"diagnostics {diagnostics}, the port {want_diagnostics}")
        if problems:
            failures += 1
            print(f"FAIL: {bound_line(confidence, devices)}: bound.cc and the port differ: {'; '.join(problems)}")
        elif total == port["total"] and missing == port["missing"] and diagnostics == want_diagnostics:
            exact += 1
    for (m, label_format, t_min, safety, deadline, honest), answer in zip(rules, answers[len(bounds):]):
        satisfied, margin = (answer.split()[1] == "1"), (answer.split()[2] == "1")
        order = {"format": "posedbBlake3C1" if label_format == "c1" else "posedbBlake3N192", "chunkLabels": m,
                 "roundDeadlineUs": str(deadline), "profile": {"tMinPs": str(t_min), "safetyFactor": safety}}
        port_satisfied = recipe.deadline_rule(order)[0]
        port_margin = honest > 0 and float(deadline) >= recipe.HONEST_ROUND_MARGIN * float(honest)
        if (satisfied, margin) != (port_satisfied, port_margin):
            failures += 1
            print(f"FAIL: rule m={m} {label_format} t_min={t_min} safety={safety!r} deadline={deadline} "
                  f"honest={honest}: deadline_rule.cc says {satisfied}/{margin}, the port "
                  f"{port_satisfied}/{port_margin}")
    for case, answer in zip(occupancies, answers[len(bounds) + len(rules):]):
        confidence, gap, unprotected, shortfall, devices = case
        detection, short = float.fromhex(answer.split()[1]), int(answer.split()[2])
        port_detection = recipe.occupancy_detection(devices, shortfall)
        port_short = recipe.occupancy_short_us(port_detection, confidence, gap, unprotected)
        # The recipe's own tolerance (check_occupancy): d(b) to 1e-12, T* + U to one microsecond and 1e-9.
        if abs(detection - port_detection) > 1e-12 * max(1.0, port_detection) or \
                abs(short - port_short) > 1 + port_short * 1e-9:
            failures += 1
            print(f"FAIL: {occupancy_line(*case)}: occupancy_bound.cc says {detection!r} {short}, the port "
                  f"{port_detection!r} {port_short}")
    done = len(bounds) + len(rules) + len(occupancies)
    for m, answer in zip(chain_ms, answers[done:]):
        if [int(x) for x in answer.split()[1:]] != recipe.exclusive_chain_prefix(m):
            failures += 1
            print(f"FAIL: chains {m}: kernels/exclusive_chains.cc and the recipe's exclusive_chain_prefix differ")
    done += len(chain_ms)
    for case, answer in zip(computes, answers[done:]):
        figures, statement = answer.split("\t", 1)
        got = [int(x) for x in figures.split()[1:]]
        m, label_format, confidence, bound_total, rate, isolated, ingress, interval, devices = case
        want = recipe.compute_statement("node-x", m, "posedbBlake3C1" if label_format == "c1" else "posedbBlake3N192",
                                        confidence, bound_total, devices, rate, "", bool(isolated), ingress, interval)
        if (bool(got[0]),) + tuple(got[1:]) + (statement,) != want:
            failures += 1
            print(f"FAIL: {compute_line(*case)}: compute_statement.cc says {got} {statement!r}, the port {want}")
    print(f"{len(bounds)} bounds ({exact} equal to the byte, the rest within bound.cc's padding), {len(rules)} "
          f"deadline rules, {len(occupancies)} occupancy statements, exclusive chains for m in {chain_ms} and "
          f"{len(computes)} compute statements: "
          f"{'all agree' if not failures else f'{failures} disagree'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
