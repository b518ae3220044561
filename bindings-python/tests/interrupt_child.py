"""A job a person runs and interrupts (test_interrupt.py): run_export against the test's fake API,
each checkpoint persisted (on_checkpoint), the interruption's checkpoint and export id written on
ExportInterrupted / a CancelledError carrying the job (exit 3). argv[1]: JSON {url, mode (httpx, requests, async),
keyed, to, work (a folder for its files), interval, resume (a checkpoint file, or null)}."""

from __future__ import annotations

import asyncio
import faulthandler
import json
import signal
import sys
from pathlib import Path

import httpx
import requests

import royaltykit as rk
from royaltykit.client import AsyncReportsClient, ReportsClient

faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test asks for the stacks of a child that hangs
cfg = json.loads(sys.argv[1])
work = Path(cfg["work"])
TENANT = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
BODY = {"export_class": "statements", "format": "csv", "period": "2026-10"}


def persist(text: str) -> None:
    tmp = work / "checkpoint.tmp"
    tmp.write_text(text)
    tmp.replace(work / "checkpoint.json")


def on_event(e: dict) -> None:
    # The test sends SIGINT during a poll wait once it sees this mark.
    if e["kind"] == "poll":
        (work / "polled").write_text(e.get("state") or "")


def options() -> dict:
    common = dict(base_url=cfg["url"], client_id="cid", client_secret="csecret", tenant_id=TENANT,
                  idempotency_header="Idempotency-Key" if cfg["keyed"] else None, on_event=on_event)
    return common


def export_args() -> dict:
    if cfg["resume"]:
        return {"resume": Path(cfg["resume"]).read_text()}
    return {"body": BODY, "min_poll_interval_seconds": cfg["interval"], "max_poll_interval_seconds": cfg["interval"]}


def report(e: BaseException, kind: str, left: rk.ExportInterrupted | None = None) -> None:
    info: BaseException = left if left is not None else e
    out = {"kind": kind, "code": getattr(info, "code", None), "export_id": getattr(info, "export_id", "missing"),
           "checkpoint": getattr(info, "checkpoint", None), "message": str(info),
           "notes": getattr(e, "__notes__", []),
           "keyboard_interrupt": isinstance(e, KeyboardInterrupt),
           "cancelled_error": isinstance(e, asyncio.CancelledError),
           "cause": type(e.__cause__).__name__ if e.__cause__ is not None else None}
    (work / "interrupted.json").write_text(json.dumps(out))


def done(result: rk.client.ExportResult) -> None:
    (work / "result.json").write_text(json.dumps({"export_id": result.export_id, "size": result.size}))


def main() -> int:
    if cfg["mode"] in ("httpx", "requests"):
        with httpx.Client() if cfg["mode"] == "httpx" else requests.Session() as http:
            try:
                done(ReportsClient(http, **options()).run_export(to=cfg["to"], on_checkpoint=persist, **export_args()))
            except rk.ExportInterrupted as e:
                report(e, "ExportInterrupted")
                return 3
        return 0

    async def job() -> None:
        async with httpx.AsyncClient() as http:
            try:
                done(await AsyncReportsClient(http, **options()).run_export(to=cfg["to"], on_checkpoint=persist,
                                                                            **export_args()))
            except asyncio.CancelledError as e:
                left = rk.export_interruption(e)
                assert left is not None, "a cancelled export job's CancelledError carries it"
                report(e, "CancelledError", left)
                raise

    try:
        asyncio.run(job())
    except KeyboardInterrupt:  # asyncio.run passes Ctrl-C on as the task's cancellation, then raises this
        return 3 if (work / "interrupted.json").exists() else 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
