"""The documentation's receiver examples (README.md and docs/*.md), each run as written against a real server and a real
redis-server on 127.0.0.1: a delivery is processed once (the handler prints `stored <event>`),
its redelivery acknowledged. Run by scripts/test-receivers.sh beside test_receivers.py; the
environment (RECEIVER_WORK: the directory with node_modules and the venv; BUN) comes from it."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_receivers import RedisServer, event, free_port, post, redis, sign  # redis: the module-scoped server fixture

ROOT = Path(os.environ["ROYALTYKIT_ROOT"])
DOCS = "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
WORK = Path(os.environ["RECEIVER_WORK"])
SECRET = "whsec_readme_example"
PREVIOUS = "whsec_readme_previous"


def example(name: str) -> str:
    m = re.search(rf"<!-- example:{name} -->\s*```\w+\n(.*?)```", DOCS, re.S)
    assert m, f"the documentation has no example {name}"
    return m.group(1)


def django_project(tmp: Path, views: str) -> list[str]:
    """A minimal Django project around the README's views.py."""
    (tmp / "site_settings.py").write_text(
        "import os\nSECRET_KEY = 'readme'\nDEBUG = False\nALLOWED_HOSTS = ['127.0.0.1']\nROOT_URLCONF = 'urls'\n"
        "MIDDLEWARE = ['django.middleware.csrf.CsrfViewMiddleware']\n"
        "WEBHOOK_SECRET = os.environ['WEBHOOK_SECRET']\nREDIS_URL = os.environ['REDIS_URL']\n"
        "WEBHOOK_PREVIOUS_SECRET = os.environ['WEBHOOK_PREVIOUS_SECRET']\n"
        "WEBHOOK_PREVIOUS_VALID_UNTIL = os.environ['WEBHOOK_PREVIOUS_VALID_UNTIL']\n")
    (tmp / "views.py").write_text(views)
    (tmp / "urls.py").write_text("from django.urls import path\nimport views\nurlpatterns = [path('webhooks', views.on_delivery)]\n")
    return [sys.executable, "-m", "django", "runserver", "--noreload", "--settings", "site_settings"]


def command(name: str, tmp: Path, port: int) -> list[str]:
    code = example(name)
    if name == "receiver-django":
        return django_project(tmp, code) + [f"127.0.0.1:{port}"]
    suffix = ".py" if name in ("receiver-fastapi", "receiver-flask") else ".mjs"
    file = (WORK if suffix == ".mjs" else tmp) / f"readme_{name.replace('-', '_')}{suffix}"
    file.write_text(code)
    if name == "receiver-fastapi":
        return [sys.executable, "-m", "uvicorn", f"{file.stem}:app", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    if name == "receiver-flask":
        return [sys.executable, "-m", "flask", "--app", file.stem, "run", "--host", "127.0.0.1", "--port", str(port)]
    if name == "receiver-fetch":
        return [os.environ["BUN"], str(file)]
    return ["node", str(file)]


@pytest.mark.parametrize("name", ["receiver-express", "receiver-fastify", "receiver-fetch", "receiver-fastapi",
                                  "receiver-flask", "receiver-django"])
def test_readme_receiver_example(name: str, redis: RedisServer, tmp_path: Path) -> None:
    port = free_port()
    # The rotation's overlap is over: the previous secret's previous_secret_valid_until (ISO 8601, as
    # the service returns it) has passed.
    past = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1))
    env = {**os.environ, "PORT": str(port), "WEBHOOK_SECRET": SECRET, "REDIS_URL": f"redis://127.0.0.1:{redis.port}",
           "WEBHOOK_PREVIOUS_SECRET": PREVIOUS, "WEBHOOK_PREVIOUS_VALID_UNTIL": past,
           "PYTHONPATH": str(tmp_path)}
    node = name in ("receiver-express", "receiver-fastify", "receiver-fetch")  # resolve node_modules from WORK
    proc = subprocess.Popen(command(name, tmp_path, port), cwd=WORK if node else tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, f"{name} did not start"
                time.sleep(0.1)
        body = event(f"readme-{name}")
        headers = sign(body, secret=SECRET)
        assert post(port, headers, body) == (200, {"result": "processed"})
        assert post(port, sign(body, secret=SECRET, delivery_id=headers["Service-Webhook-Id"]), body) == (200, {"result": "acknowledge"})
        late = event(f"readme-{name}-signed-with-the-rotated-out-secret")
        status, reply = post(port, sign(late, secret=PREVIOUS), late)
        assert (status, reply["error"]) == (401, "no_matching_signature"), "a secret past its validUntil never verifies"
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert out.count("stored ddex.delivery.acknowledged") == 1, out
