"""The input edge is total: whatever the bytes, `parse_message` returns a message or raises InvalidMessage
with a reason, and what it accepts reads back the same after the log stores it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopline.processors import limits
from loopline.adapters.kafka_log import envelope
from loopline.adapters.messages import InvalidMessage, parse_message
from loopline.runtime.publishing import split_lines
from loopline.processors.messages import Message
from tests.fuzz_corpus import ACCEPTED, BAD, BLANK, DUPLICATE, REJECTED, build_corpus
from tests.unit.test_contracts import AT, EXAMPLES

SIGNALS: dict[str, dict[str, Any]] = {
    "email.received": {"sender": "a@b.c", "thread_id": "th1", "body": "hi"},
    "slack.message": {"slack_user_id": "U1", "channel_id": "D1", "ts": "17.5"},
    "webhook.received": {"source": "s", "trigger_name": "t", "payload": {"a": [1, {"b": None}]}},
    "outcome.observed": {"contact": "m@x.com", "outcome": "checkin", "value": 12.5},
}
VALID = [{"kind": "command", "id": "m1", "type": t, "tenant": "acme", "at": AT, "data": d} for t, d in EXAMPLES.items()] + [
    {"kind": "signal", "id": "s1", "type": t, "tenant": "acme", "at": AT, "data": d} for t, d in SIGNALS.items()
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


def outcome(raw: bytes | str) -> Message | str:
    """The message, or the reason it was rejected; anything else raised fails the test."""
    try:
        return parse_message(raw)
    except InvalidMessage as error:
        assert str(error), "a rejection says why"
        return str(error)


def assert_round_trips(message: Message) -> None:
    """What the Kafka log (and so every worker) reads back is the message that was accepted."""
    assert parse_message(json.dumps(envelope(message)).encode()) == message


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_any_bytes_are_a_message_or_a_reason(raw: bytes) -> None:
    outcome(raw)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(VALID), st.sampled_from(["kind", "id", "type", "tenant", "at", "data"]), json_values)
def test_any_value_in_any_envelope_field_is_a_message_or_a_reason(base: dict, name: str, value: Any) -> None:
    result = outcome(json.dumps({**base, name: value}, allow_nan=True))
    if isinstance(result, Message):
        assert_round_trips(result)


@settings(max_examples=250, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(VALID), st.data())
def test_any_value_in_any_data_field_is_a_message_or_a_reason_and_accepted_ones_round_trip(base: dict, data: st.DataObject) -> None:
    fields = dict(base["data"])
    name = data.draw(st.sampled_from([*fields, "extra", "deadline", "at", "watch", "match_fields"]))
    fields[name] = data.draw(json_values)
    result = outcome(json.dumps({**base, "data": fields}, allow_nan=True, ensure_ascii=data.draw(st.booleans())))
    if isinstance(result, Message):
        assert_round_trips(result)


@pytest.mark.parametrize("base", VALID, ids=lambda m: m["type"])
def test_every_valid_example_is_accepted_and_round_trips(base: dict) -> None:
    result = outcome(json.dumps(base))
    assert isinstance(result, Message), result
    assert_round_trips(result)


@settings(max_examples=200)
@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=20), max_size=8))
def test_lines_split_on_newline_only_whatever_else_they_hold(lines: list[str]) -> None:
    data = b"".join(line.encode("utf-8", "surrogatepass") + b"\n" for line in lines)
    expected = [line.encode("utf-8", "surrogatepass").removesuffix(b"\r") for line in lines]
    assert split_lines(data) == expected


def test_crlf_and_a_missing_final_newline_keep_line_numbers() -> None:
    assert split_lines("a\r\nb\u2028c\r\n\r\nd".encode()) == [b"a", "b\u2028c".encode(), b"", b"d"]
    assert split_lines(b"") == []


@pytest.mark.parametrize("kind", sorted(BAD))
def test_each_kind_of_bad_line_is_rejected_with_a_reason(kind: str) -> None:
    result = outcome(BAD[kind]("acme", "r1"))
    assert isinstance(result, str), f"{kind} was accepted"


def test_the_whole_corpus_gets_the_outcome_each_line_is_labelled_with() -> None:
    corpus = build_corpus()
    lines = split_lines(corpus.data())
    assert len(lines) == len(corpus.labels)
    for number, (line, (label, category)) in enumerate(zip(lines, corpus.labels), start=1):
        if label == BLANK:
            assert not line.strip()
            continue
        result = outcome(line)
        expected = REJECTED if label == REJECTED else ACCEPTED  # a repeat is valid; the log ignores it
        assert (REJECTED if isinstance(result, str) else ACCEPTED) == expected, (number, category, result)
    assert len({category for label, category in corpus.labels if label == REJECTED}) >= 43
    assert corpus.numbers(DUPLICATE)


def test_limits_are_named_in_the_reason() -> None:
    deep = '{"kind": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert outcome(deep) == f"nested too deeply: more than {limits.MAX_DEPTH} levels of objects and arrays"
    assert outcome(b"x" * (limits.MAX_LINE_BYTES + 1)).startswith(f"too long: {limits.MAX_LINE_BYTES + 1} bytes")
    assert outcome(BAD["fifty unknown fields"]("acme", "r1")).endswith("; and 45 more")  # a reason stays readable
    assert outcome(None) == "empty: no bytes"  # type: ignore[arg-type]  # a Kafka tombstone has no value


@pytest.mark.parametrize("field", ["id", "tenant"])
@pytest.mark.parametrize("dots", [".", "..", "..."])
def test_an_id_of_only_dots_is_refused_for_it_would_leave_its_address_segment(field: str, dots: str) -> None:
    reason = outcome(json.dumps({**VALID[0], field: dots}))
    assert isinstance(reason, str) and "not only dots" in reason
    assert isinstance(outcome(json.dumps({**VALID[0], field: "..a"})), Message)
