"""A labelled JSONL corpus for the input edge: valid messages of every type mixed with every kind of
bad line the edge must reject, each line knowing the outcome it must get.

Valid lines never depend on the domain refusing or accepting them by chance: each tenant creates its
tasks before acting on them (commands of one tenant keep their order on every deployment), signals
match no loop, so what a valid line leaves behind (a task, a loop, a receipt) can be counted.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loopline.processors import limits

AT = "2026-03-13T10:00:00Z"
LATER = "2026-03-20T10:00:00Z"
EARLIER = "2026-03-12T10:00:00Z"

ACCEPTED, DUPLICATE, REJECTED, BLANK = "accepted", "duplicate", "rejected", "blank"


@dataclass
class Corpus:
    lines: list[bytes] = field(default_factory=list)
    labels: list[tuple[str, str]] = field(default_factory=list)
    """(outcome, category) of each line, in order."""
    tasks: set[tuple[str, str]] = field(default_factory=set)
    """(tenant, task_id) of every task the valid lines create."""
    loops: int = 0
    """Loops the valid lines register (explicitly or implied by an action)."""

    def add(self, line: bytes, outcome: str, category: str) -> None:
        self.lines.append(line)
        self.labels.append((outcome, category))

    def numbers(self, outcome: str) -> set[int]:
        """The 1-based line numbers labelled with this outcome."""
        return {n for n, (label, _) in enumerate(self.labels, start=1) if label == outcome}

    def data(self) -> bytes:
        return b"\n".join(self.lines) + b"\n"


def _encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _command(ref: str, type_: str, tenant: str, at: str = AT, **data: Any) -> dict[str, Any]:
    return {"kind": "command", "id": ref, "type": type_, "tenant": tenant, "at": at, "data": data}


def _signal(ref: str, type_: str, tenant: str, at: str = AT, **data: Any) -> dict[str, Any]:
    return {"kind": "signal", "id": ref, "type": type_, "tenant": tenant, "at": at, "data": data}


# Titles that are valid, but that str.splitlines or a markup renderer would break.
TRICKY_TITLES = [
    "plain title", "line\u2028separator", "paragraph\u2029separator", "tab\tand\nnewline",
    "[/x] closing markup", "[bold red]markup[/bold red]", "emoji \U0001f600 and é", "a \\r that is text",
]


def _valid_group(corpus: Corpus, rng: random.Random, tenant: str, n: int) -> None:
    """One task's worth of valid lines for a tenant, in an order the domain accepts."""
    task = f"task-{n}"
    title = rng.choice(TRICKY_TITLES)
    lines = [
        _command(f"c{n}", "task.create", tenant, task_id=task, title=title, confidence=1, expires_in_days=30,
                 context={"nested": {"depth": [1, [2, [3]]]}, "big": 10**17}),
        _command(f"a{n}", "action.record", tenant, task_id=task, action="send_email", to=f"person{n}@example.com",
                 thread_id=f"th-{n}", subject=title),
        _command(f"l{n}", "loop.register", tenant, loop_id=f"loop-{n}", task_id=task, channel="webhook",
                 watch={"source": "docusign", "trigger_name": "signed", "match_fields": {"envelope": f"e{n}"}},
                 deadline=LATER, if_unresolved="notify_user"),
        _command(f"u{n}", "task.update", tenant, task_id=task, notes=f"note {title}"),
        {**_command(f"w{n}", "task.wake", tenant), "data": {"task_id": task, "wake_id": f"wake-{n}", "at": LATER}},
        _signal(f"s{n}", "email.received", tenant, sender=f"stranger{n}@example.org", subject=title, body="hi"),
        _signal(f"k{n}", "slack.message", tenant, slack_user_id=f"U{n}", channel_id="C1", ts="1710000000.000100"),
        _signal(f"g{n}", "github.event", tenant, event_type="issue_closed", repo="acme/api", resource_id=f"{n}"),
        _signal(f"v{n}", "calendar.event", tenant, event_type="event_started", event_id=f"ev-{n}"),
        _signal(f"n{n}", "linear.event", tenant, event_type="issue_status_changed", issue_id=f"LIN-{n}", status="Done"),
        _signal(f"h{n}", "webhook.received", tenant, source="stripe", trigger_name="paid", payload={"amount": 5}),
        _signal(f"o{n}", "outcome.observed", tenant, contact=f"member{n}@example.com", outcome="checkin", value=1.5),
        _signal(f"z{n}", "user.seen", tenant, at="2026-03-13T11:00:00+01:00"),
    ]
    corpus.tasks.add((tenant, task))
    corpus.loops += 2
    for message in lines:
        line = _encode(message)
        corpus.add(line + b"\r" if rng.random() < 0.1 else line, ACCEPTED, f"valid {message['type']}")


def _base(tenant: str, ref: str) -> dict[str, Any]:
    return _command(ref, "task.create", tenant, task_id=f"bad-{ref}", title="bad")


def _with(path: str, value: Any) -> Callable[[str, str], bytes]:
    """A valid task.create with one field (a dotted path) set to a value."""
    def make(tenant: str, ref: str) -> bytes:
        message = _base(tenant, ref)
        *parents, leaf = path.split(".")
        target = message
        for parent in parents:
            target = target[parent]
        target[leaf] = value
        return _encode(message)
    return make


def _other(type_: str, kind: str = "command", **data: Any) -> Callable[[str, str], bytes]:
    def make(tenant: str, ref: str) -> bytes:
        return _encode({"kind": kind, "id": ref, "type": type_, "tenant": tenant, "at": AT, "data": data})
    return make


def _raw(template: str) -> Callable[[str, str], bytes]:
    """A line written by hand (`{tenant}` and `{ref}` filled in), for what json.dumps cannot produce."""
    return lambda tenant, ref: template.replace("{tenant}", tenant).replace("{ref}", ref).encode("utf-8")


def _bytes_in_title(raw: bytes) -> Callable[[str, str], bytes]:
    return lambda tenant, ref: _encode(_base(tenant, ref)).replace(b'"title": "bad"', b'"title": "' + raw + b'"')


def _deep(levels: int) -> Callable[[str, str], bytes]:
    return lambda tenant, ref: _encode(_base(tenant, ref))[:-2] + b', "context": {"x": ' + b"[" * levels + b"]" * levels + b"}}}"


_ENVELOPE = '"kind": "command", "type": "task.create", "tenant": "{tenant}", "at": "2026-03-13T10:00:00Z"'
WEBHOOK_WATCH = {"source": "s", "trigger_name": "t"}

BAD: dict[str, Callable[[str, str], bytes]] = {
    "not json": _raw("{not json {ref}"),
    "truncated json": _raw('{"kind": "command", "id": "{ref}", '),
    "top-level array": _raw('["{ref}"]'),
    "top-level string": _raw('"{ref}"'),
    "data not an object": _with("data", "task"),
    "invalid utf-8": _bytes_in_title(b"\xff\xfe"),
    "overlong utf-8": _bytes_in_title(b"\xc0\xaf"),
    "utf-8 bom": lambda tenant, ref: b"\xef\xbb\xbf" + _encode(_base(tenant, ref)),
    "lone surrogate escape": _bytes_in_title(b"\\ud800 alone"),
    "raw carriage return between values": lambda tenant, ref: _encode(_base(tenant, ref)) + b"\r{}",
    "nesting 10,000 deep": _deep(10_000),
    "nesting just over the limit": _deep(limits.MAX_DEPTH),
    "integer over 4,300 digits": _raw('{' + _ENVELOPE + ', "id": "{ref}", "data": {"task_id": "x", "title": "t", "expires_in_days": ' + "9" * 4301 + "}}"),
    "integer over 18 digits": _with("data.expires_in_days", 10**19),
    "NaN": _raw('{' + _ENVELOPE + ', "id": "{ref}", "data": {"task_id": "x", "title": "t", "confidence": NaN}}'),
    "Infinity": _raw('{' + _ENVELOPE + ', "id": "{ref}", "data": {"task_id": "x", "title": "t", "confidence": Infinity}}'),
    "-Infinity": _raw('{' + _ENVELOPE + ', "id": "{ref}", "data": {"task_id": "x", "title": "t", "confidence": -Infinity}}'),
    "float overflow": _raw('{' + _ENVELOPE + ', "id": "{ref}", "data": {"task_id": "x", "title": "t", "confidence": 1e999}}'),
    "duplicate envelope key": _raw('{' + _ENVELOPE + ', "id": "{ref}", "id": "other", "data": {"task_id": "x", "title": "t"}}'),
    "duplicate data key": _raw('{' + _ENVELOPE + ', "id": "{ref}", "data": {"task_id": "x", "title": "t", "title": "u"}}'),
    "at year 1 with offset": _with("at", "0001-01-01T00:30:00+01:00"),
    "at year 9999": _with("at", "9999-12-31T23:59:59-01:00"),
    "at before 2000": _with("at", "1999-12-31T23:59:59Z"),
    "at as epoch integer": _with("at", 1_773_396_000),
    "at without time zone": _with("at", "2026-03-13T10:00:00"),
    "at not a time": _with("at", "tomorrow"),
    "at on a day that does not exist": _with("at", "2026-02-30T10:00:00Z"),
    "confidence true": _with("data.confidence", True),
    "confidence as string": _with("data.confidence", "0.5"),
    "confidence above 1": _with("data.confidence", 2),
    "expires_in_days as string": _with("data.expires_in_days", "3"),
    "expires_in_days 3,000,000": _with("data.expires_in_days", 3_000_000),
    "expires_in_days 0": _with("data.expires_in_days", 0),
    "whitespace-only id": _with("id", "   "),
    "whitespace-only tenant": _with("tenant", "\t "),
    "empty task_id": _with("data.task_id", ""),
    "tenant of 10,000 characters": _with("tenant", "t" * 10_000),
    "id over the id limit": _with("id", "i" * (limits.MAX_ID_CHARS + 1)),
    "id with a unit separator": _with("id", "x\x1fy"),
    "tenant with a space": _with("tenant", "carol x"),
    "task_id with markup": _with("data.task_id", "[/x]"),
    "title of 20,000 characters": _with("data.title", "T" * 20_000),
    "line over the size limit": _with("data.description", "D" * (limits.MAX_LINE_BYTES + 1)),
    "NUL in title": _with("data.title", "a\x00b"),
    "ANSI escape in title": _with("data.title", "\x1b[31mred\x1b[0m"),
    "DEL in title": _with("data.title", "a\x7fb"),
    "C1 control in title": _with("data.title", "a\x9bb"),
    "next line (U+0085) in title": _with("data.title", "a\x85b"),
    "whitespace-only title": _with("data.title", "   "),
    "contact over 200 characters": _with("data.contact", "c" * 201),
    "unknown kind": _with("kind", "event"),
    "unknown type": _with("type", "task.explode"),
    "extra envelope field": _with("extra", 1),
    "missing title": _other("task.create", task_id="x"),
    "fifty unknown fields": _other("task.create", task_id="x", title="t", **{f"field{i}": i for i in range(50)}),
    "expect as string": _other("action.record", task_id="x", action="note", expect="false"),
    "priority as number": _with("data.priority", 3),
    "watch value a number": _other("loop.register", loop_id="l", task_id="x", channel="email", watch={"sender": 5},
                                   deadline=LATER, if_unresolved="notify_user"),
    "watch value a list": _other("loop.register", loop_id="l", task_id="x", channel="email", watch={"sender": ["a"]},
                                 deadline=LATER, if_unresolved="notify_user"),
    "watch empty": _other("loop.register", loop_id="l", task_id="x", channel="email", watch={},
                          deadline=LATER, if_unresolved="notify_user"),
    "match_fields a list": _other("loop.register", loop_id="l", task_id="x", channel="webhook",
                                  watch={**WEBHOOK_WATCH, "match_fields": ["a"]}, deadline=LATER, if_unresolved="notify_user"),
    "action match_fields a list": _other("action.record", task_id="x", action="send_contract", match_fields=["a"]),
    "action match_fields value an object": _other("action.record", task_id="x", action="create_todo",
                                                  match_fields={"a": {"b": "c"}}),
    "loop deadline before at": _other("loop.register", loop_id="l", task_id="x", channel="email", watch={"sender": "a@b.c"},
                                      deadline=EARLIER, if_unresolved="notify_user"),
    "action deadline before at": _other("action.record", task_id="x", action="send_email", to="a@b.c", deadline=EARLIER),
    "run scheduled before at": _other("run.schedule", at=EARLIER, reason="brief"),
    "wake before at": _other("task.wake", task_id="x", at=EARLIER),
    "signal field a number": _other("slack.message", kind="signal", slack_user_id="U1", channel_id="D1", ts=17),
    "signal sender blank": _other("email.received", kind="signal", sender=" "),
}
"""Each kind of bad line, built for a tenant and a message id."""

HEAVY = {"nesting 10,000 deep", "tenant of 10,000 characters", "integer over 4,300 digits", "title of 20,000 characters",
         "line over the size limit"}


def build_corpus(size: int = 10_000, seed: int = 9) -> Corpus:
    """About `size` lines: a third valid (13 message types), the rest every bad kind in turn, some repeats
    of valid lines and some blank lines, shuffled in blocks so each tenant's valid lines keep their order."""
    rng = random.Random(seed)
    corpus = Corpus()
    valid_groups = size // 3 // 13
    bad_each = (size - valid_groups * 13) // len(BAD)
    blocks: list[list[tuple[bytes, str, str]]] = []
    bad_kinds = [kind for kind in BAD for _ in range(2 if kind in HEAVY else bad_each)]
    rng.shuffle(bad_kinds)
    for index, kind in enumerate(bad_kinds):
        blocks.append([(BAD[kind](f"tenant-{index % 7}", f"bad{index}"), REJECTED, kind)])
    for n in range(valid_groups):
        group = Corpus()
        _valid_group(group, rng, f"tenant-{n % 50}", n)
        corpus.tasks |= group.tasks
        corpus.loops += group.loops
        blocks.append([(line, outcome, category) for line, (outcome, category) in zip(group.lines, group.labels)])
    rng.shuffle(blocks)
    for line, outcome, category in (entry for block in blocks for entry in block):
        corpus.add(line, outcome, category)
        if outcome == ACCEPTED and rng.random() < 0.03:
            corpus.add(line, DUPLICATE, "repeated id")
        elif rng.random() < 0.005:
            corpus.add(b"   " if rng.random() < 0.5 else b"", BLANK, "blank")
    return corpus
