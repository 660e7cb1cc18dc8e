"""Ids and keys that used to be joined with a separator no longer let one tenant reach another's.

The messages are built past the input edge, which may refuse control characters in ids: the
store must keep two tenants apart whatever the edge lets through.
"""

from __future__ import annotations

from typing import Any

from loopline.domain.timeutil import parse_time
from loopline.processors.handlers.command_routes import command_from_data
from loopline.processors.messages import Message
from loopline.processors.handlers.rejects import record_rejected_inputs
from loopline.runtime.system import System
from tests.conftest import command, signal
from tests.integration.helpers import loop_row, recent, task_row

SEP = "\x1f"
AT = "2026-03-13T10:00:00Z"


def unchecked(message: dict[str, Any]) -> Message:
    """The message as the processors take it, without the input edge's checks."""
    return Message(
        kind=message["kind"], ref=message["id"], type=message["type"], tenant=message["tenant"],
        at=parse_time(message["at"]), data=message["data"],
        command=command_from_data(message["type"], message["data"]) if message["kind"] == "command" else None,
    )


def publish_unchecked(system: System, *messages: dict[str, Any]) -> tuple[int, int]:
    """Appends and drains as `loopline publish` does; returns (appended, duplicates)."""
    report = system.log.append([unchecked(m) for m in messages], "test")
    drained = system.drain()
    assert drained.rejected == [], drained.rejected
    return report.appended, report.duplicates


def test_a_tenant_whose_name_holds_the_separator_gets_its_own_task(system: System) -> None:
    publish_unchecked(
        system,
        command("m1", "task.create", AT, tenant="carol", task_id=f"x{SEP}y", title="Carol's own task"),
        command("m2", "task.create", AT, tenant=f"carol{SEP}x", task_id="y", title="Another tenant's task"),
        command("m3", "task.complete", AT, tenant=f"carol{SEP}x", task_id="y", summary="done elsewhere"),
    )
    carols = task_row(system, f"x{SEP}y", tenant="carol")
    assert carols["title"] == "Carol's own task" and carols["status"] != "completed"
    assert task_row(system, "y", tenant=f"carol{SEP}x")["status"] == "completed"


def test_one_tenants_message_is_not_dropped_as_a_duplicate_of_anothers(system: System) -> None:
    appended, duplicates = publish_unchecked(
        system,
        command(f"x{SEP}m1", "task.create", AT, tenant="carol", task_id="t1", title="Carol's task"),
        command("m1", "task.create", AT, tenant=f"carol{SEP}x", task_id="t1", title="Another tenant's task"),
    )
    assert (appended, duplicates) == (2, 0)
    assert task_row(system, "t1", tenant="carol")["title"] == "Carol's task"
    assert task_row(system, "t1", tenant=f"carol{SEP}x")["title"] == "Another tenant's task"


def test_a_signal_of_another_tenant_never_reaches_a_loop_through_its_match_index(system: System) -> None:
    publish_unchecked(
        system,
        command("m1", "task.create", AT, tenant="carol", task_id="t1", title="Wait for a reply"),
        command("m2", "loop.register", AT, tenant="carol", task_id="t1", loop_id="reply", channel="email",
                watch={"sender": f"email{SEP}x"}, deadline="2026-03-20T10:00:00Z", if_unresolved="notify_user"),
        signal("s1", "email.received", "2026-03-14T10:00:00Z", tenant=f"carol{SEP}email", sender="x"),
    )
    assert loop_row(system, "reply", tenant="carol")["resolved"] is False


def test_bad_input_at_two_places_that_used_to_join_alike_is_kept_twice(system: System) -> None:
    now = parse_time(AT)
    record_rejected_inputs(system.app, [("line 2", b"{", "bad")], source=f"in{SEP}line 1", now=now)
    record_rejected_inputs(system.app, [(f"line 1{SEP}line 2", b"{", "bad")], source="in", now=now)
    record_rejected_inputs(system.app, [(f"line 1{SEP}line 2", b"{", "bad")], source="in", now=now)
    system.drain()
    assert len([row for row in recent(system) if row["summary"].startswith("input rejected")]) == 2
