"""The one shape every vector file is written in (Wycheproof style), so that each language runs
all of them with one generic runner:

    {"description", "generator", "schema", "numberOfTests",
     "testGroups": [{"function": name, "comment"?, "defaults"?,
                     "tests": [{"tcId", "comment", "flags"?, "spec"?, "input": {...},
                                "result": "valid" | "invalid",
                                "expected": ... (valid) | "error": {"code", ...fields} (invalid)}]}]}

`function` names one entry of each runner's adapter table (the Python API's name where one
exists). `expected` is compared as a subset: every member it names must be present in the result
with an equal value (member names in snake_case; a runner compares camelCase results by name);
`error` likewise against the error raised, `code` first. Three member-name suffixes check a
member instead of comparing it: `x_prefix` (the result's `x` starts with the value), `x_max_len`
(its length is at most the value) and `x_count` (it is a list of that many items). tcIds are
unique per file.
"""

import json
import os

SCHEMA = "royaltykit-vectors/2 (see tests/vectors/shape.py)"
META = ("tcId", "comment", "flags", "spec")


def test(case, error_fields=()):
    """One case in the common shape. Members named in `error_fields` join the error's code;
    `input` (or every other member) is the input."""
    c = dict(case)
    t = {k: c.pop(k) for k in META if k in c}
    t.setdefault("comment", "")
    c.pop("result", None)  # recomputed from `error`
    code = c.pop("error", None)
    fields = {}
    for k in error_fields:
        if k in c:
            v = c.pop(k)
            fields.update(v if isinstance(v, dict) else {k: v})
    has_expected = "expected" in c
    expected = c.pop("expected", None)
    inputs = c.pop("input", {})
    inputs = {**c, **inputs}
    if isinstance(inputs.get("body"), str):
        inputs["body"] = {"utf8": inputs["body"]}
    t["input"] = inputs
    if code:
        t["result"] = "invalid"
        t["error"] = {"code": code, **fields}
    else:
        assert has_expected, f"case without expected or error: {case}"
        t["result"] = "valid"
        t["expected"] = expected
    return t


def group(function, cases, comment=None, defaults=None, error_fields=()):
    g = {"function": function}
    if comment:
        g["comment"] = comment
    if defaults:
        g["defaults"] = defaults
    g["tests"] = [test(c, error_fields) for c in cases]
    return g


def write(name, description, generator, groups):
    """Numbers the tests 1..n across the file's groups and writes tests/vectors/<name>."""
    n = 0
    for g in groups:
        for t in g["tests"]:
            n += 1
            t["tcId"] = n
            # tcId first, for readers of the file
            t_sorted = {"tcId": n, **{k: v for k, v in t.items() if k != "tcId"}}
            t.clear()
            t.update(t_sorted)
    data = {"description": description, "generator": generator, "schema": SCHEMA, "numberOfTests": n, "testGroups": groups}
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), name), "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(name, n, "tests in", len(groups), "groups")
