"""`loopline serve`: the dashboard and the HTTP edge, for either deployment (any number of serve processes at
scale: they read the read models and publish to the log)."""

from __future__ import annotations

from typing import Annotated

import typer

from loopline.cli.context import flag, opened
from loopline.cli.output import err


def serve(
    host: Annotated[str, typer.Option("--host", help="The address to listen on (0.0.0.0: every interface).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="The port to listen on.", min=1, max=65535)] = 8080,
    insecure_cookies: Annotated[bool, flag(
        "--insecure-cookies", "Send the session cookie over plain HTTP too (a trial on another host without TLS).",
    )] = False,
    forwarded_allow_ips: Annotated[str | None, typer.Option(
        "--forwarded-allow-ips", envvar="FORWARDED_ALLOW_IPS",
        help="Behind a proxy: the proxies' addresses (comma-separated, or * for any) whose X-Forwarded-For names the "
             "client; limits count per client, so without it every request seems to come from the proxy. Default: "
             "127.0.0.1,::1.",
    )] = None,
) -> None:
    """Serve the dashboard, the ingestion API (`/v1/messages`, webhooks) and `/metrics`, `/healthz`, `/readyz` until
    stopped. Log in with a key from `loopline keys create`. A request never delivers or asks the model: embedded,
    what it publishes is applied at once, and `loopline run` beside it delivers and decides (at scale the workers do
    it all). Logs one JSON line per request on standard error."""
    import uvicorn

    from loopline.web.app import ServeOptions, create_app

    from loopline.runtime.worker_log import configure, worker_id

    options = ServeOptions.load(secure_cookies=not insecure_cookies)
    with opened() as system:
        app = create_app(system, options)
        rest = ("the workers (`loopline run`) apply, deliver and decide what it publishes" if system.is_scale else
                "what it publishes is applied at once; run `loopline run` beside it to deliver and decide")
        err.print(f"serving the dashboard on http://{host}:{port}/ (Ctrl-C stops): {rest}", highlight=False,
                  soft_wrap=True)
        configure(worker_id())  # one JSON line a request (web/request_log.py), uvicorn's own messages as JSON too
        uvicorn.run(app, host=host, port=port, log_config=None, log_level="info", access_log=False,
                    proxy_headers=True, forwarded_allow_ips=forwarded_allow_ips)
