#!/usr/bin/env python3
"""The documentation's cross-references resolve: in README.md and docs/*.md, every relative
Markdown link `[text](path)` names an existing file (and, with `#anchor`, a heading of that file);
and in those files, scripts/ and deploy/, every section reference `x.md "Section"` (also written
`[x.md](x.md) "Section"`, or `docs/x.md "Section"`) names a heading of x.md that starts with
"Section". A reference may wrap onto the next line. Fenced code blocks are not read.

Usage: docs_links_test.py SOURCE_ROOT                Exit status: 0 when every reference resolves.
       docs_links_test.py --self-check [SOURCE_ROOT]  plants broken references in a copy; 0 when
                                                      each one is caught
"""
import glob
import os
import re
import shutil
import sys
import tempfile

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# `name.md "Section"`, `name.md) "Section"`, `name.md#anchor) "Section"`: the section in straight
# double quotes after at most one space or line break.
SECTION_REF = re.compile(r"((?:\.\./|docs/)?[\w.-]+\.md)(?:#[\w-]*)?\)?[ \t]*\n?[ \t]*(?:#\s*|//\s*)?\"([^\"\n]+(?:\n[^\"\n]+)?)\"")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def prose(text):
    """The text with fenced code blocks blanked (line numbers kept)."""
    return FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def headings(path):
    return [h.strip() for h in HEADING.findall(prose(read(path)))]


def slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def resolve(root, source, name):
    """The file a reference `name` in `source` means: relative to the source's folder, else to the
    root, else to docs/."""
    for base in (os.path.dirname(source), root, os.path.join(root, "docs")):
        path = os.path.normpath(os.path.join(base, name))
        if os.path.exists(path):
            return path
    return None


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def sources(root):
    docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    others = []
    for folder in ("scripts", "deploy"):
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            others += [os.path.join(dirpath, f) for f in sorted(files)]
    return docs, others


def check(root):
    problems = []
    docs, others = sources(root)
    for source in docs + others:
        try:
            text = prose(read(source))
        except OSError as e:
            problems.append(f"{source}: {e}")
            continue
        rel = os.path.relpath(source, root)
        if source in docs:
            for m in LINK.finditer(text):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                path, _, anchor = target.partition("#")
                where = f"{rel}:{line_of(text, m.start())}: ({target})"
                full = os.path.normpath(os.path.join(os.path.dirname(source), path)) if path else source
                if not os.path.exists(full):
                    problems.append(f"{where}: no such file")
                    continue
                if anchor and full.endswith(".md") and anchor not in {slug(h) for h in headings(full)}:
                    problems.append(f"{where}: no heading with the anchor #{anchor}")
        for m in SECTION_REF.finditer(text):
            name, section = m.group(1), " ".join(m.group(2).split())
            where = f"{rel}:{line_of(text, m.start())}: {name} \"{section}\""
            path = resolve(root, source, name)
            if path is None:
                if source in docs:
                    problems.append(f"{where}: no such file")
                continue
            if not any(" ".join(h.split()).startswith(section) for h in headings(path)):
                problems.append(f"{where}: no heading of {os.path.relpath(path, root)} starts so")
    return problems


def self_check(root):
    def copy(to):
        shutil.copy(os.path.join(root, "README.md"), to)
        shutil.copytree(os.path.join(root, "docs"), os.path.join(to, "docs"))
        for folder in ("scripts", "deploy"):
            shutil.copytree(os.path.join(root, folder), os.path.join(to, folder))
        # Relative links out of docs/ (source files) must still resolve in the copy.
        for source in [os.path.join(root, "README.md")] + glob.glob(os.path.join(root, "docs", "*.md")):
            for target in LINK.findall(read(source)):
                path = target.partition("#")[0]
                if not path or re.match(r"^[a-z][a-z0-9+.-]*:", path):
                    continue
                src = os.path.normpath(os.path.join(os.path.dirname(source), path))
                dst = os.path.join(to, os.path.relpath(src, root))
                if os.path.isfile(src) and not os.path.exists(dst):
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copy(src, dst)
                elif os.path.isdir(src):
                    os.makedirs(dst, exist_ok=True)

    def append(rel, text):
        return lambda to: open(os.path.join(to, rel), "a").write(text)

    violations = {
        "a link to a missing file": ("no such file", append("docs/protocol.md", "\nSee [x](no-such-doc.md).\n")),
        "a link to a missing anchor": ("anchor", append("README.md", "\nSee [x](docs/protocol.md#no-such-heading).\n")),
        "a section that is not there": ("starts so", append("docs/protocol.md",
                                                          '\nSee [operations.md](operations.md) "No such\nsection".\n')),
        "a script's section reference": ("starts so", append("scripts/demo.sh", '\n# docs/operations.md "Nowhere"\n')),
    }
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        clean = os.path.join(tmp, "clean")
        os.makedirs(clean)
        copy(clean)
        base = check(clean)
        if base:
            print("FAIL: the unmodified copy does not pass:\n  " + "\n  ".join(base))
            return 1
        for i, (what, (expected, plant)) in enumerate(violations.items()):
            to = os.path.join(tmp, str(i))
            os.makedirs(to)
            copy(to)
            plant(to)
            found = [p for p in check(to) if expected in p]
            if found:
                print(f"ok: {what}: {found[0]}")
            else:
                print(f"FAIL: {what} was not caught")
                failures += 1
    if failures:
        return 1
    print(f"ok: all {len(violations)} planted broken references caught")
    return 0


def main(argv):
    if argv[1:2] == ["--self-check"]:
        root = argv[2] if len(argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        return self_check(os.path.abspath(root))
    if len(argv) != 2:
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    problems = check(os.path.abspath(argv[1]))
    for p in problems:
        print("FAIL:", p)
    if problems:
        return 1
    print("ok: every link and section reference of README.md, docs/, scripts/ and deploy/ resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
