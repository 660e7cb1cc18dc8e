"""A scale worker's leader process: while it holds the leader lock, it relays, delivers, projects and ticks.

It must never outlive its worker nor hold the lock while stuck: the kernel kills it when its
worker dies (PR_SET_PDEATHSIG on Linux), even inside a blocked call, and a watchdog thread ends it
when its worker is gone or its main loop has made no progress for `leader_stall_timeout` seconds.
Ending the process ends its PostgreSQL session, and the advisory lock with it, so another worker
takes over. Its exit code tells the worker what happened (runtime/worker.py starts a new one).
"""

from __future__ import annotations

import ctypes
import faulthandler
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

from loopline.adapters.channels import ConsoleChannel
from loopline.adapters.clock import SystemClock
from loopline.adapters.config import Settings
from loopline.adapters.leader import PostgresLeader
from loopline.runtime.bootstrap import build
from loopline.runtime.system import System
from loopline.runtime.worker_log import configure, event, one_line, out, print_delivered

STALLED = 75  # the exit code of a leader its watchdog found stuck: the worker starts a new one
ORPHANED = 76  # the exit code of a leader whose worker is gone
FAILED = 77  # the exit code of a leader that failed unexpectedly (its one log line says why): the worker starts a new one
PR_SET_PDEATHSIG = 1
WATCH_EVERY = 0.5  # seconds between the watchdog's checks


def lead(settings: Settings, interval: float, tick_every: float, parent: int, worker: str, console: bool = False) -> None:
    """While this process holds the leader lock: relay, deliver, project, and tick at wall-clock time. An
    unexpected failure is one logged line and the exit code that has the worker start a new leader."""
    die_with(parent)
    configure(worker)
    try:
        _lead(settings, interval, tick_every, parent, worker, console)
    except Exception as error:
        event("leader.failed", logging.ERROR, error=one_line(error))
        sys.exit(FAILED)


def _lead(settings: Settings, interval: float, tick_every: float, parent: int, worker: str, console: bool) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when the worker stops
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())  # the parent stopping: finish the pass, then let go
    system: System | None = None
    built_at = 0.0

    def last_progress() -> float:
        """The main loop checks the lock before every batch of every duty (`System.drain`) and every pass;
        building the system is bounded by the connection timeouts instead."""
        return max(built_at, system.leader.checked_at) if system is not None else time.monotonic()

    watch(parent, last_progress, settings.leader_stall_timeout)
    built = build(settings)
    built_at = time.monotonic()
    system = built  # only now does the watchdog look at the leader's checks
    if isinstance(system.leader, PostgresLeader):
        system.leader.lead_as(worker)
    if console:
        system.delivery.add_channel(ConsoleChannel(print_delivered))
    clock = SystemClock()
    last_tick = float("-inf")
    leading = False
    losses = system.leader.losses
    holds_lead = threading.Event()
    threading.Thread(target=decide_while_leading, args=(system, holds_lead, stopping, interval),
                     name="loopline-agent", daemon=True).start()
    try:
        while not stopping.is_set():
            leads = system.leader.try_lead()
            # Lost since the last pass: this check found it gone, or a check within the drain did and this one
            # took it again on a new session (counting as a loss all the same).
            lost = leading and (not leads or system.leader.losses != losses)
            if lost:
                event("lead.lost", logging.WARNING)
            if leads and (lost or not leading):
                event("lead.taken")
            leading, losses = leads, system.leader.losses
            (holds_lead.set if leads else holds_lead.clear)()
            if leads:
                report = system.drain(deliver=True)
                if tick_every > 0 and time.monotonic() - last_tick >= tick_every:
                    for action in system.tick(clock.now()).actions:
                        out.print(action, highlight=False)
                    last_tick = time.monotonic()
                if report.relayed or report.projected or report.delivered:
                    continue  # more may be waiting: no pause while catching up
            stopping.wait(interval)
    finally:
        system.close()  # ends the lock's session: another worker may lead
        if leading:
            event("lead.released")


def decide_while_leading(system: System, holds_lead: threading.Event, stopping: threading.Event,
                         interval: float) -> None:
    """The leader's agent: model decisions in a thread of their own, so a slow model never holds up delivery,
    relaying or projections. Its position and the tasks' versions keep every request answered once."""
    assert system.agent is not None
    while not stopping.is_set():
        if not holds_lead.is_set():
            holds_lead.wait(interval)
            continue
        try:
            passes = [system.agent.run_once()] + ([system.brain.run_once()] if system.brain else [])
            for done in (line for one in passes for line in one.done):
                out.print(done, highlight=False)
            if any(one.read for one in passes):
                continue
        except Exception as error:  # noqa: BLE001 - the next pass retries; the agent's steps park what is poison
            event("agent.failed", logging.ERROR, error=f"{type(error).__name__}: {error}")
        stopping.wait(interval)


def die_with(parent: int) -> None:
    """Has the kernel kill this process when its parent dies, whatever it is blocked in (Linux only;
    elsewhere the watchdog's parent check does it within `WATCH_EVERY`)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os._exit(ORPHANED)


def watch(parent: int, last_progress: Callable[[], float], stall_timeout: float) -> None:
    """A daemon thread that ends the process when its parent is gone or its main loop is stuck."""

    def check() -> None:
        while True:
            time.sleep(WATCH_EVERY)
            if os.getppid() != parent:
                os._exit(ORPHANED)
            stalled = time.monotonic() - last_progress()
            if stalled > stall_timeout:
                event("leader.stalled", logging.ERROR, stalled_seconds=round(stalled),
                      why="no progress: exiting, which releases the leader lock")
                faulthandler.dump_traceback(file=sys.stderr, all_threads=True)  # where it was stuck
                os._exit(STALLED)

    threading.Thread(target=check, name="loopline-leader-watchdog", daemon=True).start()

