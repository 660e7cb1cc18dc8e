"""Reads one message's bytes into a JSON document within the limits of `processors/limits.py`, or says why not.

Every check runs before the work it protects: the size before decoding, the nesting before the
parser recurses, an integer's digits before `int()`; NaN, Infinity and repeated keys are refused
rather than turned into something else, and every string is checked for text a terminal or a
database would mangle (control characters, lone surrogates).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from loopline.processors import limits
from loopline.processors.limits import FORBIDDEN, shown


class UnreadableInput(ValueError):
    """The bytes are not a JSON document Loopline accepts; the text says what was wrong."""


# Control characters (C0 but tab and newline, DEL, C1, so also ANSI's ESC) and lone surrogates,
# which `\ud800` escapes produce and which no store or encoder accepts.
# JSON escapes that can spell such a character inside a string (`\\t` and `\\n` are allowed anyway).
_CONTROL_ESCAPE = re.compile(r"\\[bfru]")


def read_document(raw: bytes | str) -> Any:
    """The JSON value the bytes hold, within the limits."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")  # a lone surrogate then fails decoding below, as in bytes
    if not isinstance(raw, bytes | bytearray):
        raise UnreadableInput("empty: no bytes")
    if len(raw) > limits.MAX_LINE_BYTES:
        raise UnreadableInput(f"too long: {len(raw)} bytes; a message is at most {limits.MAX_LINE_BYTES} bytes")
    try:
        text = bytes(raw).decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnreadableInput(f"not valid UTF-8: byte {error.start} ({raw[error.start]:#04x}) {error.reason}") from None
    _check_nesting(text)
    try:
        document = _DECODER.decode(text)
    except json.JSONDecodeError as error:
        raise UnreadableInput(f"not valid JSON: {error}") from None
    if len(text) > limits.MAX_TEXT_CHARS or FORBIDDEN.search(text) or _CONTROL_ESCAPE.search(text):
        _check_strings(document, "")  # only then can a string be too long or hold what it must not
    return document


def _check_nesting(text: str) -> None:
    """Refuses nesting deeper than MAX_DEPTH without recursing; only text with that many brackets is scanned."""
    if text.count("[") + text.count("{") <= limits.MAX_DEPTH:
        return
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limits.MAX_DEPTH:
                raise UnreadableInput(f"nested too deeply: more than {limits.MAX_DEPTH} levels of objects and arrays")
        elif char in "]}":
            depth -= 1


def _integer(literal: str) -> int:
    if len(literal.lstrip("-")) > limits.MAX_INT_DIGITS:
        raise UnreadableInput(f"number too large: an integer has at most {limits.MAX_INT_DIGITS} digits")
    return int(literal)


def _float(literal: str) -> float:
    value = float(literal) if len(literal) <= limits.MAX_FLOAT_CHARS else math.inf
    if not math.isfinite(value):
        raise UnreadableInput(f"number out of range: {literal[:40]}{'…' if len(literal) > 40 else ''}")
    return value


def _constant(name: str) -> float:
    raise UnreadableInput(f"{name} is not a number JSON allows; send a number or leave the field out")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    for key, _ in pairs:
        if len(key) > limits.MAX_KEY_CHARS:
            raise UnreadableInput(f"key {shown(key)}: a key is at most {limits.MAX_KEY_CHARS} characters")
    document = dict(pairs)
    if len(document) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise UnreadableInput(f"repeated key {shown(repeated)}: each key may appear once in an object")
    return document


def _check_strings(value: Any, path: str) -> None:
    if isinstance(value, str):
        _check_text(value, path)
    elif isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else key
            _check_text(key, f"{path} key" if path else "key")
            _check_strings(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_strings(item, f"{path}[{index}]")


def _check_text(text: str, path: str) -> None:
    field = path.rsplit(".", 1)[-1].split("[", 1)[0]
    limit = limits.MAX_LONG_TEXT_CHARS if field in limits.LONG_TEXT_FIELDS else limits.MAX_TEXT_CHARS
    path = path or "message"
    if len(text) > limit:
        raise UnreadableInput(f"{shown(path)}: {len(text)} characters; at most {limit}")
    bad = FORBIDDEN.search(text)
    if bad:
        code = ord(bad.group())
        why = ("a lone surrogate, which is not text" if 0xD800 <= code <= 0xDFFF
               else "a control character; the only ones text may hold are tab and newline")
        raise UnreadableInput(f"{shown(path)}: contains U+{code:04X}, {why}")


_DECODER = json.JSONDecoder(parse_int=_integer, parse_float=_float, parse_constant=_constant, object_pairs_hook=_object)
