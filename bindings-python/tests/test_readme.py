"""The README's Python examples, extracted and run against the installed wheel."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("ROYALTYKIT_ROOT", Path(__file__).resolve().parents[2]))
README = (ROOT / "README.md").read_text(encoding="utf-8")
RETRY_LOG = "503: retry in 2 s (server_error_retry)\n429: retry in 3 s (rate_limited_retry_after)\ndone after 3 attempts\n"


@pytest.mark.parametrize("name,output", [("python", "process ddex.delivery.acknowledged\n"), ("python-retry", RETRY_LOG)])
def test_readme_python_example(tmp_path, name, output):
    m = re.search(rf"<!-- example:{name} -->\s*```python\n(.*?)```", README, re.S)
    assert m, f"README has example {name}"
    script = tmp_path / "example.py"
    script.write_text(m.group(1), encoding="utf-8")
    assert subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout == output
