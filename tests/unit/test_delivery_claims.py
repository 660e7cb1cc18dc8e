"""Whose delivery claim may be taken over at once: a claimer known dead on this host."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

from loopline.adapters.delivery_state import _alive_here


def state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]


def test_a_claim_of_a_process_that_exited_unreaped_is_free_at_once() -> None:
    # A leader killed with its worker is reparented; until something reaps it, it is a zombie.
    exited = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while state(exited.pid) != "Z":
        assert time.monotonic() < deadline, "the child did not exit"
        time.sleep(0.01)
    try:
        assert _alive_here(f"{socket.gethostname()}:{exited.pid}") is False
        assert _alive_here(f"{socket.gethostname()}:{os.getpid()}") is True
        assert _alive_here(f"elsewhere:{os.getpid()}") is None
    finally:
        exited.wait()
