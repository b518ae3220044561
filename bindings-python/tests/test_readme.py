"""The documentation's Python examples (README.md and docs/, see docs.py), extracted and run against the installed wheel; the HTTP example
runs against a small server on 127.0.0.1 started here."""

import base64
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from docs import doc_example

RETRY_LOG = "503: retry in 2 s (server_error_retry)\n429: retry in 3 s (rate_limited_retry_after)\ndone after 3 attempts\n"
EXPORT_LOG = "created exp_1 (queued)\npoll 1: queued -> keep_polling\npoll 2: ready -> download\ndownloaded 8 bytes\n"
HTTP_LOG = "token for 3600 s, missing scopes: exports:write\n404 not_found export_not_found declared=true\n"


class FakeReportsApi(BaseHTTPRequestHandler):
    """The reporting API's token and export routes, as far as the examples need them."""

    def _json(self, status, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    reads = 0

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/api/platform/v1/exports" and self.headers.get("Authorization") == "Bearer tok_local_1":
            self._json(201, {"id": "exp_1", "status": "queued"})
            return
        basic = "Basic " + base64.b64encode(b"cli:secret").decode()
        if self.path == "/api/platform/v1/oauth/token" and self.headers.get("Authorization") == basic and self.headers.get("X-Tenant-ID"):
            self._json(200, {"access_token": "tok_local_1", "token_type": "Bearer", "expires_in": 3600, "scope": "exports:read"},
                       [("Cache-Control", "no-store")])
        else:
            self._json(401, {"error": "invalid_client"})

    def do_GET(self):  # noqa: N802
        if self.headers.get("Authorization") != "Bearer tok_local_1":
            self._json(401, {"message": "token missing"})
        elif self.path == "/api/platform/v1/exports/exp_404":
            self._json(404, {"message": "Export not found", "code": "export_not_found"})
        elif self.path == "/api/platform/v1/exports/exp_1":
            type(self).reads += 1
            self._json(200, {"id": "exp_1", "status": "queued" if type(self).reads == 1 else "ready"})
        elif self.path == "/api/platform/v1/exports/exp_1/download":
            data = b"a,b\n1,2\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/csv")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        else:
            self._json(500, {"message": "unexpected route"})

    def log_message(self, *args):
        pass


@pytest.fixture
def base_url():
    FakeReportsApi.reads = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeReportsApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("name,output", [("python", "500\n200\n200 1\n"), ("python-retry", RETRY_LOG), ("python-http", HTTP_LOG), ("python-export", EXPORT_LOG),
                                          ("python-sqlite-store", "200 200\n1\n")])
def test_readme_python_example(tmp_path, base_url, name, output):
    script = tmp_path / "example.py"
    script.write_text(doc_example(name, "python"), encoding="utf-8")
    env = {**os.environ, "ROYALTYKIT_BASE_URL": base_url, "ROYALTYKIT_TOKEN": "tok_local_1"}
    assert subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True, env=env, timeout=60).stdout == output
