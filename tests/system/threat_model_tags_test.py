#!/usr/bin/env python3
"""docs/threat-model.md against the tests that cover it.

Every table of the threat model with an "id" column lists attacks and faults, one per row:
`| id | attack or fault | what stops it | covered by |`. This checks that
- row ids are unique and look like T-WORDS (capitals, digits, hyphens);
- every row outside the "Out of scope" section is covered: by a selftest scenario id that exists
  in adversary/scenarios.cc (`7f-early-fill-report`, or `1a-*` for a family), or by tests that
  carry the comment `threat-model: <row id>` (`//` in C++, `#` in shell, Python and CMake) in a
  file under tests/;
- the "covered by" cell holds only scenario ids in backticks, "tagged" and "..", says "tagged"
  exactly when some test carries the row's tag, and names no scenario that does not exist;
- every such tag under tests/ names an existing row;
- no table row of the document is longer than MAX_ROW characters;
- the document names no test: no gtest case or suite, no ctest name, no `*_test` binary (tags
  replace them, so a renamed test is no doc edit).

Usage: threat_model_tags_test.py SOURCE_ROOT                Exit status: 0 when all holds.
       threat_model_tags_test.py --self-check [SOURCE_ROOT]  plants violations in a copy; 0 when
                                                             each one is caught
"""
import os
import re
import shutil
import sys
import tempfile

MAX_ROW = 200  # characters per table row, the whole line
DOC = "docs/threat-model.md"
SCENARIOS = "adversary/scenarios.cc"
SELF = "tests/system/threat_model_tags_test.py"  # the doc may name this checker

ROW_ID = re.compile(r"^T(-[A-Z0-9]+)+$")
TAG = re.compile(r"(?://|#)\s*threat-model:\s*(\S+)")
SCENARIO_LITERAL = re.compile(r'"(\d+[a-z]?-[a-z0-9-]+)"')
GTEST = re.compile(r"\bTEST(?:_F|_P)?\(\s*(\w+)\s*,\s*(\w+)\s*\)")
CTEST = re.compile(r"\b(?:add_test\(\s*NAME\s+|wp_add_test\(\s*|wp_add_fuzzer\(\s*)([A-Za-z0-9_.-]+)")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def test_files(root):
    """Every file under tests/ (the fuzz corpora and test data hold no tags)."""
    for folder, dirs, files in os.walk(os.path.join(root, "tests")):
        rel = os.path.relpath(folder, root)
        dirs[:] = [d for d in dirs if os.path.join(rel, d) not in ("tests/fuzz/corpus", "tests/testdata")]
        for name in sorted(files):
            yield os.path.join(folder, name)


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def parse_doc(text):
    """Returns (rows, table_lines): rows as (line number, id, covered-by cell, out of scope);
    table_lines as (line number, line) for every table line of the document."""
    rows, table_lines = [], []
    out_of_scope = False
    header = None
    for number, line in enumerate(text.split("\n"), 1):
        heading = re.match(r"^(#+)\s+(.*)", line)
        if heading:
            out_of_scope = "out of scope" in heading.group(2).lower()
            header = None
            continue
        if not line.startswith("|"):
            header = None
            continue
        table_lines.append((number, line))
        if header is None:
            header = cells(line)
            continue
        if re.match(r"^\|[\s|:-]+\|\s*$", line):
            continue
        if header and header[0] == "id":
            row = cells(line)
            rows.append((number, row[0].strip("`"), row[-1] if len(row) == len(header) else None, out_of_scope))
    return rows, table_lines


def scenario_matches(token, scenarios):
    if token.endswith("*"):
        return any(s.startswith(token[:-1]) for s in scenarios)
    return token in scenarios


def check(root):
    problems = []
    doc = read(os.path.join(root, DOC))
    scenarios = set(SCENARIO_LITERAL.findall(read(os.path.join(root, SCENARIOS))))
    if not scenarios:
        problems.append(f"{SCENARIOS}: no scenario ids found")

    tags = {}  # row id -> [file:line]
    test_names, ctest_names = set(), set()
    for path in test_files(root):
        text = read(path)
        rel = os.path.relpath(path, root)
        if rel == SELF:  # its self-check plants tags
            continue
        for number, line in enumerate(text.split("\n"), 1):
            for tag in TAG.findall(line):
                tags.setdefault(tag, []).append(f"{rel}:{number}")
        for suite, name in GTEST.findall(text):
            test_names.add(name)
            if suite.endswith("Test"):
                test_names.add(suite)
        if os.path.basename(path) == "CMakeLists.txt":
            ctest_names.update(CTEST.findall(text))

    rows, table_lines = parse_doc(doc)
    if not rows:
        problems.append(f"{DOC}: no table with an id column")
    ids = {}
    for number, row_id, covered, out_of_scope in rows:
        where = f"{DOC}:{number}: {row_id}"
        if not ROW_ID.match(row_id):
            problems.append(f"{where}: a row id is T- followed by capitals, digits and hyphens")
        if row_id in ids:
            problems.append(f"{where}: the id of line {ids[row_id]} again")
        ids.setdefault(row_id, number)
        if covered is None:
            problems.append(f"{where}: the row has not as many cells as its header")
            continue
        tagged, by_scenario = False, False
        for token in re.findall(r"`[^`]*`|[^\s,;`]+", covered):
            if token.startswith("`"):
                if scenario_matches(token.strip("`"), scenarios):
                    by_scenario = True
                else:
                    problems.append(f"{where}: {token} is no scenario id of {SCENARIOS}")
            elif token == "tagged":
                tagged = True
            elif token != "..":
                problems.append(f"{where}: '{token}' in 'covered by' (only scenario ids in backticks, "
                                "'tagged' and '..')")
        if tagged and row_id not in tags:
            problems.append(f"{where}: says 'tagged' but no file under tests/ carries 'threat-model: {row_id}'")
        if row_id in tags and not tagged:
            problems.append(f"{where}: tests carry its tag ({tags[row_id][0]}) but 'covered by' does not say "
                            "'tagged'")
        if not out_of_scope and not tagged and not by_scenario:
            problems.append(f"{where}: covered by nothing (a scenario id or tagged tests)")

    for tag, places in sorted(tags.items()):
        if tag not in ids:
            problems.append(f"{places[0]}: 'threat-model: {tag}' names no row of {DOC}")

    for number, line in table_lines:
        if len(line) > MAX_ROW:
            problems.append(f"{DOC}:{number}: a table row of {len(line)} characters (at most {MAX_ROW})")

    prose = doc.replace(SELF, "")
    for name in sorted(test_names | ctest_names):
        if len(name) > 3 and re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])", prose):
            problems.append(f"{DOC}: names the test '{name}' (tag the test instead)")
    for binary in sorted(set(re.findall(r"\b\w+_test\b", prose))):
        problems.append(f"{DOC}: names the test binary '{binary}' (tag the test instead)")
    return problems


def self_check(root):
    """Each planted violation, on a fresh copy of the checked files, must be caught."""
    def copy(to):
        os.makedirs(os.path.join(to, "docs"))
        os.makedirs(os.path.join(to, "adversary"))
        shutil.copy(os.path.join(root, DOC), os.path.join(to, DOC))
        shutil.copy(os.path.join(root, SCENARIOS), os.path.join(to, SCENARIOS))
        shutil.copytree(os.path.join(root, "tests"), os.path.join(to, "tests"),
                        ignore=shutil.ignore_patterns("corpus", "testdata"))

    def edit(path, change):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        new = change(text)
        assert new != text, f"the planted violation changed nothing in {path}"
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)

    doc_rows, _ = parse_doc(read(os.path.join(root, DOC)))
    tagged_only = next(r for r in doc_rows if r[2] and r[2].strip() == "tagged")
    some_row = doc_rows[0]
    some_test = sorted(n for p in test_files(root) for _, n in GTEST.findall(read(p)))[0]

    def first_tagged_file(to):
        for path in test_files(to):
            if TAG.search(read(path)):
                return path

    def drop_tags_of(row_id):
        def run(to):
            for path in test_files(to):
                text = read(path)
                lines = [l for l in text.split("\n") if TAG.search(l) is None or TAG.search(l).group(1) != row_id]
                if len(lines) != len(text.split("\n")):
                    with open(path, "w", encoding="utf-8") as f:
                        f.write("\n".join(lines))
        return run

    def on_doc(change):
        return lambda to: edit(os.path.join(to, DOC), change)

    def set_cell(n, index, value):
        """Sets cell `index` of the document's line n."""
        def change(text):
            line = text.split("\n")[n - 1]
            parts = line.split("|")
            parts[index + 1] = f" {value} "
            return text.replace(line, "|".join(parts))
        return on_doc(change)

    def both(*plants):
        def run(to):
            for plant in plants:
                plant(to)
        return run

    row_line = lambda text, n: text.split("\n")[n - 1]
    # what is planted -> (a words of the expected complaint, the planting)
    violations = {
        "a tag naming no row": ("names no row", lambda to: edit(
            first_tagged_file(to), lambda t: t + "\n// threat-" + "model: T-NO-SUCH-ROW\n")),
        "a row whose tests lost their tags": ("no file under tests/ carries", drop_tags_of(tagged_only[1])),
        "a duplicated row id": ("again", on_doc(lambda t: t.replace(
            row_line(t, some_row[0]), row_line(t, some_row[0]) + "\n" + row_line(t, some_row[0])))),
        "a row over the length limit": ("characters (at most", set_cell(some_row[0], 1, "long " * (MAX_ROW // 5))),
        "an unknown scenario id": ("no scenario id", on_doc(lambda t: t.replace("`0-honest`", "`0-no-such`", 1))),
        "a test named in the doc": ("names the test", on_doc(lambda t: t + f"\nCovered by `{some_test}`.\n")),
        "a row covered by nothing": ("covered by nothing", both(drop_tags_of(tagged_only[1]),
                                                                set_cell(tagged_only[0], 3, ""))),
        "a tagged row whose cell does not say so": ("does not say 'tagged'", set_cell(tagged_only[0], 3, "`0-honest`")),
        "a malformed row id": ("a row id is", set_cell(some_row[0], 0, "t_honest")),
    }
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        clean = os.path.join(tmp, "clean")
        copy(clean)
        base = check(clean)
        if base:
            print("FAIL: the unmodified copy does not pass:\n  " + "\n  ".join(base))
            return 1
        for i, (what, (expected, plant)) in enumerate(violations.items()):
            to = os.path.join(tmp, str(i))
            copy(to)
            plant(to)
            found = [p for p in check(to) if expected in p]
            if found:
                print(f"ok: {what}: {found[0]}")
            else:
                print(f"FAIL: {what} was not caught ('{expected}' expected)")
                failures += 1
    if failures:
        return 1
    print(f"ok: all {len(violations)} planted violations caught")
    return 0


def main(argv):
    if argv[1:2] == ["--self-check"]:
        root = argv[2] if len(argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        return self_check(root)
    if len(argv) != 2:
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    problems = check(argv[1])
    for p in problems:
        print("FAIL:", p)
    if problems:
        return 1
    print(f"ok: {DOC}: every row covered, every tag a row, rows at most {MAX_ROW} characters, no test named")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
