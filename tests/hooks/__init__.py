"""Test hooks that make a real deployment fail on purpose (`loopline_hooks`), for the processes a test
starts: this folder first on PYTHONPATH has every new interpreter run its `sitecustomize`, which
installs the hooks the environment asks for."""

from __future__ import annotations

import os
from pathlib import Path

FOLDER = Path(__file__).parent


def hooked(**hooks: str) -> dict[str, str]:
    """The environment that gives a process the named hooks (`LOOPLINE_TEST_...`, see `loopline_hooks`)."""
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(FOLDER), os.environ.get("PYTHONPATH")])), **hooks}
