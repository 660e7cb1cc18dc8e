"""Property: however commands and signals interleave, the same loops end the same way.

At scale commands and signals travel on two topics, each in order per tenant, with no order
between them. The same input is processed in event-time order and in a drawn interleaving of the
two streams, in batches of drawn sizes, then ticked past every deadline: the loops (who resolved
them, with which signal), the tasks' inboxes and the outbox must be the same, on both stores.

`task.complete` and `task.cancel` are left out on purpose: they close loops at their own time,
and a reply written before a completion but processed after it is not matched (the task is
closed); event-time order covers what loops see, not what tasks were closed before.

Every example runs on the same two systems (one per order), with tenants of its own and a week of
its own (a timer due in hours already swept would fire in the order it was filed, not in time
order): a system per example would cost two builds and, on PostgreSQL, two databases.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopline.runtime.system import System
from loopline.domain.timeutil import format_time, parse_time
from tests.conftest import build_system, command, publish, signal
from tests.integration.helpers import inbox, loop_rows, outbox, tick

T0 = datetime(2026, 3, 13, 10, 0, tzinfo=timezone.utc)
SLACK_TS0 = 1_773_396_000  # T0 as a Slack ts: a message's ts follows its time
TENANTS = ("acme", "globex")
TASKS = ("t1", "t2")
CONTACTS = ("ana@x.com", "ben@x.com")
THREADS = (None, "th1", "th2")
SLACK_USERS = ("U1", "U2")
DOCUMENTS = ("doc1", "doc2")
AFTER_EVERY_DEADLINE = T0 + timedelta(days=5)  # a short tick: contracts are given a 1-day deadline
EXAMPLES = itertools.count()
EXAMPLE_SPAN = timedelta(days=7)  # from the first message to the tick after every deadline, and more


def _at(hour: int, minute: int) -> str:
    return format_time(T0 + timedelta(hours=hour, minutes=minute))


def _slack_ts(hour: int, minute: int) -> str:
    return f"{SLACK_TS0 + hour * 3600 + minute * 60}.000100"


minutes = st.integers(0, 59)
hours = st.integers(1, 24)
actions = st.one_of(
    st.tuples(st.just("send_email"), hours, minutes, st.sampled_from(CONTACTS), st.sampled_from(THREADS)),
    st.tuples(st.just("send_slack_dm"), hours, minutes, st.sampled_from(SLACK_USERS)),
    st.tuples(st.just("send_contract"), hours, minutes, st.sampled_from(DOCUMENTS)),
    st.tuples(st.just("loop.register"), hours, minutes, st.sampled_from(CONTACTS)),
)
replies = st.one_of(
    st.tuples(st.just("email.received"), hours, minutes, st.sampled_from(CONTACTS), st.sampled_from(THREADS)),
    st.tuples(st.just("slack.message"), hours, minutes, st.sampled_from(SLACK_USERS)),
    st.tuples(st.just("webhook.received"), hours, minutes, st.sampled_from(DOCUMENTS)),
)


def _command(n: int, tenant: str, task: str, action: tuple[Any, ...]) -> dict[str, Any]:
    kind, hour, minute, target = action[:4]
    at, ref = _at(hour, minute), f"{tenant}-c{n}"
    if kind == "send_email":
        thread = {"thread_id": action[4]} if action[4] else {}
        return command(ref, "action.record", at, tenant, task_id=task, action=kind, to=target, subject="Hello", **thread)
    if kind == "send_slack_dm":
        return command(ref, "action.record", at, tenant, task_id=task, action=kind, slack_user_id=target,
                       channel_id="D1", ts=_slack_ts(hour, minute))
    if kind == "send_contract":
        return command(ref, "action.record", at, tenant, task_id=task, action=kind, resource_id=target,
                       deadline=_at(hour + 24, minute))
    return command(ref, kind, at, tenant, task_id=task, loop_id=f"{task}/explicit/{n}", channel="email",
                   watch={"sender": target}, deadline=_at(hour + 30, minute), if_unresolved="notify_user")


def _signal(n: int, tenant: str, reply: tuple[Any, ...]) -> dict[str, Any]:
    kind, hour, minute, target = reply[:4]
    at, ref = _at(hour, minute), f"{tenant}-s{n}"
    if kind == "email.received":
        thread = {"thread_id": reply[4]} if reply[4] else {}
        return signal(ref, kind, at, tenant, sender=target.upper(), **thread)
    if kind == "slack.message":
        return signal(ref, kind, at, tenant, slack_user_id=target, channel_id="D1", ts=_slack_ts(hour, minute))
    return signal(ref, kind, at, tenant, source="loopline", trigger_name="document_signed",
                  payload={"resource_id": target, "envelope_status": "completed"})


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each tenant's commands and signals, each stream in the order of its `at` (as producers send them)."""
    commands, signals = [], []
    for tenant in TENANTS:
        commands += [command(f"{tenant}-{task}", "task.create", format_time(T0), tenant, task_id=task, title=task)
                     for task in TASKS]
        planned = draw(st.lists(st.tuples(st.sampled_from(TASKS), actions), min_size=1, max_size=6))
        commands += [_command(n, tenant, task, action) for n, (task, action) in enumerate(planned)]
        signals += [_signal(n, tenant, reply) for n, reply in enumerate(draw(st.lists(replies, max_size=6)))]
    by_time = lambda message: message["at"]  # noqa: E731 - stable: ties keep their drawn order
    return sorted(commands, key=by_time), sorted(signals, key=by_time)


def _interleave(commands: list[dict], signals: list[dict], picks: list[bool]) -> list[dict]:
    """Both streams in their own order, merged as `picks` says (True: next command)."""
    merged, c, s = [], 0, 0
    for pick_command in picks + [True] * len(commands) + [False] * len(signals):
        if pick_command and c < len(commands):
            merged.append(commands[c])
            c += 1
        elif not pick_command and s < len(signals):
            merged.append(signals[s])
            s += 1
    return merged


def _outcome(system: System, messages: list[dict], batch: int, tenants: dict[str, str], later: timedelta) -> dict[str, Any]:
    for start in range(0, len(messages), batch):
        publish(system, *messages[start:start + batch])
    tick(system, format_time(AFTER_EVERY_DEADLINE + later))
    everyone = outbox(system.settings.home)
    assert len({line["key"] for line in everyone}) == len(everyone), "an outbox key written twice"
    lines = [line for line in everyone if line["tenant"] in tenants.values()]
    return {
        "loops": sorted((row for tenant in tenants.values() for row in loop_rows(system, tenant=tenant)),
                        key=lambda row: (row["tenant"], row["loop_id"])),
        "inboxes": {
            (tenant, task): sorted(row["signal_id"] for row in inbox(system, task, tenants[tenant]))
            for tenant in TENANTS for task in TASKS
        },
        # Keys name the event that caused a line (its version), which may sit elsewhere in the task's history.
        "outbox": sorted(({k: v for k, v in line.items() if k != "key"} for line in lines), key=repr),
    }


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def systems(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[System, System]]:
    """Two deployments on one store (on PostgreSQL, a database each): one per order of the input."""
    built = []
    for name in ("in_event_time", "interleaved"):
        environ: dict[str, str] = {}
        if request.param == "postgres":
            database = request.getfixturevalue("postgres").new_database()
            environ = {"LOOPLINE_EVENT_STORE": database, "LOOPLINE_READ_MODEL": database}
        built.append(build_system(tmp_path_factory.mktemp(name) / "home", **environ))
    yield built[0], built[1]
    for system in built:
        system.close()


def _moved(message: dict, tenants: dict[str, str], later: timedelta) -> dict:
    """The message for the example's own tenant, each of its times (`at`, a deadline, a Slack ts) `later`."""
    data = dict(message["data"])
    if "deadline" in data:
        data["deadline"] = format_time(parse_time(data["deadline"]) + later)
    if "ts" in data:
        seconds, _, fraction = data["ts"].partition(".")
        data["ts"] = f"{int(seconds) + int(later.total_seconds())}.{fraction}"
    at = format_time(parse_time(message["at"]) + later)
    return {**message, "tenant": tenants[message["tenant"]], "at": at, "data": data}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario=scenarios(), picks=st.lists(st.booleans(), max_size=40), batch=st.integers(1, 5))
def test_any_interleaving_of_commands_and_signals_ends_the_same_way(systems, scenario, picks, batch) -> None:
    example = next(EXAMPLES)
    tenants, later = {tenant: f"{tenant}{example}" for tenant in TENANTS}, example * EXAMPLE_SPAN
    commands, signals = ([_moved(message, tenants, later) for message in stream] for stream in scenario)
    in_event_time = sorted(commands + signals, key=lambda message: (message["at"], message["kind"] == "signal"))
    expected = _outcome(systems[0], in_event_time, len(in_event_time), tenants, later)
    actual = _outcome(systems[1], _interleave(commands, signals, picks), batch, tenants, later)
    for part in ("loops", "inboxes", "outbox"):
        assert actual[part] == expected[part], part
