"""A local server that speaks the Anthropic Messages API, for tests and the bench.

`POST /v1/messages` answers with a `tool_use` block for the tool the request forces (its
`tool_choice`), with token usage, as the real API does. Each test scripts what comes next with
`script(Reply(...), ...)`: a tool input, an error status (429, 500, …), a delay, or a text
answer instead of a tool call. Prompt caching is played as the real API plays it, without its minimum
length: each system block marked `cache_control` ends a prefix (with the model and the tools); the
longest prefix asked for before is read from the cache, the rest up to the last mark is written, and
the usage says so (`cache_read_input_tokens`, `cache_creation_input_tokens`, about 4 characters a token); with the script empty it answers every call with `default_input`
after `delay` seconds (the bench: 0.5). Every request is recorded (`requests`). It runs in
threads of the calling process on 127.0.0.1, so calls are served concurrently.

    with MessagesApi(delay=0.5) as api:          # ANTHROPIC_BASE_URL=api.url
        ...
Standalone: `python -m tests.messages_api [--port P] [--delay S]` serves until interrupted.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from typing import Any

DEFAULT_INPUTS: dict[str, dict[str, Any]] = {
    "draft_message": {
        "subject": "Checking in", "body": "Hi there,\n\nHow have you been? We would love to see you again.\n\nThe Team",
        "confidence": 0.9, "reasoning": "A friendly first touch fits the cadence's tone.",
    },
    "evaluate_reply": {"decision": "wait", "wait_days": 3, "confidence": 0.8,
                       "reasoning": "The contact has not committed yet; following up later."},
}
"""What the server answers for a forced tool when no reply is scripted."""


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a tool input (None: the default for the forced tool), an error status, a
    delay before answering, or `text` (a text block and no tool call)."""

    tool_input: dict[str, Any] | None = None
    status: int = 200
    delay: float = 0.0
    text: str | None = None
    retry_after_ms: int | None = None
    """With an error status: the `retry-after-ms` header the SDK honours instead of its own backoff."""
    input_tokens: int = 321
    output_tokens: int = 54
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    """For a request that forces no tool (tool_choice auto, `script_turns`): the tool calls the model makes, by name
    and input."""


@dataclass
class MessagesApi:
    delay: float = 0.0
    default_inputs: dict[str, dict[str, Any]] = field(default_factory=lambda: dict(DEFAULT_INPUTS))
    port: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)
    """Every call received: path, headers (lower-cased names) and the JSON body."""

    def __post_init__(self) -> None:
        self._script: deque[Reply] = deque()
        self._turns: deque[Reply] = deque()
        self._cached: set[str] = set()
        self._lock = threading.Lock()
        self._ids = count(1)
        self._in_flight = 0
        self.max_in_flight = 0
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: the SDK reuses its connections

            def do_POST(self) -> None:  # noqa: N802 - http.server's hook name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    status, headers, answer = api._answer(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                except BrokenPipeError:
                    return
                payload = json.dumps(answer).encode()
                try:
                    self.send_response(status)
                    for name, value in {"Content-Type": "application/json", **headers}.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting (a timeout test)
                    pass

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, name="messages-api", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def script(self, *replies: Reply) -> None:
        """Queues answers for the next calls, in order (retries included: each attempt takes one)."""
        with self._lock:
            self._script.extend(replies)

    def script_turns(self, *replies: Reply) -> None:
        """Queues answers for the next calls that force no tool (a synthesis turn), apart from the forced ones."""
        with self._lock:
            self._turns.extend(replies)

    def forced_tools(self) -> list[str | None]:
        """The tool each recorded request forced (`tool_choice.name`); the turns that force none (synthesis) are
        `turns`."""
        return [(request["json"].get("tool_choice") or {}).get("name") for request in self.requests
                if (request["json"].get("tool_choice") or {}).get("type") != "auto"]

    def turns(self) -> list[dict[str, Any]]:
        """The recorded requests that force no tool (tool_choice auto: a synthesis turn)."""
        return [request for request in self.requests if (request["json"].get("tool_choice") or {}).get("type") == "auto"]

    def _answer(self, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], dict[str, Any]]:
        request = json.loads(body or b"{}")
        with self._lock:
            self.requests.append({"path": path, "headers": headers, "json": request})
            queue = self._script if (request.get("tool_choice") or {}).get("type") != "auto" else self._turns
            reply = queue.popleft() if queue else Reply(delay=self.delay)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            time.sleep(reply.delay)
        finally:
            with self._lock:
                self._in_flight -= 1
        if path != "/v1/messages":
            return 404, {}, _error("not_found_error", f"no route {path}")
        if reply.status != 200:
            kind = "rate_limit_error" if reply.status == 429 else "api_error"
            extra = {"retry-after-ms": str(reply.retry_after_ms)} if reply.retry_after_ms is not None else {}
            return reply.status, extra, _error(kind, f"scripted {reply.status}")
        tool = (request.get("tool_choice") or {}).get("name")
        if reply.calls:
            content = [{"type": "tool_use", "id": f"toolu_{next(self._ids):08d}", "name": name, "input": tool_input}
                       for name, tool_input in reply.calls]
            stop = "tool_use"
        elif reply.text is not None or not tool:
            content = [{"type": "text", "text": reply.text or "I would rather not use a tool."}]
            stop = "end_turn"
        else:
            tool_input = reply.tool_input if reply.tool_input is not None else self.default_inputs[tool]
            content = [{"type": "tool_use", "id": f"toolu_{next(self._ids):08d}", "name": tool, "input": tool_input}]
            stop = "tool_use"
        return 200, {}, {
            "id": f"msg_{next(self._ids):08d}", "type": "message", "role": "assistant", "model": request.get("model"),
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens,
                      **self._cache_usage(request)},
        }

    def _cache_usage(self, request: dict[str, Any]) -> dict[str, int]:
        system = request.get("system")
        if not isinstance(system, list):
            return {}
        prefix, marks = json.dumps([request.get("model"), request.get("tools")], sort_keys=True), []
        for block in system:
            prefix += block["text"]
            if "cache_control" in block:
                marks.append(prefix)
        if not marks:
            return {}
        with self._lock:
            hit = next((mark for mark in reversed(marks) if mark in self._cached), "")
            self._cached.update(marks)
        read = len(hit) // 4
        return {"cache_read_input_tokens": read, "cache_creation_input_tokens": len(marks[-1]) // 4 - read}

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> MessagesApi:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before each answer")
    options = parser.parse_args()
    api = MessagesApi(delay=options.delay, port=options.port)
    print(api.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        api.stop()


if __name__ == "__main__":
    main()
