"""The documentation's examples: README.md and docs/*.md, each complete example marked
``<!-- example:name -->`` above its code block. The tests run them as written."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(os.environ.get("ROYALTYKIT_ROOT", Path(__file__).resolve().parents[2]))
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TEXT = "\n".join(p.read_text(encoding="utf-8") for p in DOC_FILES)


def doc_example(name: str, lang: str = r"\w+") -> str:
    """The code of the example ``name``; fails the test when no page has it."""
    m = re.search(rf"<!-- example:{re.escape(name)} -->\s*```{lang}\n(.*?)```", TEXT, re.S)
    assert m, f"the documentation has no example {name}"
    return m.group(1)
