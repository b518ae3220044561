"""A minimal RESP client with redis-py's ``execute_command`` (sync and asyncio), and a throw-away
``redis-server`` on 127.0.0.1, for the Redis stores' and the fleet's tests (the ``redis_port``
fixture of conftest.py, and the fleet's child processes)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any


class Resp:
    """A minimal RESP client with redis-py's ``execute_command``, for the Redis stores' tests."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.file = self.sock.makefile("rb")
        self.lock = threading.Lock()

    def execute_command(self, *args: Any) -> Any:
        parts = [str(a).encode() for a in args]
        payload = b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)
        with self.lock:
            self.sock.sendall(payload)
            return self.read()

    def read(self) -> Any:
        line = self.file.readline()[:-2]
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            return None if int(rest) < 0 else self.file.read(int(rest) + 2)[:-2]
        if kind == b"*":
            return None if int(rest) < 0 else [self.read() for _ in range(int(rest))]
        raise RuntimeError(f"unexpected reply {line!r}")

    def close(self) -> None:
        self.file.close()
        self.sock.close()


class AsyncResp:
    """``Resp`` with redis.asyncio's coroutine ``execute_command``."""

    def __init__(self, sync: Resp) -> None:
        self.sync = sync

    async def execute_command(self, *args: Any) -> Any:
        return self.sync.execute_command(*args)


def have_redis() -> bool:
    return shutil.which("redis-server") is not None


def free_port() -> int:
    """A port nothing listens on now."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = int(probe.getsockname()[1])
    probe.close()
    return port


def start_redis(port: int, folder: Path) -> subprocess.Popen[bytes]:
    """A ``redis-server`` on 127.0.0.1:``port`` (no persistence), once it answers PING."""
    proc = subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--dir", str(folder),
                             "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            c = Resp(port)
            assert c.execute_command("PING") == "PONG"
            c.close()
            return proc
        except OSError:
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
