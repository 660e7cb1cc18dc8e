"""Run at start-up by every interpreter with this folder on PYTHONPATH (a `loopline` command, a worker,
the leader process multiprocessing spawns for it): installs the test hooks its environment asks for."""

from loopline_hooks import install_from_environment

install_from_environment()
