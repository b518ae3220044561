"""A reporting export job for tests/receivers/test_cross_resume.py, as a Python worker runs one:
``start`` a new job, or ``resume`` the job whose checkpoint another language's process saved.
Each checkpoint is written (atomically) to the checkpoint file before each of the job's
requests goes out. Prints the export's id when the artifact is complete at the target path.

    python resume_child.py start|resume BASE_URL CHECKPOINT_FILE TARGET_FILE
"""
import os
import sys

import httpx

from royaltykit.client import ReportsClient

TENANT = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
mode, base_url, checkpoint, target = sys.argv[1:5]


def save(text: str) -> None:
    with open(checkpoint + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(checkpoint + ".tmp", checkpoint)


with httpx.Client() as http:
    client = ReportsClient(http, base_url=base_url, client_id="cid", client_secret="csecret", tenant_id=TENANT)
    if mode == "start":
        result = client.run_export({"export_class": "statements", "format": "csv"}, to=target,
                                   request_id="cross-language", on_checkpoint=save)
    else:
        with open(checkpoint, encoding="utf-8") as f:
            result = client.run_export(resume=f.read(), to=target, on_checkpoint=save)
print(result.export_id)
