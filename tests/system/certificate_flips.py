#!/usr/bin/env python3
"""Copies of a certificate with one byte changed, for tests/system/audit_test.sh.

  certificate_flips.py CERTIFICATE OUT_DIR MAX

Writes OUT_DIR/<position>.json for the first and the last byte and every k-th byte, k the least
multiple of 97 that keeps them to MAX positions, each copy with that one byte changed to another of
its kind: a digit to the next digit, a hex letter (a-f) to the next, any other letter to the next
letter, a space to a tab, a newline to a space, anything else with its lowest bit flipped. Most
copies thus stay JSON, and what fails them is the certificate's own checks rather than the parser.
Also writes, and prints on one line, five positions for the slower recipe: the first byte, an
indentation space, a digit of the first device's planned_bytes, a hex digit inside the first
evidence envelope, and the last byte. Deterministic: the same certificate gives the same copies.
"""

import os
import sys


def changed(byte):
    c = chr(byte)
    if c.isdigit():
        return ord(str((int(c) + 1) % 10))
    if c in "abcdef":
        return ord("abcdef"[("abcdef".index(c) + 1) % 6])
    if "a" <= c <= "z":
        return ord("a") + (byte - ord("a") + 1) % 26
    if "A" <= c <= "Z":
        return ord("A") + (byte - ord("A") + 1) % 26
    return {ord(" "): ord("\t"), ord("\n"): ord(" ")}.get(byte, byte ^ 1)


def main():
    path, out, most = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(path, "rb") as f:
        text = f.read()
    step = 97 * -(-len(text) // (97 * most))
    text_str = text.decode("ascii")  # a canonical certificate is ASCII
    chosen = [0, text_str.index("\n  ") + 1, text_str.index('"planned_bytes": ') + len('"planned_bytes": '),
              text_str.index('"envelope": "') + len('"envelope": "') + 101, len(text) - 1]
    os.makedirs(out, exist_ok=True)
    for position in sorted(set(range(0, len(text), step)) | set(chosen)):
        copy = bytearray(text)
        copy[position] = changed(copy[position])
        with open(os.path.join(out, f"{position}.json"), "wb") as f:
            f.write(copy)
    print(" ".join(str(p) for p in chosen))


if __name__ == "__main__":
    main()
