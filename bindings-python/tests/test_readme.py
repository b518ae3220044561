"""The README's Python example, extracted and run against the installed wheel."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(os.environ.get("ROYALTYKIT_ROOT", Path(__file__).resolve().parents[2]))


def test_readme_python_example(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- example:python -->\s*```python\n(.*?)```", readme, re.S)
    assert m, "README has a Python example"
    script = tmp_path / "example.py"
    script.write_text(m.group(1), encoding="utf-8")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout
    assert out == "process ddex.delivery.acknowledged\n"
