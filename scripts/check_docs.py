#!/usr/bin/env python3
"""Checks the documentation (README.md and docs/*.md): every relative link reaches a file and,
with a #fragment, a heading of that file (GitHub's anchor rules); every complete example (marked
`<!-- example:name -->`) is named by a test that runs it; the README stays a front page."""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TESTS = [ROOT / d for d in ("bindings-wasm/tests", "bindings-python/tests", "bindings-kotlin/tests", "tests/receivers", "core")]
README_MAX_LINES = 300


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    out: set[str] = set()
    in_code = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip().lower()
        slug = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
        out.add(slug.replace(" ", "-"))
    return out


def main() -> int:
    errors: list[str] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, fragment = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                errors.append(f"{page.relative_to(ROOT)}: link to {target}: no such file")
            elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                errors.append(f"{page.relative_to(ROOT)}: link to {target}: no such heading")
    names = [n for page in PAGES for n in re.findall(r"^<!-- example:([\w-]+) -->$", page.read_text(encoding="utf-8"), re.M)]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        errors.append(f"examples named twice (only the first would run): {', '.join(dupes)}")
    # The Rust page is the crate's doctest (core/src/lib.rs includes it): each of its blocks runs.
    doctests = 'include_str!("../../docs/rust.md")' in (ROOT / "core/src/lib.rs").read_text(encoding="utf-8")
    tests = "\n".join(p.read_text(encoding="utf-8", errors="replace") for d in TESTS for p in d.rglob("*")
                      if p.suffix in {".js", ".py", ".kt", ".rs"} and "node_modules" not in p.parts)
    for name in names:
        # Kotlin loads each example's class by its package, readme.<name with underscores>.
        if not re.search(rf"""['"`]{re.escape(name)}['"`]|readme\.{re.escape(name.replace('-', '_'))}\b|['"`]{re.escape(name.replace('-', '_'))}['"`]""", tests) \
                and not (name.startswith("rust") and doctests):
            errors.append(f"example {name} is not run by any test (name it in the test that runs it)")
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    if lines > README_MAX_LINES:
        errors.append(f"README.md has {lines} lines: a front page has at most {README_MAX_LINES}; move the rest under docs/")
    for e in errors:
        print(e, file=sys.stderr)
    print(f"docs: {len(PAGES)} pages, {len(names)} examples, {lines} README lines: {'ok' if not errors else f'{len(errors)} problems'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
