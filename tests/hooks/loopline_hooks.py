"""Test-only hooks that make a real deployment fail on purpose, installed by wrapping the seams the
code already has (the dispatch of commands and signals, the read models' handlers, the step from an
event to an outbound message, the outbound channels, a leader's drain), so no production module
knows of them. In-process tests install them with pytest's monkeypatch; a process gets them from
its environment through `sitecustomize`:

- `LOOPLINE_TEST_FAULTS="handler:MARK,projection:MARK,delivery:MARK"`: the named site raises
  `InjectedFault` for any message, event or delivery whose content holds MARK. Restarting without
  the variable is then "the fix".
- `LOOPLINE_TEST_KILL_AFTER_SEND=<channel>`: SIGKILLs the process right after that channel sent a
  message and before the delivery is marked, to prove the resend keeps its key.
- `LOOPLINE_TEST_LEADER_HANG=<file>`: the first leader to start a pass blocks for good, as in a call
  that never returns; it writes its pid to the file so the test knows which process hangs.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Patch = Callable[[Any, str, Any], None]
"""How a hook replaces an attribute: `setattr` in a process of its own, `monkeypatch.setattr` in a test."""

SITES = ("handler", "projection", "delivery")


class InjectedFault(RuntimeError):
    """Raised where LOOPLINE_TEST_FAULTS asked for a failure."""


class Faults:
    """The faults in force, site by site; `install` has the real seams check them."""

    def __init__(self) -> None:
        self.active: dict[str, str] = {}

    def configure(self, spec: str) -> None:
        """Sets the faults from `site:MARK,...`; an empty spec clears them."""
        self.active.clear()
        for part in filter(None, (item.strip() for item in spec.split(","))):
            site, _, marker = part.partition(":")
            if site not in SITES or not marker:
                raise ValueError(f"LOOPLINE_TEST_FAULTS: {part!r} is not site:MARK, a site among {', '.join(SITES)}")
            self.active[site] = marker

    def check(self, site: str, subject: Any) -> None:
        marker = self.active.get(site)
        if marker and marker in json.dumps(subject, default=str):
            raise InjectedFault(f"injected {site} fault for content holding {marker!r} (LOOPLINE_TEST_FAULTS)")

    def install(self, patch: Patch) -> None:
        """Has each site check its fault before it acts: the dispatch of a command or signal, every read
        model's handler, an event becoming an outbound message, and the sends of the channels that the
        composition root builds from then on."""
        from loopline.processors.followers import delivery
        from loopline.processors.handlers import inbound
        from loopline.runtime import bootstrap
        from loopline.runtime.stores import READ_MODELS

        dispatch = inbound.handle_message

        def handle_message(uow: Any, msg: Any) -> str:
            self.check("handler", {"id": msg.ref, "data": msg.data})
            return dispatch(uow, msg)

        patch(inbound, "handle_message", handle_message)
        for model in READ_MODELS:
            patch(model, "handlers", {cls: self._projecting(handler) for cls, handler in model.handlers.items()})
        to_message = delivery.outbound_message

        def outbound_message(event: Any) -> dict[str, Any] | None:
            message = to_message(event)
            if message is not None:
                self.check("delivery", {"tenant": event.tenant, "task_id": event.task_ref, **message})
            return message

        patch(delivery, "outbound_message", outbound_message)
        wrap_channels(bootstrap, patch, lambda channel: FaultyChannel(channel, self))

    def _projecting(self, handler: Callable[[Any, Any, int], None]) -> Callable[[Any, Any, int], None]:
        def project(conn: Any, event: Any, position: int) -> None:
            self.check("projection", event.__dict__)
            handler(conn, event, position)

        return project


class FaultyChannel:
    """A channel whose sends check the delivery fault first."""

    def __init__(self, channel: Any, faults: Faults) -> None:
        self.channel = channel
        self.name = channel.name
        self.drops_repeats = channel.drops_repeats
        self.faults = faults

    def accepts(self, message: dict[str, Any]) -> bool:
        return self.channel.accepts(message)

    def send(self, *, key: str, message: dict[str, Any]) -> None:
        self.faults.check("delivery", message)
        self.channel.send(key=key, message=message)


class KillAfterSend:
    """A channel whose process is SIGKILLed right after each send, before the delivery is marked."""

    def __init__(self, channel: Any) -> None:
        self.channel = channel
        self.name = channel.name
        self.drops_repeats = channel.drops_repeats

    def accepts(self, message: dict[str, Any]) -> bool:
        return self.channel.accepts(message)

    def send(self, *, key: str, message: dict[str, Any]) -> None:
        self.channel.send(key=key, message=message)
        os.kill(os.getpid(), signal.SIGKILL)


def wrap_channels(bootstrap: Any, patch: Patch, wrap: Callable[[Any], Any]) -> None:
    """Has the composition root wrap the channels it builds."""
    channels_for = bootstrap.channels_for
    patch(bootstrap, "channels_for", lambda settings: [wrap(channel) for channel in channels_for(settings)])


def kill_after_send(name: str, patch: Patch) -> None:
    from loopline.runtime import bootstrap

    wrap_channels(bootstrap, patch, lambda channel: KillAfterSend(channel) if channel.name == name else channel)


def hang_leader(flag: Path, patch: Patch) -> None:
    """The first leader to start a pass (the only caller of `drain(deliver=True)`) hangs in it."""
    from loopline.runtime.system import System

    drain = System.drain

    def draining(system: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("deliver"):
            hang_once(flag)
        return drain(system, *args, **kwargs)

    patch(System, "drain", draining)


def hang_once(flag: Path) -> None:
    """The first process to get here blocks for good; it writes its pid to `flag` first."""
    try:
        fd = os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    threading.Event().wait()


def install_from_environment(environ: Mapping[str, str] = os.environ, patch: Patch = setattr) -> None:
    """Installs the hooks `environ` names; none, and nothing of loopline is imported."""
    spec = environ.get("LOOPLINE_TEST_FAULTS")
    if spec:
        faults = Faults()
        faults.configure(spec)
        faults.install(patch)
    killed = environ.get("LOOPLINE_TEST_KILL_AFTER_SEND")
    if killed:
        kill_after_send(killed, patch)
    hang = environ.get("LOOPLINE_TEST_LEADER_HANG")
    if hang:
        hang_leader(Path(hang), patch)
