"""Installed from a wheel into a new virtual environment, Loopline is one package: `loopline`."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

from tests.e2e.cli import ROOT


def _site_packages(venv: Path) -> Path:
    (site,) = venv.glob("lib/python*/site-packages")
    return site


def test_wheel_installs_only_the_loopline_package_and_the_demo_runs(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a copy, so the build leaves nothing in the working tree
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__"))
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(source)], check=True)
    (wheel,) = wheels.glob("loopline-*.whl")
    top_level = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {name for name in top_level if not name.endswith(".dist-info")} == {"loopline"}

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([venv / "bin" / "pip", "install", "-q", "--no-deps", str(wheel)], check=True)
    # The dependencies come from the test environment's site-packages (a plain path: its editable
    # install of Loopline, a .pth finder there, is not loaded from a path added this way).
    (_site_packages(venv) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def python(code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([venv / "bin" / "python", "-c", code], cwd=elsewhere, capture_output=True, text=True)

    for name in ("domain", "processors", "adapters", "projections", "cli"):
        assert python(f"import {name}").returncode != 0, f"`import {name}` works where Loopline is installed"
    located = python("import loopline.domain.task as m; print(m.__file__)")
    assert located.returncode == 0, located.stderr
    assert located.stdout.startswith(str(venv))
    skills = python("from loopline.processors.model.prompts import skill_text; print(skill_text('_base.md')[:40])")
    assert "Base Instructions" in skills.stdout, skills.stderr  # the skill files ship inside the package

    demo = subprocess.run([venv / "bin" / "loopline", "demo", "--home", str(tmp_path / "demo")], cwd=elsewhere,
                          capture_output=True, text=True, timeout=120)
    assert demo.returncode == 0, demo.stderr
    assert "task_abc" in demo.stdout
