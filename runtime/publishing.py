"""Publishing lines of JSON: the one path `loopline publish` and the HTTP edge (`POST /v1/messages`) share, so both
validate, keep rejects and report per line alike."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from uuid import uuid4
from typing import Any

from loopline.adapters.clock import SystemClock
from loopline.adapters.embedded_log import AppendReport
from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.processors.handlers.rejects import record_rejected_inputs
from loopline.domain.masking import masked_line
from loopline.domain.timeutil import format_time
from loopline.processors.limits import MAX_LINE_BYTES
from loopline.processors.messages import Message
from loopline.runtime.system import DrainReport, System

UTF_BOMS = {b"\xff\xfe\x00\x00": "UTF-32", b"\x00\x00\xfe\xff": "UTF-32", b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16"}


class UnreadableText(ValueError):
    """The input as a whole is no UTF-8 text (every line would be rejected for the same reason); `encoding` is what
    its byte-order mark says it is, for the edge to say how to convert it."""

    def __init__(self, encoding: str) -> None:
        super().__init__(f"the input is {encoding} text and Loopline reads UTF-8")
        self.encoding = encoding


@dataclass
class Parsed:
    valid: list[Message]
    valid_lines: list[int]
    invalid: list[tuple[int, bytes, str]]  # (line number, the line, why)
    valid_raw: list[bytes] = field(default_factory=list)


@dataclass
class Published:
    """What a publish did: the lines read, what the log took, and what processing them now did (embedded)."""

    parsed: Parsed
    appended: AppendReport
    report: DrainReport
    scale: bool

    def rejected(self) -> list[dict[str, Any]]:
        """Every line refused: unreadable or invalid ones (line and reason), then those the domain refused."""
        line_of = self._line_of()
        return [{"line": number, "reason": reason} for number, _, reason in self.parsed.invalid] + [
            {"line": line_of.get((o.step.message.tenant, o.step.message.ref)), "id": o.step.message.ref,
             "tenant": o.step.message.tenant, "type": o.step.message.type, "reason": o.detail}
            for o in self.report.rejected
        ]

    def warnings(self) -> list[dict[str, Any]]:
        valid, lines = self.parsed.valid, self.parsed.valid_lines
        line_of = self._line_of()
        return [
            {"line": lines[i], "id": valid[i].ref, "tenant": valid[i].tenant,
             "warning": "its id was received before with different content; the first one stands and this one was ignored"}
            for i in self.appended.changed_repeats
        ] + [
            {"line": line_of.get((o.step.message.tenant, o.step.message.ref)), "id": o.step.message.ref,
             "tenant": o.step.message.tenant, "warning": o.warning}
            for o in self.report.outcomes if o.warning
        ]

    def own_outcomes(self) -> list[Any]:
        """The outcomes of this publish's own new lines (a drain may also process an earlier publish's)."""
        repeats = set(self.appended.repeats)
        new = {(message.tenant, message.ref) for i, message in enumerate(self.parsed.valid) if i not in repeats}
        return [o for o in self.report.outcomes if (o.step.message.tenant, o.step.message.ref) in new]

    def _line_of(self) -> dict[tuple[str, str], int]:
        line_of: dict[tuple[str, str], int] = {}
        for message, number in zip(self.parsed.valid, self.parsed.valid_lines):
            line_of.setdefault((message.tenant, message.ref), number)  # the first of repeated ids is the one applied
        return line_of


def command_line(tenant: str, command_type: str, data: dict[str, Any], source: str) -> dict[str, Any]:
    """A command a person gives through a sub-command or a dashboard form, stamped now, its id `<source>-<random>`."""
    return {"kind": "command", "id": f"{source}-{uuid4().hex[:12]}", "type": command_type, "tenant": tenant,
            "at": format_time(SystemClock().now()), "data": data}


def parse_lines(data: bytes) -> Parsed:
    """Each non-blank line validated by the edge's rules; raises UnreadableText for UTF-16 or UTF-32 input."""
    data = readable_text(data)
    parsed = Parsed([], [], [])
    for number, line in enumerate(split_lines(data), start=1):
        if not line.strip():
            continue
        try:
            parsed.valid.append(parse_message(line))
            parsed.valid_lines.append(number)
            parsed.valid_raw.append(line)
        except InvalidMessage as error:
            parsed.invalid.append((number, line, str(error)))
    return parsed


Append = Callable[[list[Message], str], AppendReport]


def publish(
    system: System, parsed: Parsed, source: str, progress: Callable[[int], None] | None = None,
    started: Callable[[int], None] | None = None, append: Append | None = None, serving: bool = False,
) -> Published:
    """Keeps the invalid lines as rejects, appends the valid ones to the log (through `append` when given: serve's
    faststream producer at scale), and processes them now where this process may (embedded); at scale the workers
    process them. `serving` (serve's requests) never delivers or asks the model inside a request: embedded the
    lines are applied and projected only, and `loopline run` delivers and decides; at scale nothing is drained, so
    serve never takes the leader lock."""
    with system.leader.writing():
        if parsed.invalid:  # kept as they came, up to the line limit, with their reasons
            record_rejected_inputs(
                system.app, [(f"line {n}", masked_line(line)[:MAX_LINE_BYTES], reason)  # masked before it is cut
                             for n, line, reason in parsed.invalid],
                source=source, now=SystemClock().now(),
            )
        appended = (append or system.log.append)(parsed.valid, source)
        if started:
            started(appended.appended)
        if not serving:
            report = system.drain(progress=progress)
        elif system.is_scale:
            report = DrainReport()
        else:
            report = system.drain(progress=progress, deliver=False, decide=False)
    return Published(parsed, appended, report, system.is_scale)


def readable_text(data: bytes) -> bytes:
    """The input without a UTF-8 byte-order mark (editors add one); input marked as UTF-16 or UTF-32 is refused
    as a whole, since every line of it would be rejected for the same reason."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:]
    for mark, encoding in UTF_BOMS.items():
        if data.startswith(mark):
            raise UnreadableText(encoding)
    return data


def format_hint(invalid: list[tuple[int, bytes, str]]) -> str | None:
    """One hint for a pretty-printed JSON file, whose lines are rejected one by one as fragments."""
    if any(line.strip() in (b"{", b"[") for _, line, _ in invalid):
        return ("the input looks like pretty-printed JSON; publish takes one JSON object per line (JSONL), "
                "e.g. from `jq -c . FILE`")
    return None


def split_lines(data: bytes) -> list[bytes]:
    """Lines end at `\\n` only (U+2028, U+0085 or a lone `\\r` inside a line are its content); a line's
    trailing `\\r` (CRLF files) is dropped, so line numbers are what an editor shows."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the newline that ends the last line starts no line of its own
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]
