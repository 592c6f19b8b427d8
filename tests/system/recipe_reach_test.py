#!/usr/bin/env python3
"""The recipe's reach rule against the verdict's (challenger/session/assumptions.cc): with an
inventory's reach_round_deadline_us, docs/audit_recipe.py's allowed_assumptions lets
`no-nvme-in-reach` and `wave-complete` hold only for an order whose roundDeadlineUs is within it
(equal included), and for any deadline without one; the other assumptions do not depend on it. Its
declarations check (Recipe.declarations) refuses an order saying waveComplete beyond it, by the same
rule (within_reach), as session/declared_node.cc CheckOrderDeclarations does.
The C++ side of the same rule: tests/challenger/session/assumptions_test.cc
ReachDeclarationsHoldOnlyWithinTheirRoundDeadline and tests/challenger/audit/ledger_audit_test.cc
ReachDeadlineAuditTest.

Usage: recipe_reach_test.py SOURCE_ROOT
Exit status: 0 every case agrees; 1 one does not (named); 2 bad usage.
"""
import importlib.util
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
# The recipe imports PyNaCl (Debian's python3-nacl): another python3 first on PATH hands over to Debian's.
if importlib.util.find_spec("nacl") is None and os.path.exists("/usr/bin/python3") and \
        os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
    os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)

# threat-model: T-REACH-DEADLINE


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    sys.path.insert(0, os.path.join(sys.argv[1], "docs"))
    import audit_recipe  # pylint: disable=import-outside-toplevel

    node = {"name": "gpu-01", "no_nvme_in_reach": True, "network_isolated_during_wipe": True,
            "devices": [{"selector": "GPU-0", "model": "NVIDIA H200", "capacity_bytes": 1 << 30}]}
    order = {"devices": [{"selector": "GPU-0", "labelCount": "1024", "capacityBytes": str(1 << 30)}],
             "chunkLabels": 64, "waveComplete": True, "roundDeadlineUs": "2000"}
    failures = 0
    cases = (("no reach_round_deadline_us", None, True),
             ("a reach longer than the deadline", 2001, True),
             ("a reach equal to the deadline", 2000, True),
             ("a reach one microsecond shorter", 1999, False))
    for name, reach, expected in cases:
        inventory = {"nodes": [node], "waves": [{"name": "rack-1", "nodes": ["gpu-01"], "complete": True}]}
        if reach is not None:
            inventory["reach_round_deadline_us"] = reach
        allowed = audit_recipe.allowed_assumptions(order, node, inventory, None)
        if audit_recipe.within_reach(order, inventory) != expected:
            print(f"FAIL: {name}: within_reach is {not expected}, want {expected}")
            failures += 1
        got = (allowed["no-nvme-in-reach"], allowed["wave-complete"], allowed["no-egress-during-session"])
        want = (expected, expected, True)
        if got == want:
            print(f"ok: {name}: no-nvme-in-reach, wave-complete allowed {expected}")
        else:
            print(f"FAIL: {name}: (no-nvme-in-reach, wave-complete, no-egress) allowed {got}, want {want}")
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
